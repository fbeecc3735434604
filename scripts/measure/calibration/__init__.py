"""Fitting the numbers the search ships with on the dev sets: the hits' confidence and the recall floor
(recall.py), the recall gate's generic weights (gate.py), the fusion's variants (fusion_grid.py) and RRF's
parameters (rrf_grid.py)."""
