"""`obsidian://open?vault=…&file=…`: the link that opens a note in the Obsidian app.

Obsidian names a vault by its folder name and takes the file as a vault-relative path; both values are
percent-encoded in full (a space is %20, never `+`, and `/`, `&`, `#`, `?` are escaped), as Obsidian's own
"Copy Obsidian URL" does.
"""

from __future__ import annotations

from urllib.parse import quote


def obsidian_uri(vault_name: str, note_path: str) -> str:
    return f"obsidian://open?vault={quote(vault_name, safe='')}&file={quote(note_path, safe='')}"
