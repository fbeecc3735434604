"""Whether a note was saved from elsewhere (a web clipping, a read-later export) rather than written by the
person, and the order in which a first index gives notes their dense vectors.

A web clipper writes the page's address into a `source:` or `url:` property (Obsidian's Web Clipper files the
note under `Clippings/`); a person's own notes may name a source too, in words ("source: Mum's, adapted" on a
recipe, `author:` on their notes about a book), so only a web address or the clipper's folder counts here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

SAVED_PROPERTIES = ("source", "url")  # where web clippers and read-later tools write the page's address
SAVED_FOLDERS = frozenset({"clippings"})  # Obsidian Web Clipper's default folder, any case
_WEB_ADDRESS = re.compile(r"^\s*<?(?:https?://|www\.)\S", re.IGNORECASE)

# A note's place in the dense queue: (0 own / 1 saved from elsewhere, minus its time); smaller goes first.
DenseRank = tuple[int, float]
UNRANKED: DenseRank = (
    0,
    0.0,
)  # a note the pass did not read (pending from an earlier pass): by its time only


def saved_from_elsewhere(path: str, metadata: Mapping[str, Any]) -> bool:
    """A note whose `source:`/`url:` property is a web address, or which sits under a Clippings folder."""
    folders = path.split("/")[:-1]
    if any(folder.lower() in SAVED_FOLDERS for folder in folders):
        return True
    for name in SAVED_PROPERTIES:
        value = metadata.get(name)
        values = value if isinstance(value, list) else [value]
        if any(isinstance(v, str) and _WEB_ADDRESS.match(v) for v in values):
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
