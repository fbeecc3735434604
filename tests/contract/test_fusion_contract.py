"""Fusion inside Qdrant equals `backend.domain.ranking.fusion` over the two single-side lists, on both engines
(edge on a temp dir, QdrantClient(":memory:")): the offline tuning grid and the shipped query rank alike."""

from __future__ import annotations

import random
import uuid
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from backend.application.ports import ChunkStore
from backend.domain.index.payload import chunk_payload
from backend.domain.models import Chunk, IndexIdentity, ParsedNote, PointRecord, ScoredPoint, SparseVector
from backend.domain.ranking import fusion
from backend.infrastructure.qdrant.chunk_store import QdrantChunkStore
from backend.infrastructure.qdrant.client_engine import ClientEngine
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from tests.contract.conftest import Backend

DIM = 8
STORE = QdrantChunkStore  # what the `backend` fixture builds (conftest.py)
TERMS = 12


def _corpus(seed: int = 7, size: int = 60) -> list[PointRecord]:
    rng = random.Random(seed)
    points = []
    for i in range(size):
        note = ParsedNote(path=f"n{i:02d}.md", title=f"n{i:02d}", body="", body_start_line=1)
        chunk = Chunk(note.path, 0, f"text {i}", ("H",), start_line=1, end_line=2)
        terms = sorted(rng.sample(range(1, TERMS), rng.randint(1, 4)))
        points.append(
            PointRecord(
                id=str(uuid.uuid5(uuid.NAMESPACE_URL, note.path)),
                sparse=SparseVector(tuple(terms), tuple(round(rng.uniform(0.2, 3.0), 3) for _ in terms)),
                payload=chunk_payload(note, chunk, mtime=1.0, content_hash="h"),
                dense=tuple(rng.uniform(-1, 1) for _ in range(DIM)),
            )
        )
    return points


@pytest.fixture
def store(backend: Backend[ChunkStore]) -> ChunkStore:
    built = backend.store()
    built.create(IndexIdentity(embedding_model="test-model", dimension=DIM))
    built.upsert(_corpus())
    return built


QUERY_DENSE = (0.9, -0.2, 0.4, 0.1, -0.5, 0.3, 0.0, 0.2)
QUERY_SPARSE = SparseVector((2, 5, 9), (1.0, 0.7, 1.4))
DEPTH = 20


def _sides(store: ChunkStore) -> list[list[tuple[str, float]]]:
    dense = store.query(dense=QUERY_DENSE, sparse=None, limit=DEPTH, prefetch_limit=DEPTH)
    keyword = store.query(dense=None, sparse=QUERY_SPARSE, limit=DEPTH, prefetch_limit=DEPTH)
    return [[(p.id, p.score) for p in dense], [(p.id, p.score) for p in keyword]]


def _ranked(scores: dict[str, float]) -> list[tuple[str, float]]:
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


def _engine(points: list[ScoredPoint]) -> list[tuple[str, float]]:
    return sorted(((p.id, p.score) for p in points), key=lambda item: (-item[1], item[0]))


@pytest.mark.parametrize(("k", "weights"), [(5, (1.0, 1.0)), (2, (0.5, 1.0)), (60, (1.0, 0.3))])
def test_weighted_rrf_in_the_engine_is_the_domain_rrf(
    store: ChunkStore, k: int, weights: tuple[float, float]
) -> None:
    fused = store.query(
        dense=QUERY_DENSE, sparse=QUERY_SPARSE, limit=40, prefetch_limit=DEPTH, rrf_k=k, rrf_weights=weights
    )
    expected = _ranked(fusion.rrf(_sides(store), weights, k))
    got = _engine(fused)
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-4)


def test_dbsf_in_the_engine_is_the_domain_dbsf(store: ChunkStore) -> None:
    fused = store.query(dense=QUERY_DENSE, sparse=QUERY_SPARSE, limit=40, prefetch_limit=DEPTH, fusion="dbsf")
    expected = _ranked(fusion.dbsf(_sides(store)))
    got = _engine(fused)
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-3, abs=1e-4)


def test_score_fusion_ranks_alike_on_both_engines(tmp_path: Path) -> None:
    """`FUSION=score` fuses each side's list outside the engine (`rank_sides`): both engines hand the same
    lists, so the same fused ranking, whatever they store the ids as."""
    rankings = []
    for built in (
        QdrantChunkStore(EdgeEngine(tmp_path / "edge")),
        QdrantChunkStore(ClientEngine(QdrantClient(":memory:"))),
    ):
        built.create(IndexIdentity(embedding_model="test-model", dimension=DIM))
        built.upsert(_corpus())
        try:
            sides = built.rank_sides(dense=QUERY_DENSE, sparse=QUERY_SPARSE, limit=DEPTH)
            fused = fusion.top_scaled(sides, (0.3, 0.7))
            paths = built.payloads(list(fused))
            rankings.append(
                [(paths[i]["note_path"], s) for i, s in sorted(fused.items(), key=lambda x: -x[1])]
            )
        finally:
            built.close()
    edge, client = rankings
    assert len(edge) > DEPTH  # the two sides differ, so the union is longer than either
    assert [p for p, _ in edge] == [p for p, _ in client]
    assert [s for _, s in edge] == pytest.approx([s for _, s in client], rel=1e-5)
