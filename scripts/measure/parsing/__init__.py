"""What parsing and chunking cost and where they fail: hostile notes at growing sizes (hostile.py) and every
note of the shared corpora (corpus_report.py)."""
