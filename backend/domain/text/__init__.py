"""Text in any language: scripts and stemmers, keyword terms and the BM25F-style sparse vectors made of them,
the languages a vault is written in, tags as words, secrets to redact and sensitive categories. Uses only the
domain's own values."""
