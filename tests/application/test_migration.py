"""`migrate_index`: the example vault indexed in the embedded store, moved to the qdrant-client adapter
(`QdrantClient(":memory:")`, the stand-in for a Qdrant server) without a single embedding call, and searched
there with the same results, links and notes.

What "the same results" can mean: the copy has the same vectors and payloads, so every score is the same,
but Qdrant orders *exactly equal* scores by where points sit in its storage, which a copy changes (and which
qdrant-edge and qdrant-client's local mode handle differently). Our search breaks such ties itself (note
path, then chunk), so dense and keyword answers are identical, chunk for chunk; a hybrid answer is fused
inside Qdrant from the two ranked lists, so where one of them has a tie, the tied chunks may swap ranks and
their fused scores. The hybrid check is therefore exact for every query whose ranked lists have no ties,
and for the others every chunk outside a tie keeps its fused score. The fake embedder spreads its weights so
that dense ties are as rare as with a real model; keyword ties (chunks matching only through their note's
title) are real and stay.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from backend.application.indexing.indexer import build_index
from backend.application.indexing.migration import migrate_index
from backend.application.ports import IndexCatalog
from backend.application.search.service import SearchService
from backend.config import EXAMPLE_VAULT
from backend.domain.errors import IndexNotReadyError, MigrationTargetNotEmptyError, VaultMismatchError
from backend.domain.models import IndexIdentity, ScoredPoint, SearchMode
from backend.domain.text.sparse import SparseEncoder
from backend.infrastructure.index_catalog import ClientIndexCatalog, EdgeIndexCatalog
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.application.fakes import FakeEmbedder

VAULT = str(EXAMPLE_VAULT.resolve())  # the vault the index of `built` belongs to

QUERIES = [case["query"] for case in json.loads(Path("tests/data/example_vault_queries.json").read_text())]
QUERIES += ["Sreenivas", "pgloader cutover", "rasam recipe"]
DEPTH = 100  # candidates per side, as SearchOptions.prefetch_limit
Answer = list[tuple[str, str, float]]  # (note path, chunk id, score), best first


class Index:
    """The use cases over one catalog, as the service wires them."""

    def __init__(self, catalog: IndexCatalog, embedder: FakeEmbedder) -> None:
        self.encoder = SparseEncoder()
        self.embedder = embedder
        self.catalog = catalog
        self.index, self.indexer = build_index(
            catalog=catalog,
            embedder=embedder,
            vault=FileSystemVault(EXAMPLE_VAULT),
            parser=parse_note,
            encoder=self.encoder,
            identity=IndexIdentity(embedder.model_name, embedder.dimension, self.encoder.fingerprint),
            # every note written once: Qdrant's keyword (IDF) statistics count deleted points until it
            # optimises, and the copy has none, so a source rewritten by keyword-first would score slightly
            # differently from its copy (see docs/deployment.md)
            keyword_first_min=10**6,
        )
        self.search = SearchService(embedder=embedder, encoder=self.encoder, index=self.index)

    def answers(self, mode: SearchMode) -> dict[str, tuple[Answer, list[tuple[str, str, int]]]]:
        """Per query: the top 10 and the related notes, as `POST /search` would return them."""
        found = {}
        for query in QUERIES:
            outcome = self.search.search(query, top_k=10, mode=mode, include_related=True)
            assert outcome.warnings == []
            hits = [(hit.payload["note_path"], hit.id, hit.score) for hit in outcome.hits]
            found[query] = (hits, [(r.path, r.relationship, r.link_count) for r in outcome.related])
        return found

    def sides(self, query: str) -> tuple[list[ScoredPoint], list[ScoredPoint], list[ScoredPoint]]:
        """The dense and keyword lists a hybrid query fuses, and the fused list, straight from the store."""
        dense, sparse = self.embedder.embed_query(query), self.encoder.encode_query(query)
        with self.index.serving() as live:
            return (
                live.store.query(dense=dense, sparse=None, limit=DEPTH, prefetch_limit=DEPTH),
                live.store.query(dense=None, sparse=sparse, limit=DEPTH, prefetch_limit=DEPTH),
                live.store.query(dense=dense, sparse=sparse, limit=2 * DEPTH, prefetch_limit=DEPTH, rrf_k=5),
            )

    def graph_picture(self) -> dict[str, Any]:
        with self.index.serving() as live:  # the stores themselves, to compare everything they hold
            notes, links = live.graph_store.all_notes(), live.graph_store.all_links()
        return {
            "notes": notes,
            "links": links,
            "counts": self.index.link_counts(),
            "ledger links": self.index.note_links("Finance/Money with Sreenivas.md"),
            "dense_pending": self.index.dense_pending,
            "chunks": self.index.chunk_count(),
        }

    def picture(self) -> dict[str, Any]:
        """Everything the comparison needs, read while the index is open."""
        return {
            "graph": self.graph_picture(),
            "answers": {mode: self.answers(mode) for mode in SearchMode},
            "sides": {query: self.sides(query) for query in QUERIES},
        }

    def close(self) -> None:
        self.index.close()
        self.catalog.close()


def same_answer(before: Answer, after: Answer) -> bool:
    return [(p, c) for p, c, _ in before] == [(p, c) for p, c, _ in after] and all(
        a == pytest.approx(b, rel=1e-5) for (_, _, a), (_, _, b) in zip(before, after, strict=True)
    )


def tied(points: list[ScoredPoint]) -> set[str]:
    """Chunks whose score another chunk of the list has exactly: Qdrant's order among them is its own."""
    seen: dict[float, list[str]] = {}
    for point in points:
        seen.setdefault(point.score, []).append(point.id)
    return {chunk for chunks in seen.values() if len(chunks) > 1 for chunk in chunks}


