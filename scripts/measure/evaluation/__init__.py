"""Retrieval quality on judged question sets: the dev sets as `make eval` and `make eval-languages` ask them
(dev_sets.py), several vaults in one service (`make eval-vaults`, vaults.py), and a model served over HTTP by
the stand-in server (`make eval STAND_IN=e5`, stand_in.py; stand_in_server.py: real vectors under another
model's name)."""
