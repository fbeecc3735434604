"""One behaviour contract for `QdrantMemoryStore`, run on both engines against real stores (conftest.py)."""

from __future__ import annotations

import math

import pytest

from backend.application.ports import MemoryStore
from backend.domain.errors import StoreError
from backend.domain.models import IndexIdentity, SparseVector
from backend.domain.notes.memory import MemoryRecord
from backend.infrastructure.qdrant.memory_store import QdrantMemoryStore, memory_collection
from tests.contract.conftest import Backend

DIM = 4
IDENTITY = IndexIdentity("fake-4d", DIM, "kw-1")
KEYWORD_ONLY = IndexIdentity("none", None, "kw-1")
STORE = QdrantMemoryStore  # what the `backend` fixture builds, created with IDENTITY (conftest.py)


def unit(*values: float) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def fact(key: str, value: str = "a value", source: str = "Notes/a.md", at: float = 1.0) -> MemoryRecord:
    return MemoryRecord(key=key, value=value, source=source, created_at=at, updated_at=at)


def words(*indices: int) -> SparseVector:
    return SparseVector(tuple(sorted(indices)), tuple(1.0 for _ in indices))


def test_a_new_store_has_no_identity_and_no_facts(backend: Backend) -> None:
    fresh = backend.store()
    assert fresh.identity() is None
    assert fresh.all() == []
    assert fresh.get("anything") is None
    assert fresh.search(dense=None, sparse=words(1), limit=5) == []


def test_put_get_all_and_replace(store: MemoryStore) -> None:
    assert store.identity() == IDENTITY
    store.put(fact("b", "second"), sparse=words(2), dense=unit(0, 1, 0, 0))
    store.put(fact("a", "first"), sparse=words(1), dense=unit(1, 0, 0, 0))
    assert store.get("a") == fact("a", "first")
    assert [r.key for r in store.all()] == ["a", "b"]
    store.put(fact("a", "replaced", at=2.0), sparse=words(3), dense=unit(0, 0, 1, 0))
    assert store.get("a") == fact("a", "replaced", at=2.0)
    assert len(store.all()) == 2


def test_keys_are_exact(store: MemoryStore) -> None:
    store.put(fact("Sreenivas balance"), sparse=words(1), dense=None)
    assert store.get("sreenivas balance") is None
    assert store.get("Sreenivas balance") is not None


def test_delete_says_whether_there_was_a_fact(store: MemoryStore) -> None:
    store.put(fact("a"), sparse=words(1), dense=unit(1, 0, 0, 0))
    assert store.delete("a") is True
    assert store.get("a") is None
    assert store.delete("a") is False
    assert store.all() == []


def test_keyword_search_finds_facts_sharing_a_term(store: MemoryStore) -> None:
    store.put(fact("a"), sparse=words(1, 2), dense=unit(1, 0, 0, 0))
    store.put(fact("b"), sparse=words(2, 3), dense=unit(0, 1, 0, 0))
    store.put(fact("c"), sparse=words(9), dense=unit(0, 0, 1, 0))
    found = store.search(dense=None, sparse=words(1, 2), limit=5)
    assert [r.key for r, _ in found] == ["a", "b"]  # "a" shares two terms
    assert found[0][1] > found[1][1]
    assert store.search(dense=None, sparse=words(42), limit=5) == []


def test_dense_search_keeps_only_facts_close_enough(store: MemoryStore) -> None:
    store.put(fact("near"), sparse=words(1), dense=unit(1, 0.1, 0, 0))
    store.put(fact("far"), sparse=words(2), dense=unit(0, 0, 1, 0))
    found = store.search(dense=unit(1, 0, 0, 0), sparse=None, limit=5, min_similarity=0.5)
    assert [r.key for r, _ in found] == ["near"]
    assert found[0][1] == pytest.approx(0.995, abs=0.01)


def test_hybrid_search_fuses_both_sides_and_respects_the_floor(store: MemoryStore) -> None:
    store.put(fact("by-meaning"), sparse=words(5), dense=unit(1, 0, 0, 0))
    store.put(fact("by-word"), sparse=words(1), dense=unit(0, 0, 0, 1))
    store.put(fact("neither"), sparse=words(7), dense=unit(0, 0, 1, 0))
    found = store.search(dense=unit(1, 0, 0, 0), sparse=words(1), limit=5, min_similarity=0.5, rrf_k=60)
    assert sorted(r.key for r, _ in found) == ["by-meaning", "by-word"]
    both = store.search(dense=unit(1, 0, 0, 0), sparse=words(5), limit=5, min_similarity=0.5, rrf_k=60)
    assert [r.key for r, _ in both][0] == "by-meaning"  # first on both sides


def test_a_fact_without_a_dense_vector_is_found_by_words(store: MemoryStore) -> None:
    pending = MemoryRecord("p", "v", "s.md", 1.0, 1.0, dense_ready=False)
    store.put(pending, sparse=words(4), dense=None)
    assert store.get("p") == pending
    found = store.search(dense=unit(1, 0, 0, 0), sparse=words(4), limit=5, min_similarity=0.5)
    assert [r.key for r, _ in found] == ["p"]


def test_a_keyword_only_store_takes_no_dense_vectors(backend: Backend) -> None:
    s = backend.store()
    s.create(KEYWORD_ONLY)
    s.put(fact("a"), sparse=words(1), dense=None)
    assert [r.key for r, _ in s.search(dense=None, sparse=words(1), limit=3)] == ["a"]
    with pytest.raises(StoreError):
        s.put(fact("b"), sparse=words(1), dense=unit(1, 0, 0, 0))


def test_a_wrong_dimension_is_refused(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="dimensions"):
        store.put(fact("a"), sparse=words(1), dense=[1.0, 0.0])


def test_create_starts_empty_with_the_new_identity(store: MemoryStore) -> None:
    store.put(fact("a"), sparse=words(1), dense=unit(1, 0, 0, 0))
    store.create(KEYWORD_ONLY)
    assert store.identity() == KEYWORD_ONLY
    assert store.all() == []


def test_facts_survive_a_reopen(backend: Backend) -> None:
    first = backend.reopenable()
    first.create(IDENTITY)
    first.put(fact("kept", "stays"), sparse=words(1), dense=unit(1, 0, 0, 0))
    first.close()
    second = backend.reopenable()
    assert second.identity() == IDENTITY
    assert second.get("kept") == fact("kept", "stays")
    assert [r.key for r, _ in second.search(dense=unit(1, 0, 0, 0), sparse=words(1), limit=3)] == ["kept"]


def test_a_closed_store_refuses_work_and_closes_twice(store: MemoryStore) -> None:
    store.close()
    store.close()
    with pytest.raises(StoreError):
        store.put(fact("a"), sparse=words(1), dense=None)


def test_the_collection_name_is_built_from_the_base() -> None:
    assert memory_collection() == "obsidian_memory"
    assert memory_collection("work") == "work_memory"


def test_times_come_back_exactly(store: MemoryStore) -> None:
    # microsecond times like the service writes; raw payload floats do not always survive qdrant-edge
    times = [(1_795_386_423_058_301 + i) / 1_000_000 for i in range(200)]
    for i, t in enumerate(times):
        store.put(MemoryRecord(f"k{i}", "v", "a.md", t, t), sparse=words(1), dense=None)
    assert [(r.created_at, r.updated_at) for r in store.all()] == [
        (t, t) for _, t in sorted((f"k{i}", t) for i, t in enumerate(times))
    ]
