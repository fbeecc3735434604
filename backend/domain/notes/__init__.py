"""Notes as Obsidian keeps them: which files are notes, safe vault paths, where a link leads, chunks and their
lines, what is not text (comments, pasted blobs, templates), whose words a note holds, listings, lookups,
remembered facts. Uses only the domain's own values (models, links, errors)."""
