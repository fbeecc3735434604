"""The language tools keyword search is handed: which language a text is in (`detection`, py3langid) and
where a compound word parts (`compounds`, pyphen)."""
