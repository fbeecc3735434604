"""The use cases every door calls (application/operations.py): the index opened before anything else, the
dense catch-up nudged after a search, results shown as /search shows them (secrets redacted, sensitivity
flagged), by note when asked, with remembered facts when asked and a warning when those are unavailable."""

from __future__ import annotations

import pytest

from backend.application.operations import (
    SearchQuery,
    build_context,
    note_links,
    read_note,
    remember,
    search_notes,
)
from backend.application.recall.context import ContextQuery
from tests.application.use_cases.conftest import SERVER_PASSWORD
from tests.fakes import FakeHandles


def test_a_search_opens_the_index_first_and_nudges_the_dense_catch_up_after(handles: FakeHandles) -> None:
    handles.index.store.calls.clear()
    search_notes(handles, SearchQuery("basmati"))
    assert handles.events == ["open", "catch_up_dense"]
    assert handles.index.store.calls  # the search itself ran in between


@pytest.mark.parametrize(
    "call",
    [
        lambda h: build_context(h, ContextQuery("basmati")),
        lambda h: read_note(h, "Shopping list.md"),
        lambda h: note_links(h, "Runbook"),
        lambda h: remember(h, "milk", "oat", "Shopping list.md"),
    ],
    ids=["context", "read", "links", "remember"],
)
def test_every_operation_opens_the_index_first(handles: FakeHandles, call: object) -> None:
    call(handles)  # type: ignore[operator]
    assert handles.events == ["open"]


def test_search_results_are_redacted_and_flagged_as_every_door_shows_them(handles: FakeHandles) -> None:
    answer = search_notes(handles, SearchQuery("database connection postgres", top_k=10))
    servers = next(v for v in answer.views if v.note_path == "Infra/Servers.md")
    assert SERVER_PASSWORD not in servers.content
    assert servers.redactions == 1
    sreenivas = search_notes(handles, SearchQuery("owe Sreenivas rupees", top_k=1))
    assert sreenivas.views[0].sensitive_categories == ["finance"]
    assert sreenivas.sensitive_detected
    assert not search_notes(handles, SearchQuery("basmati lemons", top_k=1)).sensitive_detected


def test_top_k_counts_chunks_or_when_grouped_notes(handles: FakeHandles) -> None:
    chunks = search_notes(handles, SearchQuery("tomatoes", top_k=2))
    assert [v.note_path for v in chunks.views] == ["Garden.md", "Garden.md"]
    notes = search_notes(handles, SearchQuery("tomatoes", top_k=2, by_note=True, candidates=100))
    paths = [v.note_path for v in notes.views]
    assert paths[:2] == ["Garden.md", "Garden.md"]  # a note's chunks together, best note first
    assert len(paths) == 3  # two notes: every chunk of theirs that matched, however many that is
    assert paths[2] != "Garden.md"


def test_remembered_facts_come_with_a_search_only_when_asked(handles: FakeHandles) -> None:
    remember(handles, "sreenivas_balance", "I owe Sreenivas 1200 rupees", "Finance/Sreenivas.md")
    plain = search_notes(handles, SearchQuery("Sreenivas balance"))
    assert plain.memories == []
    asked = search_notes(handles, SearchQuery("Sreenivas balance", include_memory=True))
    assert [m.key for m in asked.memories] == ["sreenivas_balance"]
    assert asked.memories[0].sensitive_categories == ["finance"]
    assert asked.sensitive_detected


def test_with_the_memory_store_down_the_notes_still_answer_and_say_what_is_missing(
    handles: FakeHandles,
) -> None:
    handles.memory_store.down = True
    answer = search_notes(handles, SearchQuery("basmati lemons", include_memory=True))
    assert answer.views[0].note_path == "Shopping list.md"
    assert answer.memories == []
    assert len(answer.warnings) == 1
    assert answer.warnings[0].startswith("remembered facts are unavailable: ")


def test_note_links_find_the_note_by_its_name(handles: FakeHandles) -> None:
    links = note_links(handles, "database migration")
    assert links.path == "Projects/Database migration.md"
    assert [o.path for o in links.outlinks] == ["Projects/Runbook.md"]
    assert [b.path for b in note_links(handles, "Runbook").backlinks] == ["Projects/Database migration.md"]


def test_a_note_read_is_redacted_and_flagged(handles: FakeHandles) -> None:
    view = read_note(handles, "Infra/Servers.md", start_line=5, end_line=5)
    assert view.window.text.startswith("Connection: postgres://app:[REDACTED:password]@")
    assert view.redactions == 1
    assert read_note(handles, "Sreenivas").sensitive_categories == ["finance"]
