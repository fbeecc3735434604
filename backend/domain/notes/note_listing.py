"""Which indexed notes a listing returns, in which order, one page at a time. Pure rules over note records.

* `folder`: notes under that vault-relative folder (at any depth); "" is the whole vault.
* `tag`: case-insensitive, without the "#", and nested as Obsidian searches it: `finance` matches `finance`
  and `finance/ledger`, not `financial`.
* `date_from` / `date_to`: inclusive ISO days compared with the note's date; undated notes are left out.
* `modified_since`: the file's modification time (seconds since the epoch) at or after this.
* Order: by path, or newest first by modification time or by date (undated last), ties by path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from backend.domain.links import NoteRecord


class NoteOrder(StrEnum):
    PATH = "path"
    MODIFIED = "modified"
    DATE = "date"


@dataclass(frozen=True, slots=True)
class NoteListFilter:
    folder: str = ""
    tag: str | None = None
    date_from: str | None = None  # ISO day
    date_to: str | None = None
    modified_since: float | None = None  # epoch seconds


@dataclass(frozen=True, slots=True)
class NotePage:
    notes: list[NoteRecord]
    total: int  # notes matching the filter, all pages together
    next_offset: int | None  # None on the last page


def has_tag(record: NoteRecord, tag: str) -> bool:
    asked = _tag_key(tag)  # once a record, not once a tag of it: listings run this over every note
    return any(_finds(t.casefold(), asked) for t in record.tags)


def tag_matches(note_tag: str, wanted: str) -> bool:
    """Obsidian's rule: a tag is found in any case, and with the tags nested under it (`project` finds
    `Project/alpha`)."""
    return _finds(note_tag.casefold(), _tag_key(wanted))


def _tag_key(wanted: str) -> str:
    return wanted.lstrip("#").casefold()


def _finds(have: str, asked: str) -> bool:
    return have == asked or have.startswith(asked + "/")


def matches(record: NoteRecord, wanted: NoteListFilter) -> bool:
    if wanted.folder and not record.path.startswith(wanted.folder.rstrip("/") + "/"):
        return False
    if wanted.tag and not has_tag(record, wanted.tag):
        return False
    if wanted.date_from or wanted.date_to:
        day = (record.date or "")[:10]
        if not day:
            return False
        if wanted.date_from and day < wanted.date_from:
            return False
        if wanted.date_to and day > wanted.date_to:
            return False
    return wanted.modified_since is None or record.mtime >= wanted.modified_since


def _ordered(records: list[NoteRecord], order: NoteOrder) -> list[NoteRecord]:
    by_path = sorted(records, key=lambda r: r.path)  # sorts below are stable (reverse too): ties by path
    if order is NoteOrder.MODIFIED:
        return sorted(by_path, key=lambda r: r.mtime, reverse=True)
    if order is NoteOrder.DATE:
        dated = sorted((r for r in by_path if r.date), key=lambda r: str(r.date)[:10], reverse=True)
        return dated + [r for r in by_path if not r.date]
    return by_path


def list_notes(
    records: Sequence[NoteRecord],
    wanted: NoteListFilter,
    *,
    order: NoteOrder = NoteOrder.PATH,
    limit: int = 50,
    offset: int = 0,
) -> NotePage:
    selected = _ordered([r for r in records if matches(r, wanted)], order)
    page = selected[offset : offset + limit]
    following = offset + len(page)
    return NotePage(page, len(selected), following if following < len(selected) else None)
