"""One search, from question to ranked hits: its mode and warnings, its stages, the ranking rules over the
fused candidates, named notes and pointers, the tags a question means, each hit's confidence and the recall
gate that weighs it, what an agent sees of a hit, and where the search's time went. Uses serving and the
domain."""
