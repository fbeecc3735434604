"""The service under load: concurrent searches while notes change on disk (`make loadtest`, loadtest.py,
written to docs/loadtest.md) and a flood of huge filter lists (flood.py, docs/robustness.md)."""
