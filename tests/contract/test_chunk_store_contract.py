"""One behaviour contract for `QdrantChunkStore`, run on both engines against real stores (conftest.py)."""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

import pytest

from backend.application.ports import ChunkStore
from backend.domain.errors import IndexNotReadyError, IndexUnavailableError, StoreError
from backend.domain.index.payload import chunk_payload
from backend.domain.models import (
    Chunk,
    DenseVectors,
    IndexIdentity,
    ParsedNote,
    PointFilter,
    PointRecord,
    ScoredPoint,
    SparseVector,
)
from backend.infrastructure.qdrant import edge_engine
from backend.infrastructure.qdrant.chunk_store import QdrantChunkStore
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from tests.contract.conftest import Backend, assert_unavailable_without_a_server, failures_beside_one_writer

DIM = 4
IDENTITY = IndexIdentity(embedding_model="test-model", dimension=DIM)
KEYWORD_ONLY = IndexIdentity(embedding_model="none", dimension=None)

COMMON, APPLE, RARE, ZEBRA = 1, 2, 3, 4  # sparse term ids
STORE = QdrantChunkStore  # what the `backend` fixture builds, created with IDENTITY (conftest.py)


# -- building points -------------------------------------------------------------------------------


def make_point(
    note_path: str,
    *,
    dense: tuple[float, ...] | None = (1.0, 0.0, 0.0, 0.0),
    terms: dict[int, float] | None = None,
    chunk_index: int = 0,
    tags: tuple[str, ...] = (),
    date: str | None = None,
    text: str = "",
) -> PointRecord:
    note = ParsedNote(path=note_path, title=note_path, body=text, body_start_line=1, tags=tags, date=date)
    chunk = Chunk(note_path, chunk_index, text, ("Heading",), start_line=1, end_line=3)
    terms = {COMMON: 1.0} if terms is None else terms
    return PointRecord(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"{note_path}#{chunk_index}")),
        sparse=SparseVector(tuple(terms), tuple(terms.values())),
        payload=chunk_payload(note, chunk, mtime=1.0, content_hash="h"),
        dense=dense,
    )


def sparse(terms: dict[int, float]) -> SparseVector:
    return SparseVector(tuple(terms), tuple(terms.values()))


def notes(points: list[ScoredPoint]) -> list[str]:
    return [p.payload["note_path"] for p in points]


def scroll_all(
    store: ChunkStore, point_filter: PointFilter | None = None, page: int = 3
) -> list[ScoredPoint]:
    found: list[ScoredPoint] = []
    offset: str | None = None
    while True:
        batch, offset = store.scroll(point_filter=point_filter, limit=page, offset=offset)
        found.extend(batch)
        if offset is None:
            return found


def hybrid(store: ChunkStore, point_filter: PointFilter | None = None, limit: int = 50) -> list[ScoredPoint]:
    return store.query(
        dense=(1.0, 0.0, 0.0, 0.0),
        sparse=sparse({COMMON: 1.0}),
        limit=limit,
        prefetch_limit=50,
        point_filter=point_filter,
    )


# -- identity and lifecycle ------------------------------------------------------------------------


def test_identity_of_missing_collection_is_none(backend: Backend) -> None:
    assert backend.store().identity() is None


def test_create_records_identity_and_starts_empty(store: ChunkStore) -> None:
    assert store.identity() == IDENTITY
    assert store.count() == 0


def test_keyword_only_collection_records_no_dimension(backend: Backend) -> None:
    store = backend.store()
    store.create(KEYWORD_ONLY)
    assert store.identity() == KEYWORD_ONLY


def test_create_on_existing_collection_starts_empty(store: ChunkStore) -> None:
    store.upsert([make_point("a.md"), make_point("b.md")])
    other = IndexIdentity(embedding_model="other-model", dimension=8)
    store.create(other)
    assert store.count() == 0
    assert store.identity() == other


def test_close_then_reopen_keeps_points_and_identity(backend: Backend) -> None:
    first = backend.reopenable()
    first.create(IDENTITY)
    first.upsert([make_point("a.md"), make_point("b.md", dense=(0.0, 1.0, 0.0, 0.0))])
    first.close()
    first.close()  # safe twice

    again = backend.reopenable()
    assert again.identity() == IDENTITY
    assert again.count() == 2
    hits = again.query(dense=(0.0, 1.0, 0.0, 0.0), sparse=None, limit=1, prefetch_limit=10)
    assert notes(hits) == ["b.md"]


def test_a_closed_store_refuses_work(store: ChunkStore) -> None:
    store.close()
    with pytest.raises(StoreError):
        store.count()


