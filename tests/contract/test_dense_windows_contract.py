"""Dense windows (an index whose identity has `dense_windows`): both adapters score a chunk by its best
vector, its own or one of its windows', keep the windows through export, and record the layout.

Run on both engines (conftest.py).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.application.ports import ChunkStore
from backend.domain.models import DenseVectors, IndexIdentity, PointRecord
from backend.infrastructure.qdrant.chunk_store import QdrantChunkStore
from tests.contract.conftest import Backend
from tests.contract.test_chunk_store_contract import COMMON, make_point, notes, sparse

WINDOWED = IndexIdentity(embedding_model="test-model", dimension=4, dense_windows=64)
QUERY = (1.0, 0.0, 0.0, 0.0)
STORE = QdrantChunkStore  # what the `backend` fixture builds (conftest.py)
IDENTITY = WINDOWED  # what the `store` fixture is created with


def windowed(note: str, dense: tuple[float, ...], *windows: tuple[float, ...], text: str = "") -> PointRecord:
    return replace(make_point(note, dense=dense, text=text), windows=windows)


def test_the_layout_is_recorded_with_the_identity(backend: Backend) -> None:
    store = backend.reopenable()
    store.create(WINDOWED)
    store.close()
    stored = backend.reopenable().identity()
    assert stored == WINDOWED
    assert not stored.matches(replace(WINDOWED, dense_windows=0))  # an older index rebuilds, never mixes


def test_a_chunk_scores_by_its_best_window(store: ChunkStore) -> None:
    # The whole chunk points elsewhere, but one of its messages is exactly what is asked about.
    store.upsert(
        [
            windowed("chat.md", (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), QUERY),
            windowed("prose.md", (0.8, 0.6, 0.0, 0.0)),  # one block: its own vector only
            windowed("elsewhere.md", (0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 1.0, 0.0)),
        ]
    )
    hits = store.query(dense=QUERY, sparse=None, limit=3, prefetch_limit=10)
    assert notes(hits) == ["chat.md", "prose.md", "elsewhere.md"]
    assert hits[0].score == pytest.approx(1.0)
    assert hits[1].score == pytest.approx(0.8)


def test_hybrid_fuses_the_best_window_with_the_keyword_side(store: ChunkStore) -> None:
    store.upsert(
        [
            windowed("chat.md", (0.0, 1.0, 0.0, 0.0), QUERY),
            windowed("prose.md", (0.6, 0.8, 0.0, 0.0)),
            replace(windowed("keyword.md", (0.0, 0.0, 1.0, 0.0)), sparse=sparse({COMMON: 2.0})),
        ]
    )
    hits = store.query(dense=QUERY, sparse=sparse({COMMON: 1.0}), limit=3, prefetch_limit=10, rrf_k=2)
    # keyword ranks keyword.md first and the other two level; the window puts chat.md above prose.md
    assert notes(hits).index("chat.md") < notes(hits).index("prose.md")


def test_export_keeps_the_windows_and_note_vectors_give_the_chunk_vector(store: ChunkStore) -> None:
    point = windowed("chat.md", (0.0, 1.0, 0.0, 0.0), (0.0, 0.0, 1.0, 0.0), QUERY, text="a chat")
    store.upsert([point])

    [exported], _ = store.export()

    assert exported.dense == pytest.approx(point.dense)
    assert [list(w) for w in exported.windows] == [pytest.approx(list(w)) for w in point.windows]
    assert [vector for _, vector in store.note_vectors("chat.md")] == [pytest.approx([0.0, 1.0, 0.0, 0.0])]


def test_windows_added_after_the_keyword_write_score_as_if_written_with_it(store: ChunkStore) -> None:
    chat = make_point("chat.md", dense=None, text="a chat")
    store.upsert([chat, windowed("prose.md", (0.8, 0.6, 0.0, 0.0))])

    store.add_dense([DenseVectors(chat.id, (0.0, 1.0, 0.0, 0.0), ((0.0, 0.0, 1.0, 0.0), QUERY))])

    hits = store.query(dense=QUERY, sparse=None, limit=2, prefetch_limit=10)
    assert notes(hits) == ["chat.md", "prose.md"]
    assert hits[0].score == pytest.approx(1.0)
    [exported] = [p for p in store.export()[0] if p.id == chat.id]
    assert len(exported.windows) == 2
