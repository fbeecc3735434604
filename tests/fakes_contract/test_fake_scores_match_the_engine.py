"""The in-memory chunk store scores as the embedded engine does, on a random corpus: cosine for dense, IDF
over the whole collection for keywords (also under a filter), and the fusions. The contract cases check
rankings on a handful of points; this checks the numbers a threshold or a fusion weight acts on."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator

import pytest

from backend.application.ports import ChunkStore
from backend.domain.index.payload import chunk_payload
from backend.domain.models import Chunk, IndexIdentity, ParsedNote, PointFilter, PointRecord, SparseVector
from backend.infrastructure.qdrant.chunk_store import QdrantChunkStore
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from tests.fakes import InMemoryChunkStore

DIM = 6
IDENTITY = IndexIdentity(embedding_model="test-model", dimension=DIM)


def corpus(seed: int = 3, size: int = 40) -> list[PointRecord]:
    rng = random.Random(seed)
    points = []
    for i in range(size):
        path = f"{'ab'[i % 2]}/n{i:02d}.md"
        note = ParsedNote(path=path, title=path, body="", body_start_line=1, tags=(f"t{i % 3}",))
        terms = sorted(rng.sample(range(1, 15), rng.randint(1, 5)))
        points.append(
            PointRecord(
                id=str(uuid.uuid5(uuid.NAMESPACE_URL, path)),
                sparse=SparseVector(tuple(terms), tuple(round(rng.uniform(0.2, 3.0), 3) for _ in terms)),
                payload=chunk_payload(note, Chunk(path, 0, "", (), 1, 1), mtime=1.0, content_hash="h"),
                dense=None if i % 7 == 0 else tuple(rng.uniform(-1, 1) for _ in range(DIM)),
            )
        )
    return points


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ChunkStore, ChunkStore]]:
    engine, fake = QdrantChunkStore(EdgeEngine(tmp_path_factory.mktemp("edge"))), InMemoryChunkStore()
    for store in (engine, fake):
        store.create(IDENTITY)
        store.upsert(corpus())
    yield engine, fake
    engine.close()


DENSE = (0.3, -0.8, 0.1, 0.5, 0.0, -0.2)
SPARSE = SparseVector((2, 5, 11), (1.0, 1.0, 1.0))
QUERIES = {
    "dense": {"dense": DENSE, "sparse": None},
    "keyword": {"dense": None, "sparse": SPARSE},
    "keyword in a folder": {"dense": None, "sparse": SPARSE, "point_filter": PointFilter(folders=("a",))},
    "rrf": {"dense": DENSE, "sparse": SPARSE, "rrf_k": 2, "rrf_weights": (0.3, 0.7)},
    "dbsf": {"dense": DENSE, "sparse": SPARSE, "fusion": "dbsf"},
    "rrf under a tag": {"dense": DENSE, "sparse": SPARSE, "point_filter": PointFilter(tags=("t1",))},
}


@pytest.mark.parametrize("name", list(QUERIES))
def test_the_fake_gives_the_engines_scores(stores: tuple[ChunkStore, ChunkStore], name: str) -> None:
    engine, fake = (
        sorted((p.id, p.score) for p in store.query(limit=15, prefetch_limit=10, **QUERIES[name]))  # type: ignore[arg-type]
        for store in stores
    )
    assert [i for i, _ in fake] == [i for i, _ in engine]
    assert [s for _, s in fake] == pytest.approx([s for _, s in engine], rel=1e-4, abs=1e-5)


def test_the_fake_ranks_each_side_as_the_engine(stores: tuple[ChunkStore, ChunkStore]) -> None:
    engine, fake = (store.rank_sides(dense=DENSE, sparse=SPARSE, limit=12) for store in stores)
    for engine_side, fake_side in zip(engine, fake, strict=True):
        assert {str(i): s for i, s in fake_side} == pytest.approx(
            {str(i): s for i, s in engine_side}, rel=1e-4
        )