def test_missing_collection_counts_nothing_and_refuses_searches(backend: Backend) -> None:
    store = backend.store()
    assert store.count() == 0
    assert store.scroll(limit=5) == ([], None)
    with pytest.raises(IndexNotReadyError):
        store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=None, limit=5, prefetch_limit=5)
    with pytest.raises(IndexNotReadyError):
        store.upsert([make_point("a.md")])


# -- writing ---------------------------------------------------------------------------------------


def test_upsert_then_count(store: ChunkStore) -> None:
    store.upsert([make_point("a.md"), make_point("a.md", chunk_index=1), make_point("b.md")])
    assert store.count() == 3


def test_reupsert_of_same_ids_replaces_instead_of_duplicating(store: ChunkStore) -> None:
    store.upsert([make_point("a.md", text="old"), make_point("b.md", text="old")])
    store.upsert([make_point("a.md", text="new"), make_point("b.md", text="new")])
    assert store.count() == 2
    assert {p.payload["content"] for p in scroll_all(store)} == {"new"}


def test_points_without_dense_vector_fit_a_dense_collection(store: ChunkStore) -> None:
    # What indexing does while the embedder is down.
    store.upsert([make_point("with-dense.md"), make_point("sparse-only.md", dense=None, terms={ZEBRA: 1.0})])
    assert store.count() == 2
    keyword = store.query(dense=None, sparse=sparse({ZEBRA: 1.0}), limit=5, prefetch_limit=5)
    assert notes(keyword) == ["sparse-only.md"]
    semantic = store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=None, limit=5, prefetch_limit=5)
    assert notes(semantic) == ["with-dense.md"]


def test_delete_by_note_removes_exactly_that_note(store: ChunkStore) -> None:
    store.upsert(
        [
            make_point("gone.md"),
            make_point("gone.md", chunk_index=1),
            make_point("gone.md.bak"),
            make_point("folder/gone.md"),
        ]
    )
    store.delete_by_note("gone.md")
    assert sorted(notes(scroll_all(store))) == ["folder/gone.md", "gone.md.bak"]


def test_delete_chunks_from_trims_what_a_shorter_version_left(store: ChunkStore) -> None:
    # A note rewritten with fewer chunks: the new ones are written over the old, then the rest is trimmed.
    store.upsert(
        [make_point("n.md", chunk_index=i) for i in range(5)] + [make_point("other.md", chunk_index=3)]
    )
    store.delete_chunks_from("n.md", 2)
    left = sorted((p.payload["note_path"], p.payload["chunk_index"]) for p in scroll_all(store))
    assert left == [("n.md", 0), ("n.md", 1), ("other.md", 3)]


def test_inventory_lists_every_point_with_its_note_index_hash_and_dense_flag(store: ChunkStore) -> None:
    assert store.inventory() == []
    with_dense, without = make_point("a.md", chunk_index=1), make_point("b.md", dense=None)
    store.upsert([with_dense, without])
    entries = sorted(store.inventory(), key=lambda e: e.note_path)
    assert [(e.id, e.note_path, e.chunk_index, e.content_hash, e.has_dense) for e in entries] == [
        (with_dense.id, "a.md", 1, "h", True),
        (without.id, "b.md", 0, "h", False),
    ]


def test_inventory_of_a_keyword_only_index_reports_no_missing_dense(backend: Backend) -> None:
    store = backend.store()
    store.create(IndexIdentity(embedding_model="none", dimension=None))
    store.upsert([make_point("a.md", dense=None)])
    (entry,) = store.inventory()
    assert entry.has_dense  # nothing is missing where no dense vector belongs


def test_note_vectors_give_back_the_stored_dense_vectors_of_that_note_only(store: ChunkStore) -> None:
    # What a rename reuses instead of embedding the note again.
    store.upsert(
        [
            make_point("moved.md", dense=(0.0, 1.0, 0.0, 0.0), text="first"),
            make_point("moved.md", dense=(0.0, 0.0, 1.0, 0.0), chunk_index=1, text="second"),
            make_point("moved.md", dense=None, chunk_index=2, text="keyword only"),
            make_point("other.md", dense=(1.0, 0.0, 0.0, 0.0)),
        ]
    )
    found = {payload["content"]: vector for payload, vector in store.note_vectors("moved.md")}
    assert found == {
        "first": pytest.approx([0.0, 1.0, 0.0, 0.0]),
        "second": pytest.approx([0.0, 0.0, 1.0, 0.0]),
    }
    assert store.note_vectors("missing.md") == []


def test_note_vectors_of_a_keyword_only_collection_are_none(backend: Backend) -> None:
    # A rename in a keyword-only index asks too; qdrant-edge failed on the unknown vector name.
    store = backend.store()
    store.create(KEYWORD_ONLY)
    store.upsert([make_point("moved.md", dense=None)])
    assert store.note_vectors("moved.md") == []


