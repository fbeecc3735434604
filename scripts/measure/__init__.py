"""The tools of measurement: how fast, how good and how sturdy the service is, on ../shared/corpora and the
example vault. Each `make` target that measures runs one module of this package (`python -m
scripts.measure...`); the upkeep tools (generated docs, Docker and Node helpers) stay in scripts/.

common.py: what the measurements share (the machine, percentiles, spread, report sections); service.py: the
service in its own process on loopback (also the fault tests' and the CLI tests'); compare_results.py: two
checkouts' answers compared, every ranked list and score. By kind: bench/, embedders/, parsing/, load/,
evaluation/, calibration/.
"""
