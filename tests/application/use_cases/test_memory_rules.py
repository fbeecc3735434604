"""Remembered facts (application/notes/memory.py) on the fakes: the rules, not the engine. A fact's source
must be an indexed note; keys are cleaned; a replaced fact keeps its creation time; what an agent sees is
redacted and flagged (with its note's tags) and says whether the note is still there; facts stored while the
embedder was down are found by their words and embedded later; a new embedder re-encodes every fact."""

from __future__ import annotations

import itertools

import pytest

from backend.application.serving.embedder_health import PROBE_INTERVAL_SECONDS
from backend.domain.errors import (
    InvalidRequestError,
    MemoryNotFoundError,
    NoteNotFoundError,
    SecurityViolationError,
)
from backend.domain.models import IndexIdentity, SparseVector
from backend.domain.notes.memory import MemoryRecord
from tests.application.use_cases.conftest import NOTES, SERVER_PASSWORD
from tests.fakes import FakeEmbedder, FakeHandles, wire


def stored_dense(handles: FakeHandles, key: str) -> tuple[float, ...] | None:
    return handles.memory_store.shelf.facts[key][2]


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("Nowhere.md", NoteNotFoundError),
        ("../outside.md", SecurityViolationError),
        ("/etc/passwd", SecurityViolationError),
    ],
)
def test_the_source_must_be_an_indexed_note_and_nothing_is_written_otherwise(
    handles: FakeHandles, source: str, error: type[Exception]
) -> None:
    with pytest.raises(error):
        handles.memory.remember("k", "v", source)
    assert handles.memory_store.calls == []


@pytest.mark.parametrize("named", ["Projects/Database migration", "database migration", "DB move"])
def test_the_source_is_named_as_a_read_names_a_note_and_kept_as_its_path(
    handles: FakeHandles, named: str
) -> None:
    """Its path without .md, its title, an alias (NoteReader.find, as a note read): it took the path alone."""
    view, _ = handles.memory.remember("db", "we chose PostgreSQL", named)
    assert view.source == "Projects/Database migration.md"


def test_keys_are_cleaned_and_checked(handles: FakeHandles) -> None:
    view, _ = handles.memory.remember("  milk  ", "we prefer oat milk", "Shopping list.md")
    assert view.key == "milk"
    assert handles.memory.get("milk").value == "we prefer oat milk"
    for bad in ("", "a/b", "x" * 129):
        with pytest.raises(InvalidRequestError):
            handles.memory.remember(bad, "v", "Shopping list.md")


def test_replacing_a_fact_keeps_when_it_was_first_remembered() -> None:
    ticks = itertools.count(1000)
    handles = wire(NOTES, embedder=FakeEmbedder(spread=True), clock=lambda: float(next(ticks)))
    first, new = handles.memory.remember("milk", "cow milk", "Shopping list.md")
    second, again_new = handles.memory.remember("milk", "oat milk", "Shopping list.md")
    assert (new, again_new) == (True, False)
    assert second.created_at == first.created_at == 1000.0
    assert second.updated_at == 1001.0
    assert [f.value for f in handles.memory.list().facts] == ["oat milk"]


def test_unknown_keys_are_not_found(handles: FakeHandles) -> None:
    with pytest.raises(MemoryNotFoundError):
        handles.memory.get("nothing")
    with pytest.raises(MemoryNotFoundError):
        handles.memory.forget("nothing")
    handles.memory.remember("milk", "oat", "Shopping list.md")
    handles.memory.forget("milk")
    with pytest.raises(MemoryNotFoundError):
        handles.memory.get("milk")


def test_facts_are_listed_by_key_a_page_at_a_time(handles: FakeHandles) -> None:
    for key in ("c", "a", "b"):
        handles.memory.remember(key, f"value {key}", "Shopping list.md")
    first = handles.memory.list(limit=2)
    assert ([f.key for f in first.facts], first.total, first.next_offset) == (["a", "b"], 3, 2)
    last = handles.memory.list(limit=2, offset=2)
    assert ([f.key for f in last.facts], last.next_offset) == (["c"], None)


