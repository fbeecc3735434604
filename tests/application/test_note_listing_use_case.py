"""The note listing use case's own rules (a request's dates in order, a moment without a zone is UTC, a blank
tag is no tag), before any index is asked: on a stand-in for the wired services that records what it got."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest

from backend.application.notes.reading import NoteListing
from backend.application.operations import NoteListQuery, list_notes
from backend.domain.errors import InvalidRequestError
from backend.domain.notes.note_listing import NoteListFilter, NoteOrder, NotePage


class RecordingNotes:
    def __init__(self) -> None:
        self.asked: list[tuple[NoteListFilter, dict[str, Any]]] = []

    def list(self, wanted: NoteListFilter, **page: Any) -> NoteListing:
        self.asked.append((wanted, page))
        return NoteListing(NotePage([], 0, None), {})


class Handles:
    def __init__(self) -> None:
        self.notes = RecordingNotes()
        self.opened = 0

    @property
    def supervisor(self) -> Handles:  # the index rules the use case asks for: only opening counts here
        return self

    def open(self) -> None:
        self.opened += 1


def asked(query: NoteListQuery) -> tuple[NoteListFilter, dict[str, Any]]:
    handles = Handles()
    list_notes(handles, query)  # type: ignore[arg-type]
    assert handles.opened == 1
    [(wanted, page)] = handles.notes.asked
    return wanted, page


def test_dates_out_of_order_are_refused_before_the_index_is_opened() -> None:
    handles = Handles()
    with pytest.raises(InvalidRequestError, match="date_from must not be after date_to"):
        list_notes(handles, NoteListQuery(date_from=date(2026, 3, 2), date_to=date(2026, 3, 1)))  # type: ignore[arg-type]
    assert handles.opened == 0
    assert handles.notes.asked == []


@pytest.fixture
def local_zone_not_utc(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A moment without a zone would be read in the machine's zone, which is UTC in CI: make it another."""
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("since", "epoch"),
    [
        (datetime(2026, 1, 3), datetime(2026, 1, 3, tzinfo=UTC).timestamp()),  # no zone: UTC
        (datetime.fromisoformat("2026-01-03T02:00:00+02:00"), datetime(2026, 1, 3, tzinfo=UTC).timestamp()),
        (None, None),
    ],
)
def test_modified_since_is_a_moment_in_utc(
    since: datetime | None, epoch: float | None, local_zone_not_utc: None
) -> None:
    wanted, _ = asked(NoteListQuery(modified_since=since))
    assert wanted.modified_since == epoch


@pytest.mark.parametrize(("tag", "kept"), [(" finance ", "finance"), ("   ", None), (None, None)])
def test_a_blank_tag_is_no_tag(tag: str | None, kept: str | None) -> None:
    assert asked(NoteListQuery(tag=tag))[0].tag == kept


def test_days_folder_order_and_page_are_passed_on() -> None:
    wanted, page = asked(
        NoteListQuery(
            folder="Journal",
            date_from=date(2026, 3, 1),
            date_to=date(2026, 3, 31),
            order=NoteOrder.DATE,
            limit=20,
            offset=40,
        )
    )
    assert wanted == NoteListFilter(folder="Journal", date_from="2026-03-01", date_to="2026-03-31")
    assert page == {"order": NoteOrder.DATE, "limit": 20, "offset": 40}
