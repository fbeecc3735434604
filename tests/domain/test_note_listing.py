from __future__ import annotations

import pytest

from backend.domain.links import NoteRecord
from backend.domain.notes.note_listing import NoteListFilter, NoteOrder, list_notes, matches

NOTES = [
    NoteRecord("Home.md", "Home", tags=(), date=None, mtime=500.0),
    NoteRecord("Finance/Budget.md", "Budget", tags=("finance", "budget"), date="2026-01-02", mtime=100.0),
    NoteRecord("Finance/Ledger.md", "Ledger", tags=("Finance/Ledger",), date="2026-03-28", mtime=300.0),
    NoteRecord("Financial news.md", "News", tags=("financial",), date="2026-02-01", mtime=200.0),
    NoteRecord("Journal/2026/03-28.md", "28", tags=("journal",), date="2026-03-28", mtime=400.0),
]


def paths(wanted: NoteListFilter, order: NoteOrder = NoteOrder.PATH) -> list[str]:
    return [r.path for r in list_notes(NOTES, wanted, order=order, limit=100).notes]


@pytest.mark.parametrize(
    ("wanted", "expected"),
    [
        (NoteListFilter(), ["Finance/Budget.md", "Finance/Ledger.md", "Financial news.md", "Home.md",
                            "Journal/2026/03-28.md"]),
        (NoteListFilter(folder="Finance"), ["Finance/Budget.md", "Finance/Ledger.md"]),  # not "Financial"
        (NoteListFilter(folder="Journal"), ["Journal/2026/03-28.md"]),  # any depth
        (NoteListFilter(tag="finance"), ["Finance/Budget.md", "Finance/Ledger.md"]),  # nested, any case
        (NoteListFilter(tag="#FINANCE/ledger"), ["Finance/Ledger.md"]),
        (NoteListFilter(tag="fin"), []),  # a tag is a whole name, not a prefix of one
        (NoteListFilter(date_from="2026-02-01"), ["Finance/Ledger.md", "Financial news.md",
                                                  "Journal/2026/03-28.md"]),
        (NoteListFilter(date_to="2026-02-01"), ["Finance/Budget.md", "Financial news.md"]),  # undated out
        (NoteListFilter(date_from="2026-03-28", date_to="2026-03-28"), ["Finance/Ledger.md",
                                                                        "Journal/2026/03-28.md"]),
        (NoteListFilter(modified_since=300.0), ["Finance/Ledger.md", "Home.md", "Journal/2026/03-28.md"]),
        (NoteListFilter(folder="Finance", tag="budget"), ["Finance/Budget.md"]),
    ],
)  # fmt: skip
def test_filters(wanted: NoteListFilter, expected: list[str]) -> None:
    assert paths(wanted) == expected


def test_orders_newest_first_with_ties_by_path() -> None:
    assert paths(NoteListFilter(), NoteOrder.MODIFIED) == [
        "Home.md", "Journal/2026/03-28.md", "Finance/Ledger.md", "Financial news.md", "Finance/Budget.md",
    ]  # fmt: skip
    assert paths(NoteListFilter(), NoteOrder.DATE) == [
        "Finance/Ledger.md", "Journal/2026/03-28.md", "Financial news.md", "Finance/Budget.md", "Home.md",
    ]  # fmt: skip


def test_pages_cover_everything_once() -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = list_notes(NOTES, NoteListFilter(), limit=2, offset=offset)
        assert page.total == len(NOTES)
        seen += [r.path for r in page.notes]
        offset = page.next_offset
    assert seen == paths(NoteListFilter())
    assert list_notes(NOTES, NoteListFilter(), limit=2, offset=10).notes == []


def test_a_note_matches_only_inside_its_folder() -> None:
    assert not matches(NOTES[3], NoteListFilter(folder="Finance"))