def test_a_fact_is_shown_redacted_flagged_by_its_notes_tags_and_with_its_source_state(
    handles: FakeHandles,
) -> None:
    handles.memory.remember("db", f"password: {SERVER_PASSWORD}", "Infra/Servers.md")
    handles.memory.remember("tickets", "two seats, row F", "Finance/Sreenivas.md")
    secret = handles.memory.get("db")
    assert SERVER_PASSWORD not in secret.value
    assert secret.redactions == 1
    tickets = handles.memory.get("tickets")
    assert tickets.sensitive_categories == ["finance"]  # no finance word: the note's tag says it
    assert tickets.source_exists
    handles.index.graph.remove("Finance/Sreenivas.md")
    gone = handles.memory.get("tickets")
    assert (gone.source_exists, gone.sensitive_categories) == (False, [])


def test_facts_are_found_by_meaning_and_by_words(handles: FakeHandles) -> None:
    handles.memory.remember("sreenivas_balance", "I owe Sreenivas 1200 rupees", "Finance/Sreenivas.md")
    handles.memory.remember("milk", "we prefer oat milk", "Shopping list.md")
    by_words = handles.memory.search("Sreenivas balance", limit=1)
    assert ([h.key for h in by_words.hits], by_words.warnings) == (["sreenivas_balance"], [])
    assert handles.memory.search("oat", limit=3).hits[0].key == "milk"
    assert by_words.hits[0].score is not None


def test_with_the_embedder_down_facts_are_kept_and_found_by_words_then_embedded(
    handles: FakeHandles, embedder: FakeEmbedder
) -> None:
    embedder.available = False
    handles.memory.remember("milk", "we prefer oat milk", "Shopping list.md")
    assert stored_dense(handles, "milk") is None
    assert handles.memory_store.shelf.facts["milk"][0].dense_ready is False
    found = handles.memory.search("oat milk")
    assert [h.key for h in found.hits] == ["milk"]
    assert found.warnings[0].startswith("remembered facts matched by words only: the embedder is unavailable")
    embedder.available = True
    handles.index.clock.now += PROBE_INTERVAL_SECONDS  # the failed probe is believed until then
    assert handles.memory.search("oat milk").warnings == []
    assert stored_dense(handles, "milk") is not None  # healed by the first search that could embed
    assert handles.memory_store.shelf.facts["milk"][0].dense_ready is True


def test_healing_is_tried_at_most_once_per_interval(handles: FakeHandles, embedder: FakeEmbedder) -> None:
    embedder.available = False
    handles.memory.remember("milk", "oat milk", "Shopping list.md")
    embedder.available = True
    handles.memory.search("milk")  # heals "milk"
    embedder.available = False
    handles.memory.remember("rice", "basmati rice", "Shopping list.md")
    embedder.available = True
    handles.memory.search("rice")  # within HEAL_INTERVAL_SECONDS of the last heal: "rice" waits
    assert stored_dense(handles, "milk") is not None
    assert stored_dense(handles, "rice") is None


def test_a_new_embedder_re_encodes_every_fact_on_first_use(handles: FakeHandles) -> None:
    old = IndexIdentity("old-model", 8, "kw-old")
    handles.memory_store.create(old)
    fact = MemoryRecord("milk", "oat milk", "Shopping list.md", 5.0, 6.0)
    handles.memory_store.put(fact, sparse=SparseVector((), ()), dense=[1.0] * 8)
    assert [f.key for f in handles.memory.list().facts] == ["milk"]
    identity = handles.memory_store.identity()
    assert identity is not None
    assert identity.embedding_model == "fake-bow"
    dense = stored_dense(handles, "milk")
    assert dense is not None
    assert len(dense) == 32
    assert handles.memory.get("milk").created_at == 5.0
    assert handles.memory.search("oat", limit=1).hits[0].key == "milk"  # its words were encoded again too


def test_without_an_embedder_facts_need_no_dense_vector_and_searches_say_nothing() -> None:
    handles = wire(NOTES, embedder=None)
    handles.memory.remember("milk", "we prefer oat milk", "Shopping list.md")
    assert handles.memory_store.shelf.facts["milk"][0].dense_ready is True
    found = handles.memory.search("oat milk")
    assert ([h.key for h in found.hits], found.warnings) == (["milk"], [])
