"""How the qdrant-client adapter lays out its collections on a server: shards, replicas, on-disk storage and
payload indexes, and the client the settings build.

qdrant-client's local mode (`QdrantClient(":memory:")`, our stand-in for a server) keeps the vectors'
on-disk flags, which are read back here, but accepts and drops `shard_number`, `replication_factor`,
`write_consistency_factor` and `on_disk_payload`, and ignores payload indexes. For those the tests record
what the adapter asks the real client library for (a pass-through spy in front of a real local client),
which is what goes to the server; they cannot show a server applying it (no Qdrant server runs here).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from qdrant_client import QdrantClient
from qdrant_client import models as qm

from backend.adapters import build_catalog
from backend.config import EXAMPLE_VAULT, load_settings
from backend.domain.links import LinkKind, LinkRecord, NoteRecord
from backend.domain.models import IndexIdentity, PointFilter, PointRecord, SparseVector
from backend.infrastructure.index_catalog import ClientIndexCatalog
from backend.infrastructure.qdrant.client_engine import CollectionOptions
from tests.ports import refused_port

IDENTITY = IndexIdentity(embedding_model="test-model", dimension=4)
CLUSTER = CollectionOptions(
    shard_number=3,
    replication_factor=2,
    write_consistency_factor=2,
    on_disk_vectors=True,
    on_disk_payload=True,
)


class RecordingClient:
    """Passes every call to a real `QdrantClient(":memory:")` and records it. With `as_server`, the adapters
    take it for a remote client (so they send payload indexes, which local mode then ignores)."""

    def __init__(self, *, as_server: bool) -> None:
        self._client = QdrantClient(":memory:")
        self.calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = []
        if as_server:
            self.init_options = {"url": "http://qdrant.test:6333", "location": None, "path": None}

    def __getattr__(self, name: str) -> Any:
        target = getattr(self._client, name)
        if not callable(target):
            return target

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self.calls.append((name, args, kwargs))
            return target(*args, **kwargs)

        return recorded

    def named(self, name: str) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
        return [(args, kwargs) for called, args, kwargs in self.calls if called == name]


@pytest.fixture
def spy() -> Iterator[RecordingClient]:
    client = RecordingClient(as_server=True)
    yield client
    client.close()


def build_generation(client: Any, options: CollectionOptions | None) -> ClientIndexCatalog:
    catalog = ClientIndexCatalog(client, options=options)
    generation = catalog.new_generation()
    store, graph = catalog.open(generation)
    store.create(IDENTITY)
    graph.reset()
    catalog.activate(generation)
    return catalog


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_every_collection_is_created_with_the_configured_cluster_layout(spy: RecordingClient) -> None:
    build_generation(spy, CLUSTER)

    created = {args[0]: kwargs for args, kwargs in spy.named("create_collection")}
    assert set(created) == {
        "obsidian_catalog",
        "obsidian_chunks_g1",
        "obsidian_notes_g1",
        "obsidian_links_g1",
    }
    for name in ("obsidian_chunks_g1", "obsidian_notes_g1", "obsidian_links_g1"):
        layout = {key: created[name].get(key) for key in CLUSTER.create_kwargs()}
        assert layout == {
            "shard_number": 3,
            "replication_factor": 2,
            "write_consistency_factor": 2,
            "on_disk_payload": True,
        }, name
    assert created["obsidian_catalog"]["replication_factor"] == 2  # the generation counter survives a node
    chunks = created["obsidian_chunks_g1"]
    assert chunks["vectors_config"]["dense"].on_disk is True
    assert chunks["sparse_vectors_config"]["sparse"].index.on_disk is True


def test_the_vectors_on_disk_flags_are_read_back_from_the_collection() -> None:
    client = QdrantClient(":memory:")
    try:
        build_generation(client, CLUSTER)
        params = client.get_collection("obsidian_chunks").config.params  # through the alias
        assert params.vectors["dense"].on_disk is True  # type: ignore[index]
        assert params.sparse_vectors["sparse"].index.on_disk is True  # type: ignore[index, union-attr]
    finally:
        client.close()


def test_default_layout_leaves_the_server_defaults(spy: RecordingClient) -> None:
    build_generation(spy, None)
    for args, kwargs in spy.named("create_collection"):
        assert kwargs.get("shard_number") is None, args
        assert kwargs.get("replication_factor") is None, args
        assert not kwargs.get("on_disk_payload"), args


# -- payload indexes: every field a filter reads is indexed, with the right type --------------------------


def _conditions(flt: Any) -> Iterator[qm.FieldCondition]:
    if flt is None:
        return
    for part in (flt.must, flt.should, flt.must_not):
        for condition in part or []:
            if isinstance(condition, qm.Filter):
                yield from _conditions(condition)
            elif isinstance(condition, qm.FieldCondition):
                yield condition


def filtered_fields(spy: RecordingClient) -> dict[str, set[tuple[str, str]]]:
    """Per collection: (field, index type it needs) for every condition the adapters sent."""
    found: dict[str, set[tuple[str, str]]] = {}
    for _, args, kwargs in spy.calls:
        filters = [kwargs.get(key) for key in ("query_filter", "scroll_filter", "count_filter")]
        selector = kwargs.get("points_selector")
        filters.append(getattr(selector, "filter", None))
        filters += [prefetch.filter for prefetch in kwargs.get("prefetch") or []]
        for flt in filters:
            for condition in _conditions(flt):
                values = getattr(condition.match, "any", None) or [getattr(condition.match, "value", None)]
                numeric = condition.range is not None or all(isinstance(v, int) for v in values)
                kind = "integer" if numeric else "keyword"
                found.setdefault(args[0], set()).add((condition.key, kind))
    return found


def indexed_fields(spy: RecordingClient) -> dict[str, set[tuple[str, str]]]:
    indexed: dict[str, set[tuple[str, str]]] = {}
    for args, kwargs in spy.named("create_payload_index"):
        collection, field, schema = args[0], args[1], args[2] if len(args) > 2 else kwargs["field_schema"]
        indexed.setdefault(collection, set()).add((field, qm.PayloadSchemaType(schema).value))
    return indexed


def link(source: str, position: int, target: str, resolved: str | None) -> LinkRecord:
    return LinkRecord(source, position, target, LinkKind.WIKILINK, 1, None, None, resolved, False)


@pytest.mark.filterwarnings("ignore:Payload indexes have no effect")
def test_every_field_the_adapters_filter_on_has_a_payload_index(spy: RecordingClient) -> None:
    catalog = build_generation(spy, None)
    store, graph = catalog.open("g1")
    payload = {"note_path": "a/b.md", "folders": ["a"], "tags": ["t"], "date_num": 20260101}
    store.upsert([PointRecord(id="6f1c2b4e-0000-4000-8000-000000000001", sparse=SparseVector((1,), (1.0,)),
                              payload=payload, dense=(1.0, 0.0, 0.0, 0.0))])  # fmt: skip
    every = PointFilter(note_paths=("a/b.md",), folders=("a",), tags=("t",), date_from="2026-01-01",
                        date_to="2026-12-31")  # fmt: skip
    store.query(dense=(1.0, 0.0, 0.0, 0.0), sparse=SparseVector((1,), (1.0,)), limit=5, prefetch_limit=5,
                point_filter=every)  # fmt: skip
    store.count(every)
    store.scroll(point_filter=every)
    store.note_vectors("a/b.md")
    store.delete_by_note("a/b.md")
    note = NoteRecord("a/b.md", "b", (), (), None, 1.0, 1, "h")
    graph.put_note(note, [link("a/b.md", 0, "c", "c.md"), link("a/b.md", 1, "d", None)])
    graph.outlinks("a/b.md")
    graph.backlinks("c.md")
    graph.note_links_touching(["a/b.md", "c.md"])
    graph.links_to_names(["c"])
    graph.count_links(resolved=True, kind="wikilink")
    graph.update_resolution([link("a/b.md", 1, "d", "d.md")])
    graph.delete_note("a/b.md")

    filtered = filtered_fields(spy)
    indexed = indexed_fields(spy)

    assert {field for field, _ in filtered["obsidian_chunks_g1"]} == {
        "note_path",
        "folders",
        "tags",
        "date_num",
    }
    assert {field for field, _ in filtered["obsidian_links_g1"]} >= {"source", "resolved_path", "target_key"}
    for collection, needed in filtered.items():
        missing = needed - indexed.get(collection, set())
        assert not missing, f"{collection} filters on fields without a payload index: {missing}"


@pytest.mark.filterwarnings("ignore:Failed to obtain server version")  # nothing listens there
@pytest.mark.filterwarnings("ignore:Api key is used with an insecure connection")
def test_the_settings_build_the_server_client_and_layout(tmp_path: Any) -> None:
    url = f"http://127.0.0.1:{refused_port()}"
    settings = load_settings(
        vault_path=EXAMPLE_VAULT,
        data_dir=tmp_path,
        qdrant_url=url,
        qdrant_api_key="s3cret",
        qdrant_prefer_grpc=True,
        qdrant_grpc_port=7334,
        qdrant_timeout_seconds=12,
        qdrant_shard_number=3,
        qdrant_replication_factor=2,
        qdrant_write_consistency_factor=2,
        qdrant_on_disk_vectors=True,
        qdrant_on_disk_payload=True,
        vault_name="work",
    )
    catalog = build_catalog(settings)
    try:
        assert isinstance(catalog, ClientIndexCatalog)
        options = catalog.connection
        assert (options["url"], options["api_key"], options["prefer_grpc"]) == (url, "s3cret", True)
        assert (options["grpc_port"], options["timeout"]) == (7334, 12)
        assert catalog.options == CLUSTER
        assert catalog.collections("g1") == ("work_chunks_g1", "work_notes_g1", "work_links_g1")
    finally:
        catalog.close()