def test_added_dense_vectors_make_a_keyword_point_found_by_meaning_and_keep_the_rest(
    store: ChunkStore,
) -> None:
    # The dense pass: the keyword pass wrote the point, its vector comes minutes later.
    written = make_point("late.md", dense=None, terms={ZEBRA: 1.0}, text="a note")
    store.upsert([written, make_point("other.md", dense=(0.0, 1.0, 0.0, 0.0))])

    store.add_dense([DenseVectors(written.id, (1.0, 0.0, 0.0, 0.0))])

    semantic = store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=None, limit=5, prefetch_limit=5)
    assert notes(semantic)[0] == "late.md"
    keyword = store.query(dense=None, sparse=sparse({ZEBRA: 1.0}), limit=5, prefetch_limit=5)
    assert notes(keyword) == ["late.md"]  # its keyword vector is still there
    exported = {p.id: p for p in store.export()[0]}
    assert exported[written.id].payload == written.payload
    assert exported[written.id].sparse == written.sparse
    assert store.count() == 2
    assert all(entry.has_dense for entry in store.inventory())


def test_dense_vectors_for_a_point_never_written_are_refused_and_create_nothing(store: ChunkStore) -> None:
    store.upsert([make_point("a.md", dense=None)])
    with pytest.raises(StoreError):
        store.add_dense([DenseVectors(str(uuid.uuid4()), (1.0, 0.0, 0.0, 0.0))])
    assert store.count() == 1
    with pytest.raises(StoreError, match="dimensions"):  # checked before anything is written
        store.add_dense([DenseVectors(make_point("a.md").id, (1.0, 0.0))])
    assert [entry.has_dense for entry in store.inventory()] == [False]


# -- searching -------------------------------------------------------------------------------------


def test_dense_query_ranks_the_nearest_first(store: ChunkStore) -> None:
    store.upsert(
        [
            make_point("far.md", dense=(0.0, 0.0, 1.0, 0.0)),
            make_point("near.md", dense=(0.9, 0.1, 0.0, 0.0)),
            make_point("middle.md", dense=(0.5, 0.5, 0.0, 0.0)),
        ]
    )
    hits = store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=None, limit=3, prefetch_limit=10)
    assert notes(hits) == ["near.md", "middle.md", "far.md"]
    assert hits[0].score > hits[1].score > hits[2].score
    assert hits[0].payload["heading_path"] == ["Heading"]


def test_sparse_query_ranks_the_term_match_first(store: ChunkStore) -> None:
    store.upsert(
        [
            make_point("other.md", terms={COMMON: 1.0}),
            make_point("apple.md", terms={APPLE: 1.0, COMMON: 1.0}),
            make_point("more.md", terms={COMMON: 2.0}),
        ]
    )
    hits = store.query(dense=None, sparse=sparse({APPLE: 1.0}), limit=5, prefetch_limit=5)
    assert notes(hits) == ["apple.md"]


def test_sparse_scores_weigh_a_rare_term_above_a_common_one(store: ChunkStore) -> None:
    # Without IDF "common.md" would win on its higher raw weight.
    store.upsert(
        [
            make_point("rare.md", terms={RARE: 1.0}),
            make_point("common.md", terms={COMMON: 1.2}),
            make_point("c1.md", terms={COMMON: 0.1}),
            make_point("c2.md", terms={COMMON: 0.1}),
            make_point("c3.md", terms={COMMON: 0.1}),
        ]
    )
    hits = store.query(dense=None, sparse=sparse({RARE: 1.0, COMMON: 1.0}), limit=2, prefetch_limit=5)
    assert notes(hits) == ["rare.md", "common.md"]


def test_query_with_an_empty_sparse_vector_returns_nothing(store: ChunkStore) -> None:
    store.upsert([make_point("a.md")])
    assert store.query(dense=None, sparse=SparseVector((), ()), limit=5, prefetch_limit=5) == []


def _fusion_corpus(store: ChunkStore) -> None:
    store.upsert(
        [
            make_point("dense-only.md", dense=(1.0, 0.0, 0.0, 0.0), terms={COMMON: 1.0}),
            make_point("both.md", dense=(0.8, 0.6, 0.0, 0.0), terms={ZEBRA: 2.0}),
            make_point("sparse-only.md", dense=(0.0, 0.0, 1.0, 0.0), terms={ZEBRA: 1.0}),
            make_point("neither.md", dense=(0.0, 0.0, 0.0, 1.0), terms={COMMON: 1.0}),
        ]
    )


def test_hybrid_returns_the_union_with_the_point_strong_in_both_first(store: ChunkStore) -> None:
    _fusion_corpus(store)
    hits = store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=sparse({ZEBRA: 1.0}), limit=10, prefetch_limit=2)
    assert notes(hits)[0] == "both.md"
    assert set(notes(hits)) == {"both.md", "dense-only.md", "sparse-only.md"}


