"""One behaviour contract for every `IndexCatalog` adapter, run against real stores.

edge: `EdgeIndexCatalog` on a temp directory. client: `ClientIndexCatalog` on `QdrantClient(":memory:")`,
and on `QdrantClient(path=...)` where a case needs to reopen the same data.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from backend.application.ports import ChunkStore, GraphStore
from backend.domain.errors import IndexCorruptedError, IndexUnavailableError
from backend.domain.index.payload import chunk_payload
from backend.domain.links import LinkKind, LinkRecord, NoteRecord
from backend.domain.models import Chunk, IndexIdentity, ParsedNote, PointRecord, SparseVector
from backend.infrastructure.index_catalog import ClientIndexCatalog, EdgeIndexCatalog
from backend.infrastructure.qdrant.chunk_store import QdrantChunkStore
from backend.infrastructure.qdrant.client_engine import ClientEngine
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from backend.infrastructure.qdrant.graph_store import QdrantGraphStore

Catalog = EdgeIndexCatalog | ClientIndexCatalog

IDENTITY = IndexIdentity(embedding_model="test-model", dimension=4)
COMMON = 1  # sparse term every point carries, so a keyword query for it finds every note


class Backend:
    """Builds catalogs (and, for the legacy layout, stores the pre-catalog way) of one adapter kind."""

    def __init__(self, kind: str, tmp_path: Path) -> None:
        self.kind = kind
        self._root = tmp_path / "store"
        self._local = tmp_path / "local"
        self._catalogs: list[Catalog] = []
        self._stores: list[ChunkStore | GraphStore] = []

    def catalog(self) -> Catalog:
        if self.kind == "edge":
            return self._keep(EdgeIndexCatalog(self._root))
        return self._keep(ClientIndexCatalog(QdrantClient(":memory:")))

    def reopenable(self) -> Catalog:
        """A catalog on data that outlives it; close the previous one on the same data first."""
        if self.kind == "edge":
            return self._keep(EdgeIndexCatalog(self._root))
        return self._keep(ClientIndexCatalog(QdrantClient(path=str(self._local))))

    def sharing(self, *bases: str) -> list[Catalog]:
        """Catalogs of different bases on one store directory / one client."""
        if self.kind == "edge":
            return [self._keep(EdgeIndexCatalog(self._root, base=base)) for base in bases]
        client = QdrantClient(":memory:")
        return [self._keep(ClientIndexCatalog(client, base=base)) for base in bases]

    def legacy_stores(self) -> tuple[ChunkStore, GraphStore]:
        """Stores built as the service built them before catalogs existed, on the reopenable data."""
        if self.kind == "edge":
            return self.track(
                QdrantChunkStore(EdgeEngine(self._root), "obsidian_chunks"),
                QdrantGraphStore(EdgeEngine(self._root)),
            )
        client = QdrantClient(path=str(self._local))  # one client: local mode locks its folder
        return self.track(
            QdrantChunkStore(ClientEngine(client), "obsidian_chunks"), QdrantGraphStore(ClientEngine(client))
        )

    def track(self, store: ChunkStore, graph: GraphStore) -> tuple[ChunkStore, GraphStore]:
        self._stores += [store, graph]
        return store, graph

    def _keep(self, catalog: Catalog) -> Catalog:
        self._catalogs.append(catalog)
        return catalog

    def close_all(self) -> None:
        for opened in self._stores:
            opened.close()
        for catalog in self._catalogs:
            catalog.close()


@pytest.fixture(params=["edge", "client"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    built = Backend(request.param, tmp_path)
    yield built
    built.close_all()


# -- building generations --------------------------------------------------------------------------


def point(note_path: str) -> PointRecord:
    note = ParsedNote(path=note_path, title=note_path, body="text", body_start_line=1)
    chunk = Chunk(note_path, 0, "text", ("Heading",), start_line=1, end_line=3)
    return PointRecord(
        id=str(uuid.uuid5(uuid.NAMESPACE_URL, note_path)),
        sparse=SparseVector((COMMON,), (1.0,)),
        payload=chunk_payload(note, chunk, mtime=1.0, content_hash="h"),
        dense=(1.0, 0.0, 0.0, 0.0),
    )


def fill(store: ChunkStore, graph: GraphStore, paths: Sequence[str]) -> None:
    """Create the three collections and index `paths`, each note linking to the next."""
    store.create(IDENTITY)
    graph.ensure()
    store.upsert([point(path) for path in paths])
    for position, path in enumerate(paths):
        target = paths[(position + 1) % len(paths)]
        link = LinkRecord(
            source=path,
            position=0,
            target=target,
            kind=LinkKind.WIKILINK,
            line=1,
            text=None,
            anchor=None,
            resolved_path=target,
            is_attachment=False,
        )
        graph.put_note(NoteRecord(path=path, title=path), [link])


def build(
    backend: Backend, catalog: Catalog, generation: str, paths: Sequence[str]
) -> tuple[ChunkStore, GraphStore]:
    store, graph = backend.track(*catalog.open(generation))
    fill(store, graph, paths)
    return store, graph


def built_and_active(backend: Backend, catalog: Catalog, paths: Sequence[str]) -> str:
    """A new generation holding `paths`, made the active one."""
    generation = catalog.new_generation()
    build(backend, catalog, generation, paths)
    catalog.activate(generation)
    return generation


def active_and_closed(catalog: Catalog, paths: Sequence[str]) -> str:
    """A new generation holding `paths`, made the active one; its stores are closed again."""
    generation = catalog.new_generation()
    store, graph = catalog.open(generation)
    try:
        fill(store, graph, paths)
        catalog.activate(generation)
    finally:
        close(store, graph)
    return generation


def searched(store: ChunkStore) -> list[str]:
    """The notes a keyword search for the common term finds, sorted."""
    hits = store.query(dense=None, sparse=SparseVector((COMMON,), (1.0,)), limit=50, prefetch_limit=50)
    return sorted(hit.payload["note_path"] for hit in hits)


def graph_notes(graph: GraphStore) -> list[str]:
    return [note.path for note in graph.all_notes()]


def reopened(backend: Backend, catalog: Catalog, generation: str) -> tuple[ChunkStore, GraphStore]:
    """Fresh stores of `generation`, as the next start of the service would open them."""
    return backend.track(*catalog.open(generation))


def close(*opened: ChunkStore | GraphStore) -> None:
    for one in opened:
        one.close()


# -- the contract ----------------------------------------------------------------------------------


def test_empty_catalog_has_no_index(backend: Backend) -> None:
    catalog = backend.catalog()
    assert catalog.active() is None
    assert catalog.generations() == []


def test_built_generation_serves_once_activated(backend: Backend) -> None:
    catalog = backend.catalog()
    generation = catalog.new_generation()
    store, graph = build(backend, catalog, generation, ["a.md", "b.md"])
    assert catalog.active() is None  # filling a generation does not switch to it
    catalog.activate(generation)
    assert catalog.active() == generation
    assert catalog.generations() == [generation]
    assert searched(store) == ["a.md", "b.md"]
    assert [link.resolved_path for link in graph.outlinks("a.md")] == ["b.md"]


def test_rebuild_beside_the_serving_generation_then_switch(backend: Backend) -> None:
    catalog = backend.catalog()
    first = catalog.new_generation()
    old_store, old_graph = build(backend, catalog, first, ["old.md"])
    catalog.activate(first)

    second = catalog.new_generation()
    assert second != first
    new_store, new_graph = build(backend, catalog, second, ["new-a.md", "new-b.md"])
    assert searched(old_store) == ["old.md"]  # the serving generation answers, untouched by the rebuild
    assert catalog.active() == first

    catalog.activate(second)
    assert catalog.active() == second
    assert searched(old_store) == ["old.md"]  # searches still running on it finish
    close(old_store, old_graph)
    catalog.drop(first)

    assert catalog.generations() == [second]
    assert searched(new_store) == ["new-a.md", "new-b.md"]
    close(new_store, new_graph)
    store, graph = reopened(backend, catalog, second)
    assert store.count() == 2
    assert searched(store) == ["new-a.md", "new-b.md"]
    assert graph_notes(graph) == ["new-a.md", "new-b.md"]


def test_legacy_layout_is_g0_and_can_be_replaced(backend: Backend) -> None:
    legacy_store, legacy_graph = backend.legacy_stores()
    fill(legacy_store, legacy_graph, ["legacy.md"])
    close(legacy_store, legacy_graph)

    catalog = backend.reopenable()
    assert catalog.active() == "g0"
    assert catalog.generations() == ["g0"]
    store, graph = reopened(backend, catalog, "g0")
    assert searched(store) == ["legacy.md"]
    assert graph_notes(graph) == ["legacy.md"]
    with pytest.raises(ValueError, match="active"):
        catalog.drop("g0")

    generation = catalog.new_generation()
    assert generation == "g1"
    new_store, new_graph = build(backend, catalog, generation, ["fresh.md"])
    catalog.activate(generation)
    assert catalog.active() == "g1"
    close(store, graph)
    catalog.drop("g0")

    assert catalog.generations() == ["g1"]
    assert searched(new_store) == ["fresh.md"]
    assert graph_notes(new_graph) == ["fresh.md"]


def test_the_active_generation_cannot_be_dropped(backend: Backend) -> None:
    catalog = backend.catalog()
    generation = catalog.new_generation()
    store, _ = build(backend, catalog, generation, ["a.md"])
    catalog.activate(generation)
    with pytest.raises(ValueError, match="active"):
        catalog.drop(generation)
    assert catalog.generations() == [generation]
    assert searched(store) == ["a.md"]


def test_an_incomplete_generation_cannot_be_activated(backend: Backend) -> None:
    catalog = backend.catalog()
    serving = built_and_active(backend, catalog, ["a.md"])
    empty = catalog.new_generation()
    with pytest.raises(ValueError, match="missing"):
        catalog.activate(empty)
    half = catalog.new_generation()
    backend.track(*catalog.open(half))[0].create(IDENTITY)  # chunks only: the note graph was never made
    with pytest.raises(ValueError, match="missing"):
        catalog.activate(half)
    assert catalog.active() == serving


def test_names_are_never_handed_out_twice(backend: Backend) -> None:
    catalog = backend.reopenable()
    first = built_and_active(backend, catalog, ["a.md"])
    failed = catalog.new_generation()
    store, graph = build(backend, catalog, failed, ["b.md"])
    close(store, graph)
    catalog.drop(failed)  # a rebuild that failed: its name must stay spent
    unused = catalog.new_generation()
    catalog.drop(unused)
    backend.close_all()

    catalog = backend.reopenable()
    after_restart = catalog.new_generation()
    names = [first, failed, unused, after_restart]
    assert len(set(names)) == len(names)
    assert catalog.active() == first


def test_a_crashed_build_leaves_the_next_generation_empty(backend: Backend) -> None:
    catalog = backend.reopenable()
    serving = built_and_active(backend, catalog, ["a.md"])
    crashed = catalog.new_generation()
    build(backend, catalog, crashed, ["half.md"])
    backend.close_all()  # the process ends before the switch

    catalog = backend.reopenable()
    assert catalog.active() == serving
    assert crashed in catalog.generations()
    retry = catalog.new_generation()
    assert retry != crashed
    store, graph = backend.track(*catalog.open(retry))
    assert store.identity() is None
    assert store.count() == 0
    assert graph_notes(graph) == []

    catalog.drop(crashed)
    assert catalog.generations() == [serving]
    served, _ = reopened(backend, catalog, serving)
    assert searched(served) == ["a.md"]


def test_a_reopened_catalog_sees_the_same_active_generation(backend: Backend) -> None:
    catalog = backend.reopenable()
    generation = built_and_active(backend, catalog, ["a.md", "b.md"])
    backend.close_all()

    catalog = backend.reopenable()
    assert catalog.active() == generation
    assert catalog.generations() == [generation]
    store, graph = reopened(backend, catalog, generation)
    assert store.identity() == IDENTITY
    assert searched(store) == ["a.md", "b.md"]
    assert graph_notes(graph) == ["a.md", "b.md"]


def test_catalogs_of_different_bases_do_not_meet(backend: Backend) -> None:
    default, work = backend.sharing("obsidian", "work")
    mine = default.new_generation()
    default_store, _ = build(backend, default, mine, ["default.md"])
    default.activate(mine)

    assert work.active() is None
    assert work.generations() == []
    theirs = work.new_generation()
    work_store, _ = build(backend, work, theirs, ["work.md"])
    work.activate(theirs)

    assert default.active() == mine
    assert default.generations() == [mine]
    assert work.generations() == [theirs]
    assert searched(work_store) == ["work.md"]
    assert searched(default_store) == ["default.md"]


@pytest.mark.parametrize("name", ["", "g", "g01", "1", "G1", "../g1", "g1/../g2", "g-1"])
def test_malformed_generation_names_are_refused(backend: Backend, name: str) -> None:
    catalog = backend.catalog()
    with pytest.raises(ValueError, match="generation"):
        catalog.open(name)
    with pytest.raises(ValueError, match="generation"):
        catalog.activate(name)
    with pytest.raises(ValueError, match="generation"):
        catalog.drop(name)


# -- adapter specifics -------------------------------------------------------------------------------


def test_edge_layout_on_disk(tmp_path: Path) -> None:
    catalog = EdgeIndexCatalog(tmp_path)
    active_and_closed(catalog, ["a.md"])
    assert sorted(p.name for p in (tmp_path / "g1").iterdir()) == [
        "obsidian_chunks",
        "obsidian_links",
        "obsidian_notes",
    ]
    # a crash while writing the pointer leaves its temp file beside it: the old pointer still counts
    (tmp_path / ".active_generation.json.tmp").write_text('{"act', encoding="utf-8")
    assert EdgeIndexCatalog(tmp_path).active() == "g1"
    (tmp_path / "active_generation.json").write_text("not json", encoding="utf-8")
    with pytest.raises(IndexCorruptedError, match="damaged"):
        EdgeIndexCatalog(tmp_path).active()


def test_edge_a_rebuild_gets_past_a_damaged_pointer_and_counter(tmp_path: Path) -> None:
    catalog = EdgeIndexCatalog(tmp_path)
    active_and_closed(catalog, ["a.md"])
    (tmp_path / "active_generation.json").write_bytes(b"\xff\xfe garbage")
    (tmp_path / "generation_counter.json").write_bytes(b"")
    damaged = EdgeIndexCatalog(tmp_path)
    with pytest.raises(IndexCorruptedError):
        damaged.active()
    second = damaged.new_generation()
    assert second == "g2"  # past the generation still on disk: nothing is overwritten
    store, graph = damaged.open(second)
    try:
        fill(store, graph, ["b.md"])
        damaged.activate(second)  # writes a sound pointer over the damaged one
    finally:
        close(store, graph)
    assert EdgeIndexCatalog(tmp_path).active() == "g2"


def test_edge_drop_refuses_a_generation_whose_shards_are_open(tmp_path: Path) -> None:
    catalog = EdgeIndexCatalog(tmp_path)
    first = catalog.new_generation()
    old_store, old_graph = catalog.open(first)
    second = catalog.new_generation()
    new_store, new_graph = catalog.open(second)
    try:
        fill(old_store, old_graph, ["old.md"])
        catalog.activate(first)
        fill(new_store, new_graph, ["new.md"])
        catalog.activate(second)
        with pytest.raises(IndexUnavailableError):
            catalog.drop(first)
        assert searched(old_store) == ["old.md"]  # nothing was deleted under the open shards
        close(old_store, old_graph)
        catalog.drop(first)
        assert catalog.generations() == [second]
    finally:
        close(old_store, old_graph, new_store, new_graph)


def test_client_plain_names_follow_the_active_generation(tmp_path: Path) -> None:
    catalog = ClientIndexCatalog(QdrantClient(path=str(tmp_path)))
    generation = catalog.new_generation()
    store, graph = catalog.open(generation)
    fill(store, graph, ["a.md", "b.md"])
    catalog.activate(generation)
    close(store, graph)
    catalog.close()

    # a tool (or an older version of the service) addressing the collections by their plain names
    client = QdrantClient(path=str(tmp_path))
    plain_store = QdrantChunkStore(ClientEngine(client), "obsidian_chunks")
    plain_graph = QdrantGraphStore(ClientEngine(client))
    try:
        assert searched(plain_store) == ["a.md", "b.md"]
        assert graph_notes(plain_graph) == ["a.md", "b.md"]
    finally:
        close(plain_store, plain_graph)
