"""The in-process embedders' speed: the variants of the English model against today's path (`make
bench-embed`, variants.py) and the two models side by side (models.py, written to docs/languages.md)."""