@pytest.mark.parametrize("rrf_k", [60, 10])
def test_hybrid_scores_follow_rrf_with_the_given_k(store: ChunkStore, rrf_k: int) -> None:
    # Qdrant ranks from 0: "both.md" is 2nd by dense and 1st by sparse.
    _fusion_corpus(store)
    hits = store.query(
        dense=(1.0, 0.0, 0.0, 0.0), sparse=sparse({ZEBRA: 1.0}), limit=1, prefetch_limit=2, rrf_k=rrf_k
    )
    assert hits[0].score == pytest.approx(1 / (rrf_k + 1) + 1 / rrf_k, rel=1e-4)


@pytest.mark.parametrize(
    ("weights", "order"),
    [
        ((1.0, 1.0), ["both.md", "dense-only.md", "sparse-only.md"]),
        ((1.0, 0.2), ["dense-only.md", "both.md", "sparse-only.md"]),  # dense-only 1/1 > both 1/2 + 0.2/1
        ((0.2, 1.0), ["both.md", "sparse-only.md", "dense-only.md"]),  # sparse-only 1/2 > dense-only 0.2/1
    ],
)
def test_fusion_weights_favour_one_side(
    store: ChunkStore, weights: tuple[float, float], order: list[str]
) -> None:
    _fusion_corpus(store)
    hits = store.query(
        dense=(1.0, 0.0, 0.0, 0.0), sparse=sparse({ZEBRA: 1.0}), limit=3, prefetch_limit=2, rrf_k=1,
        rrf_weights=weights,
    )  # fmt: skip
    assert notes(hits) == order


def test_hybrid_with_an_empty_sparse_vector_still_ranks_by_dense(store: ChunkStore) -> None:
    _fusion_corpus(store)
    hits = store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=SparseVector((), ()), limit=2, prefetch_limit=5)
    assert notes(hits) == ["dense-only.md", "both.md"]


def test_rank_sides_gives_each_sides_ids_and_own_scores_as_the_single_side_queries(store: ChunkStore) -> None:
    _fusion_corpus(store)
    dense, keyword = (1.0, 0.0, 0.0, 0.0), sparse({ZEBRA: 1.0})
    dense_side, keyword_side = store.rank_sides(dense=dense, sparse=keyword, limit=3)
    alone = [
        [(p.id, p.score) for p in store.query(dense=d, sparse=s, limit=3, prefetch_limit=3)]
        for d, s in ((dense, None), (None, keyword))
    ]
    assert [pid for pid, _ in dense_side] == [pid for pid, _ in alone[0]]  # the ids as text, as a hit's
    assert [pid for pid, _ in keyword_side] == [pid for pid, _ in alone[1]]
    assert [s for _, s in dense_side] == pytest.approx([s for _, s in alone[0]], rel=1e-5)
    assert [s for _, s in keyword_side] == pytest.approx([s for _, s in alone[1]], rel=1e-5)
    by_id = store.payloads([pid for pid, _ in dense_side[:2]])  # the third place is a tie at 0
    assert [by_id[pid]["note_path"] for pid, _ in dense_side[:2]] == ["dense-only.md", "both.md"]


