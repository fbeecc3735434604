"""Why a search answered as it did: each hit's factors, both sides' ranked candidates, and "why not this
note?" read off the search's own ranking stages replayed. Uses search, serving and the domain."""
