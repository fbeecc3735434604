"""Speed benchmarks of the service: `make bench`'s suite (suite.py, written to docs/benchmarks.md) and its
parts (indexing, search over HTTP, where a search's time goes, freshness, first starts and growing vaults, a
vault of a real one's shape, the work sent to a remote model, several vaults), and those run on their own:
two checkouts asked in turn, the explain data's cost, the look-inside page in Chromium, the OpenClaw recall
hook.
"""