def test_rank_sides_gives_the_same_ids_once_the_ids_it_remembers_are_forgotten(
    store: ChunkStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the embedded engine remembers ids' texts up to a bound, then starts again: the answer stays the same
    monkeypatch.setattr(edge_engine, "_ID_TEXTS_KEPT", 1)
    _fusion_corpus(store)
    dense, keyword = (1.0, 0.0, 0.0, 0.0), sparse({ZEBRA: 1.0})
    first = store.rank_sides(dense=dense, sparse=keyword, limit=4)
    assert store.rank_sides(dense=dense, sparse=keyword, limit=4) == first
    ids = {pid for side in first for pid, _ in side}
    assert len(ids) == 4  # the corpus's four chunks, each once
    assert set(store.payloads(list(ids))) == ids  # each a point's own id


def test_rank_sides_respects_the_filter_and_an_empty_keyword_side(store: ChunkStore) -> None:
    _fusion_corpus(store)
    only = PointFilter(note_paths=("both.md", "sparse-only.md"))
    dense_side, keyword_side = store.rank_sides(
        dense=(1.0, 0.0, 0.0, 0.0), sparse=sparse({ZEBRA: 1.0}), limit=10, point_filter=only
    )
    names = store.payloads([pid for pid, _ in dense_side + keyword_side])
    assert {names[pid]["note_path"] for pid, _ in dense_side} == {"both.md", "sparse-only.md"}
    assert {names[pid]["note_path"] for pid, _ in keyword_side} == {"both.md", "sparse-only.md"}
    dense_side, keyword_side = store.rank_sides(
        dense=(1.0, 0.0, 0.0, 0.0), sparse=SparseVector((), ()), limit=2
    )
    assert len(dense_side) == 2
    assert keyword_side == []


def test_payloads_leave_out_ids_no_longer_stored(store: ChunkStore) -> None:
    store.upsert([make_point("kept.md"), make_point("gone.md")])
    ids = {p.payload["note_path"]: p.id for p in scroll_all(store)}
    store.delete_by_note("gone.md")
    found = store.payloads([ids["kept.md"], ids["gone.md"]])
    assert list(found) == [ids["kept.md"]]
    assert found[ids["kept.md"]]["note_path"] == "kept.md"
    assert store.payloads([]) == {}


def _searched(store: ChunkStore, seen: set[str]) -> dict[str, str]:
    """What a keyword search shows now, each found chunk's text by note and index; and a payload read of
    every chunk ever found (`seen`) gives exactly the ones still stored, as the search found them."""
    found = store.query(dense=None, sparse=sparse({COMMON: 1.0}), limit=50, prefetch_limit=50)
    seen.update(p.id for p in found)
    read = store.payloads(sorted(seen))
    assert read == {p.id: p.payload for p in found}
    return {f"{p.payload['note_path']}#{p.payload['chunk_index']}": p.payload["content"] for p in found}


def test_searches_show_what_the_store_holds_after_every_kind_of_write(store: ChunkStore) -> None:
    # the payloads searches read are kept between searches: each write must drop what it changes
    seen: set[str] = set()
    store.upsert([make_point("a.md", chunk_index=i, text=f"a{i} old") for i in range(3)])
    store.upsert([make_point("b.md", text="b old")])
    assert _searched(store, seen) == {
        "a.md#0": "a0 old",
        "a.md#1": "a1 old",
        "a.md#2": "a2 old",
        "b.md#0": "b old",
    }
    store.upsert([make_point("a.md", chunk_index=0, text="a0 new")])  # a note saved again
    assert _searched(store, seen)["a.md#0"] == "a0 new"
    store.delete_chunks_from("a.md", 1)  # ... shorter than before
    assert _searched(store, seen) == {"a.md#0": "a0 new", "b.md#0": "b old"}
    store.delete_by_note("b.md")  # a note deleted
    assert _searched(store, seen) == {"a.md#0": "a0 new"}
    store.upsert([make_point("b.md", text="b back")])  # ... and written again
    assert _searched(store, seen) == {"a.md#0": "a0 new", "b.md#0": "b back"}
    store.create(IDENTITY)  # the collection made anew
    assert _searched(store, seen) == {}


def test_searches_after_warming_show_what_the_store_holds(store: ChunkStore) -> None:
    store.upsert([make_point(f"n{i}.md", text=f"n{i} old") for i in range(30)])
    store.warm()
    store.upsert([make_point("n0.md", text="n0 new")])
    store.delete_by_note("n1.md")
    found = _searched(store, set())
    assert found["n0.md#0"] == "n0 new"
    assert sorted(found) == sorted(f"n{i}.md#0" for i in range(30) if i != 1)
    assert all(text == f"{key.split('.')[0]} old" for key, text in found.items() if key != "n0.md#0")


def test_warming_reads_every_payload_once_within_its_memory(backend: Backend) -> None:
    roomy = backend.store()
    roomy.create(IDENTITY)
    roomy.upsert([make_point(f"n{i}.md") for i in range(30)])
    assert roomy.warm(stop=lambda: True) == 0  # asked to stop before the first read
    assert roomy.warm() == 30
    assert roomy.warm() == 0  # kept already
    tight = backend.keep(QdrantChunkStore(backend.engine(on="tight"), cache_mb=1))
    tight.create(IDENTITY)
    tight.upsert([make_point(f"n{i}.md", text="x" * 100_000) for i in range(30)])
    assert 0 < tight.warm() < 30  # a megabyte holds about ten of these
    assert len(_searched(tight, set())) == 30


def test_warming_hands_every_stored_payload_to_its_page_reader_as_a_copy(store: ChunkStore) -> None:
    # what a search computes from a chunk whatever the question is computed from these at start
    store.upsert([make_point(f"n{i}.md", text=f"n{i} text") for i in range(30)])
    pages: list[list[dict]] = []
    store.warm(stop=lambda: True, each_page=pages.append)
    assert pages == []  # asked to stop before the first read
    store.warm(each_page=pages.append)
    seen = [payload for page in pages for payload in page]
    assert sorted(p["content"] for p in seen) == sorted(f"n{i} text" for i in range(30))
    for payload in seen:
        payload["content"] = "changed by the reader"
    assert set(_searched(store, set()).values()) == {f"n{i} text" for i in range(30)}


def test_warming_beside_a_writer_leaves_no_old_text(store: ChunkStore) -> None:
    store.upsert([make_point(f"n{i}.md", text="before") for i in range(200)])

    def write() -> None:
        for start in range(0, 200, 10):
            store.upsert([make_point(f"n{i}.md", text="after") for i in range(start, start + 10)])

    assert failures_beside_one_writer(store.warm, write) == []
    assert set(_searched(store, set()).values()) == {"after"}


def test_a_payload_read_by_a_caller_cannot_change_what_the_next_search_shows(store: ChunkStore) -> None:
    store.upsert([make_point("a.md", text="as written", tags=("one",))])
    for _ in range(3):  # read from the store, then kept ones
        hit = store.query(dense=None, sparse=sparse({COMMON: 1.0}), limit=5, prefetch_limit=5)[0]
        assert hit.payload["content"] == "as written"
        hit.payload["content"] = "changed by a caller"
        read = store.payloads([hit.id])[hit.id]
        assert read["content"] == "as written"
        read["content"] = "changed by a caller"


def test_keyword_terms_read_again_follow_a_rewrite_and_a_delete(store: ChunkStore) -> None:
    # a hit's terms are kept with its payload between searches: a write drops both
    store.upsert([make_point("a.md", terms={COMMON: 1.0, APPLE: 1.0}), make_point("b.md")])
    ids = [p.id for p in store.query(dense=None, sparse=sparse({COMMON: 1.0}), limit=5, prefetch_limit=5)]
    by_note = {p.payload["note_path"]: p.id for p in scroll_all(store)}
    for _ in range(2):  # read from the store, then kept
        assert store.keyword_terms(ids)[by_note["a.md"]] == frozenset({COMMON, APPLE})
    store.upsert([make_point("a.md", terms={COMMON: 1.0, RARE: 1.0})])
    assert store.keyword_terms(ids)[by_note["a.md"]] == frozenset({COMMON, RARE})
    store.delete_by_note("b.md")
    assert store.keyword_terms(ids) == {by_note["a.md"]: frozenset({COMMON, RARE})}


def test_keyword_terms_are_the_terms_each_point_was_indexed_with(store: ChunkStore) -> None:
    # a hit's confidence counts the question's terms its chunk holds: read as stored, not encoded again
    store.upsert([make_point("fruit.md", terms={APPLE: 0.5, RARE: 2.0}), make_point("gone.md")])
    store.upsert([make_point("plain.md", terms={})])
    ids = {p.payload["note_path"]: p.id for p in scroll_all(store)}
    store.delete_by_note("gone.md")
    found = store.keyword_terms([ids["fruit.md"], ids["gone.md"], ids["plain.md"]])
    assert found == {ids["fruit.md"]: frozenset({APPLE, RARE}), ids["plain.md"]: frozenset()}
    assert store.keyword_terms([]) == {}


def test_dense_query_on_a_keyword_only_collection_explains_itself(backend: Backend) -> None:
    store = backend.store()
    store.create(KEYWORD_ONLY)
    store.upsert([make_point("a.md", dense=None, terms={APPLE: 1.0})])
    assert notes(store.query(dense=None, sparse=sparse({APPLE: 1.0}), limit=5, prefetch_limit=5)) == ["a.md"]
    for keyword_side in (None, sparse({APPLE: 1.0})):
        with pytest.raises(StoreError, match="keyword-only"):
            store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=keyword_side, limit=5, prefetch_limit=5)


