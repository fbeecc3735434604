"""The order in which a pass gives notes their dense vectors, and which notes were saved from elsewhere.

On a real vault half the notes are web clippings (long prose, most of the embedding work): the person's own
notes come first, newest first, so what they wrote is searchable by meaning minutes before the clippings
are. A web clipper (Obsidian Web Clipper, MarkDownload, read-later exports) writes the page's address into a
`source:` or `url:` property, files the note in its folder (`Clippings/` by default) or tags it
`#clippings`; a source in words ("source: Mum's, adapted" on a recipe) or `author:` alone (on the person's
notes about a book) is the person's own note.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from backend.domain.index.payload import folders_of
from backend.domain.notes.note_origin import saved_from, source_url

DEFAULT_SAVED_FOLDERS = ("Clippings",)  # Obsidian Web Clipper's default folder (SAVED_FOLDERS)

# A note's place in the dense queue: (0 own / 1 saved from elsewhere, minus its time); smaller goes first.
DenseRank = tuple[int, float]
# a note the pass did not read (pending from an earlier pass), whose file gives no time either
UNRANKED: DenseRank = (0, 0.0)


def saved_from_elsewhere(
    path: str,
    metadata: Mapping[str, Any],
    tags: Iterable[str] = (),
    saved_folders: Collection[str] = DEFAULT_SAVED_FOLDERS,
) -> bool:
    """A note saved from elsewhere by the rule the search ranks by (note_origin.saved_from): a web address
    in a `source:`/`url:`-like property, a folder of `saved_folders`, a clipping tag."""
    return saved_from(source_url(metadata), folders_of(path), tags, saved_folders) is not None


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