def assert_same_results(before: dict[str, Any], after: dict[str, Any]) -> int:
    """Dense and keyword: identical. Hybrid: identical where no side has a tie, else identical outside the
    ties. Returns how many queries were checked exactly in hybrid mode."""
    for mode in (SearchMode.DENSE, SearchMode.KEYWORD):
        for query in QUERIES:
            hits, related = before["answers"][mode][query]
            hits_after, related_after = after["answers"][mode][query]
            assert same_answer(hits, hits_after), (mode.value, query)
            assert related == related_after, (mode.value, query)
    exact = 0
    for query in QUERIES:
        dense, keyword, fused = before["sides"][query]
        ties = tied(dense) | tied(keyword)
        hits, related = before["answers"][SearchMode.HYBRID][query]
        hits_after, related_after = after["answers"][SearchMode.HYBRID][query]
        if not ties:
            exact += 1
            assert same_answer(hits, hits_after), ("hybrid", query)
            assert related == related_after, ("hybrid", query)
            continue
        fused_after = {p.id: p.score for p in after["sides"][query][2]}
        for point in fused:
            if point.id not in ties:
                assert fused_after.get(point.id) == pytest.approx(point.score, rel=1e-5), ("hybrid", query)
    return exact


@pytest.fixture
def embedder() -> FakeEmbedder:
    return FakeEmbedder(dimension=64, spread=True)


@pytest.fixture
def built(tmp_path: Path, embedder: FakeEmbedder) -> dict[str, Any]:
    """The example vault indexed in the embedded store: what it answers and holds (the store is closed)."""
    source = Index(EdgeIndexCatalog(tmp_path / "edge"), embedder)
    try:
        assert source.index.open() is True
        source.indexer.sync()
        return source.picture()
    finally:
        source.close()


@pytest.fixture
def server() -> Iterator[QdrantClient]:
    client = QdrantClient(":memory:")
    yield client
    client.close()