def test_dense_query_of_the_wrong_size_explains_itself(store: ChunkStore) -> None:
    store.upsert([make_point("a.md")])
    with pytest.raises(StoreError, match="dimensions"):
        store.query(dense=(1.0, 0.0, 0.0), sparse=None, limit=5, prefetch_limit=5)


def test_a_query_needs_some_vector(store: ChunkStore) -> None:
    with pytest.raises(StoreError):
        store.query(dense=None, sparse=None, limit=5, prefetch_limit=5)


# -- filters ---------------------------------------------------------------------------------------

FILTER_CORPUS = [
    make_point("journal/2026/jan.md", tags=("daily", "work"), date="2026-01-10"),
    make_point("journal/2026/feb.md", tags=("daily",), date="2026-02-01"),
    make_point("journal/2025/dec.md", tags=("daily",), date="2025-12-31"),
    make_point("journalism/press.md", date="2026-01-15"),
    make_point("projects/alpha.md", tags=("work",), date="2026-01-31"),
    make_point("inbox.md"),
]

FILTER_CASES: dict[str, tuple[PointFilter, set[str]]] = {
    "note_paths": (
        PointFilter(note_paths=("inbox.md", "projects/alpha.md")),
        {"inbox.md", "projects/alpha.md"},
    ),
    "folder prefix": (
        PointFilter(folders=("journal/",)),
        {"journal/2026/jan.md", "journal/2026/feb.md", "journal/2025/dec.md"},
    ),
    "nested folder": (PointFilter(folders=("journal/2026",)), {"journal/2026/jan.md", "journal/2026/feb.md"}),
    "any of the folders": (
        PointFilter(folders=("projects", "journal/2025/")),
        {"projects/alpha.md", "journal/2025/dec.md"},
    ),
    "any of the tags": (PointFilter(tags=("work", "unused")), {"journal/2026/jan.md", "projects/alpha.md"}),
    "inclusive date range": (
        PointFilter(date_from="2026-01-10", date_to="2026-01-31"),
        {"journal/2026/jan.md", "journalism/press.md", "projects/alpha.md"},
    ),
    "open-ended date": (PointFilter(date_to="2025-12-31"), {"journal/2025/dec.md"}),
    "combined": (
        PointFilter(folders=("journal",), tags=("daily",), date_from="2026-01-01"),
        {"journal/2026/jan.md", "journal/2026/feb.md"},
    ),
}


