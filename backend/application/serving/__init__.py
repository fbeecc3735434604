"""The live index: the generation searches and reads are served from (its handle, its stores and note graph,
the leases that keep a rebuild from closing it mid-read), the embedder's health, and whose vault the index is.
Uses the ports and the domain only: every other room reads the index through here."""
