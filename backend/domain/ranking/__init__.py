"""How hits are scored and ordered: fusion of the dense and keyword lists, the rules before the cut (dedupe,
threshold, highlights), a hit's calibrated confidence, filters that match nothing, several vaults' lists as
one. Uses index, notes, text."""