@pytest.mark.parametrize("case", list(FILTER_CASES))
def test_filters_restrict_query_count_and_scroll_alike(store: ChunkStore, case: str) -> None:
    point_filter, expected = FILTER_CASES[case]
    store.upsert(FILTER_CORPUS)
    assert set(notes(hybrid(store, point_filter))) == expected
    keyword = store.query(
        dense=None, sparse=sparse({COMMON: 1.0}), limit=50, prefetch_limit=50, point_filter=point_filter
    )
    assert set(notes(keyword)) == expected
    assert store.count(point_filter) == len(expected)
    assert set(notes(scroll_all(store, point_filter))) == expected


def test_an_empty_filter_restricts_nothing(store: ChunkStore) -> None:
    store.upsert(FILTER_CORPUS)
    assert store.count(PointFilter()) == len(FILTER_CORPUS)
    assert len(hybrid(store, PointFilter(folders=("/",)))) == len(FILTER_CORPUS)


# -- paging and concurrency ------------------------------------------------------------------------


def test_scroll_pages_through_every_point_once(store: ChunkStore) -> None:
    store.upsert([make_point(f"n{i}.md") for i in range(7)])
    first, offset = store.scroll(limit=3)
    assert len(first) == 3
    assert offset is not None
    assert all(p.score == 0.0 and p.payload for p in first)
    everything = scroll_all(store, page=3)
    assert len(everything) == 7
    assert len({p.id for p in everything}) == 7


def test_searches_keep_working_while_one_writer_indexes(store: ChunkStore) -> None:
    store.upsert([make_point("seed.md")])

    def search() -> None:
        assert hybrid(store, limit=5)
        store.count(PointFilter(tags=("t",)))
        store.scroll(limit=5)

    def index() -> None:
        for batch in range(20):
            store.upsert([make_point(f"b{batch}/n{i}.md", tags=("t",)) for i in range(10)])
            if batch % 5 == 4:
                store.delete_by_note(f"b{batch}/n0.md")

    assert failures_beside_one_writer(search, index) == []
    assert store.count() == 1 + 200 - 4


# -- export: the points as stored, for a copy to another store ------------------------------------------


def export_all(store: ChunkStore, page: int = 2) -> list[PointRecord]:
    found: list[PointRecord] = []
    offset: str | None = None
    while True:
        batch, offset = store.export(limit=page, offset=offset)
        found.extend(batch)
        if offset is None:
            return found


def test_export_gives_back_every_point_with_its_vectors_and_payload(store: ChunkStore) -> None:
    written = [
        make_point("a.md", dense=(0.0, 1.0, 0.0, 0.0), terms={APPLE: 2.0, COMMON: 0.5}, tags=("x",)),
        make_point("a.md", chunk_index=1, dense=(0.6, 0.8, 0.0, 0.0), terms={RARE: 1.25}),
        make_point("b/c.md", dense=None, terms={ZEBRA: 3.0}, date="2026-03-01", text="keyword only"),
        *[make_point(f"many/{i}.md") for i in range(4)],
    ]
    store.upsert(written)

    exported = {point.id: point for point in export_all(store)}

    assert set(exported) == {point.id for point in written}
    for point in written:
        got = exported[point.id]
        assert got.payload == point.payload
        assert dict(zip(got.sparse.indices, got.sparse.values, strict=True)) == pytest.approx(
            dict(zip(point.sparse.indices, point.sparse.values, strict=True))
        )
        if point.dense is None:
            assert got.dense is None
        else:
            assert got.dense == pytest.approx(point.dense, abs=1e-6)


