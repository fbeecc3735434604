"""The order in which a pass gives notes their dense vectors, and which notes were saved from elsewhere.

On a real vault half the notes are web clippings (long prose, most of the embedding work): the person's own
notes come first, newest first, so what they wrote is searchable by meaning minutes before the clippings
are. A web clipper (Obsidian Web Clipper, MarkDownload, read-later exports) writes the page's address into a
`source:` or `url:` property, files the note in its folder (`Clippings/` by default) or tags it
`#clippings`; a source in words ("source: Mum's, adapted" on a recipe) or `author:` alone (on the person's
notes about a book) is the person's own note.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

SOURCE_KEYS = frozenset({"source", "url", "link", "source_url", "clipped_from", "original"})
SAVED_FOLDERS = frozenset({"clippings"})  # Obsidian Web Clipper's default folder, any case, at any depth
CLIPPING_TAGS = frozenset({"clippings", "clipping", "clipped", "webclip", "web-clip", "web-clipping"})
_WEB_ADDRESS = re.compile(r"https?://\S", re.IGNORECASE)

# A note's place in the dense queue: (0 own / 1 saved from elsewhere, minus its time); smaller goes first.
DenseRank = tuple[int, float]
# a note the pass did not read (pending from an earlier pass), whose file gives no time either
UNRANKED: DenseRank = (0, 0.0)


def saved_from_elsewhere(path: str, metadata: Mapping[str, Any], tags: Iterable[str] = ()) -> bool:
    """A note with a web address in a `source:`/`url:`-like property, under a Clippings folder, or tagged
    as a clipping."""
    if any(folder.casefold() in SAVED_FOLDERS for folder in path.split("/")[:-1]):
        return True
    if any(tag.casefold().rsplit("/", 1)[-1] in CLIPPING_TAGS for tag in tags):
        return True
    for key, value in metadata.items():
        if str(key).casefold() in SOURCE_KEYS:
            values = value if isinstance(value, list) else [value]
            if any(_WEB_ADDRESS.search(str(item)) for item in values):
                return True
    return False


def dense_rank(saved: bool, date: str | None, mtime: float) -> DenseRank:
    """Own notes before saved ones, each newest first: by the day the note states (`date:`, its file name),
    else by when the file was last written (a vault fresh from a copy or a clone has the same mtime
    everywhere; its dated notes still order)."""
    return (1 if saved else 0, -_seconds(date, mtime))


def _seconds(date: str | None, mtime: float) -> float:
    if date:
        try:
            return datetime.fromisoformat(date[:10]).replace(tzinfo=UTC).timestamp()
        except ValueError:
            pass
    return mtime