def test_migrating_to_the_client_adapter_keeps_every_answer_without_embedding(
    tmp_path: Path, embedder: FakeEmbedder, built: dict[str, Any], server: QdrantClient
) -> None:
    embedded_before = (embedder.calls, embedder.texts_embedded)
    seen: list[tuple[str, int, int]] = []

    report = migrate_index(
        EdgeIndexCatalog(tmp_path / "edge"),
        ClientIndexCatalog(server),
        vault=VAULT,
        progress=lambda phase, done, total: seen.append((phase, done, total)),
    )

    chunks = built["graph"]["chunks"]
    assert (report.chunks, report.dense_chunks) == (chunks, chunks)
    assert (report.notes, report.links) == (len(built["graph"]["notes"]), len(built["graph"]["links"]))
    assert ("chunks", chunks, chunks) in seen
    assert seen[-1] == ("notes", report.notes, report.notes)
    target = Index(ClientIndexCatalog(server), embedder)
    try:
        assert target.index.open() is False  # a complete index with the same identity: nothing to build
        assert not target.index.model_mismatch
        assert target.index.generation == report.target_generation
        after = target.picture()
        aliases = {a.alias_name for a in server.get_aliases().aliases}
    finally:
        target.close()
    assert (embedder.calls, embedder.texts_embedded) == embedded_before  # no document embedded again
    assert after["graph"] == built["graph"]  # every note record and link, counts, pending dense
    assert assert_same_results(built, after) >= 2  # queries whose hybrid answer was checked exactly
    assert aliases == {"obsidian_chunks", "obsidian_notes", "obsidian_links"}


def test_a_second_migration_refuses_a_target_that_serves_an_index(
    tmp_path: Path, built: dict[str, Any], server: QdrantClient, embedder: FakeEmbedder
) -> None:
    first = migrate_index(EdgeIndexCatalog(tmp_path / "edge"), ClientIndexCatalog(server), vault=VAULT)

    with pytest.raises(MigrationTargetNotEmptyError) as refused:
        migrate_index(EdgeIndexCatalog(tmp_path / "edge"), ClientIndexCatalog(server), vault=VAULT)
    assert first.target_generation in refused.value.detail
    assert "--replace" in refused.value.suggestion
    assert ClientIndexCatalog(server).active() == first.target_generation  # untouched

    replaced = migrate_index(
        EdgeIndexCatalog(tmp_path / "edge"), ClientIndexCatalog(server), vault=VAULT, replace=True
    )
    assert replaced.replaced == first.target_generation
    catalog = ClientIndexCatalog(server)
    assert catalog.generations() == [replaced.target_generation]  # the replaced copy is gone
    target = Index(catalog, embedder)
    try:
        target.index.open()
        assert target.graph_picture() == built["graph"]
    finally:
        target.close()


def test_no_migration_replaces_the_index_of_another_vault(
    tmp_path: Path, built: dict[str, Any], server: QdrantClient
) -> None:
    first = migrate_index(EdgeIndexCatalog(tmp_path / "edge"), ClientIndexCatalog(server), vault=VAULT)
    assert ClientIndexCatalog(server).vault_owner() == VAULT  # the service opening it finds it its own

    for replace in (False, True):  # --replace overwrites this vault's copy, never another vault's
        with pytest.raises(VaultMismatchError) as refused:
            migrate_index(
                EdgeIndexCatalog(tmp_path / "edge"),
                ClientIndexCatalog(server),
                vault="/other",
                replace=replace,
            )
        assert VAULT in refused.value.detail
        assert "--replace" not in refused.value.suggestion
    assert ClientIndexCatalog(server).active() == first.target_generation  # untouched


def test_nothing_to_migrate_is_said_plainly(tmp_path: Path, server: QdrantClient) -> None:
    with pytest.raises(IndexNotReadyError, match="no index to migrate"):
        migrate_index(EdgeIndexCatalog(tmp_path / "empty"), ClientIndexCatalog(server), vault=VAULT)
    assert server.get_collections().collections == []