def test_exported_points_written_to_another_store_answer_the_same(
    backend: Backend, store: ChunkStore
) -> None:
    points = [
        make_point(f"n{i}.md", dense=(1.0, i / 10, 0.0, 0.0), terms={COMMON: 1.0 + i / 10, i + 10: 1.0})
        for i in range(6)
    ]
    store.upsert(points)
    copy = backend.other()
    copy.create(IDENTITY)

    copy.upsert(export_all(store))

    assert copy.count() == store.count() == 6
    for dense, terms in (
        ((1.0, 0.3, 0.0, 0.0), None),
        (None, sparse({13: 1.0})),
        ((0.0, 1.0, 0.0, 0.0), sparse({COMMON: 1.0})),
    ):
        expected = store.query(dense=dense, sparse=terms, limit=6, prefetch_limit=6)
        copied = copy.query(dense=dense, sparse=terms, limit=6, prefetch_limit=6)
        assert [(p.id, p.score) for p in copied] == [(p.id, pytest.approx(p.score)) for p in expected]


def test_export_of_a_missing_collection_is_empty(backend: Backend) -> None:
    assert backend.store().export() == ([], None)


def _asked(store: ChunkStore, questions: list[tuple[float, ...]]) -> list[list[tuple[float, str]]]:
    """Each question's dense answer, hybrid answer and the dense and keyword sides' ranks: scores and ids,
    best first (points of one score in id order: the engine orders a tie as it lays points out)."""
    found = []
    for q in questions:
        dense = store.query(dense=q, sparse=None, limit=20, prefetch_limit=40)
        hybrid = store.query(
            dense=q, sparse=sparse({COMMON: 1.0}), limit=80, prefetch_limit=40
        )  # all: no tie cut
        sides = store.rank_sides(dense=q, sparse=sparse({COMMON: 1.0}), limit=40)
        for ranked in ([(h.id, h.score) for h in dense], [(h.id, h.score) for h in hybrid], *sides):
            found.append(sorted((-round(score, 6), str(i)) for i, score in ranked))
    return found


def test_a_store_laid_out_for_search_answers_as_before(store: ChunkStore) -> None:
    # the embedded engine scans int8 copies of the dense vectors and scores its candidates again with the
    # originals: the same points, the same scores
    rng = random.Random(7)
    vector = lambda: tuple(rng.uniform(-1.0, 1.0) for _ in range(DIM))  # noqa: E731
    store.upsert(
        [make_point(f"n{i}.md", dense=vector(), terms={COMMON: rng.uniform(0.1, 2.0)}) for i in range(400)]
    )
    questions = [vector() for _ in range(25)]
    before = _asked(store, questions)
    store.optimize()
    assert _asked(store, questions) == before
    store.optimize()  # made already: nothing changes
    assert _asked(store, questions) == before
    store.upsert([make_point("new.md", dense=questions[0])])  # written after: found as written
    assert notes(store.query(dense=questions[0], sparse=None, limit=1, prefetch_limit=5)) == ["new.md"]
    store.delete_by_note("n0.md")
    assert "n0.md" not in notes(store.query(dense=questions[1], sparse=None, limit=400, prefetch_limit=400))


def test_an_edge_store_made_before_int8_copies_takes_them_on(tmp_path: Path) -> None:
    # an index built by an earlier version: loaded with this layout, laid out at the next start
    old = tmp_path / "old"
    made = QdrantChunkStore(EdgeEngine(old))
    made.create(IDENTITY)
    made.upsert([make_point(f"n{i}.md", dense=(1.0, i / 50, 0.0, 0.0)) for i in range(50)])
    made.close()
    config_file = next(old.glob("*/edge_config.json"))
    stored = json.loads(config_file.read_text())
    stored["vectors"]["dense"].pop("quantization_config")  # as an earlier version wrote it
    stored.pop("hnsw_config")
    config_file.write_text(json.dumps(stored))

    again = QdrantChunkStore(EdgeEngine(old))
    try:
        before = _asked(again, [(1.0, 0.2, 0.0, 0.0)])
        again.optimize()
        assert _asked(again, [(1.0, 0.2, 0.0, 0.0)]) == before
        assert "quantization_config" in json.loads(config_file.read_text())["vectors"]["dense"]
    finally:
        again.close()


# -- adapter-specific failure modes ----------------------------------------------------------------


def test_edge_store_held_by_another_owner_is_unavailable(tmp_path: Path) -> None:
    owner = QdrantChunkStore(EdgeEngine(tmp_path))
    owner.create(IDENTITY)
    intruder = QdrantChunkStore(EdgeEngine(tmp_path))
    try:
        assert intruder.identity() == IDENTITY  # reading the record needs no lock
        with pytest.raises(IndexUnavailableError):
            intruder.count()
        with pytest.raises(IndexUnavailableError):
            intruder.create(IDENTITY)  # must not delete the files under the owner
        assert owner.count() == 0
    finally:
        intruder.close()
        owner.close()


def test_client_store_without_a_server_is_unavailable() -> None:
    assert_unavailable_without_a_server(
        QdrantChunkStore,
        lambda store: store.identity(),
        lambda store: store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=None, limit=5, prefetch_limit=5),
    )
