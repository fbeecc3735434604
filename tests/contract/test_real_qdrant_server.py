"""The qdrant-client adapters against a real Qdrant server, when one is given: KB_TEST_QDRANT_URL (and
KB_TEST_QDRANT_API_KEY if it needs one), e.g. `docker run -p 6333:6333 -p 6334:6334 qdrant/qdrant:v1.19.0`.

No server runs where CI runs (no Docker engine, and no package ships a Qdrant server binary), so these are
skipped there; the same behaviour is covered on qdrant-client's local mode by the contract suites. They
exercise what local mode cannot: payload indexes the server really builds, the collection layout it really
applies, and gRPC. Everything they create is named `kbtest<random>_*` and deleted afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pytest
from qdrant_client import QdrantClient

from backend.domain.models import IndexIdentity, PointFilter, PointRecord, SparseVector
from backend.infrastructure.index_catalog import ClientIndexCatalog
from backend.infrastructure.qdrant.chunk_store import CHUNK_PAYLOAD_INDEXES
from backend.infrastructure.qdrant.client_engine import CollectionOptions

URL = os.environ.get("KB_TEST_QDRANT_URL")
pytestmark = pytest.mark.skipif(not URL, reason="no Qdrant server given (KB_TEST_QDRANT_URL)")


@pytest.fixture(params=[False, True], ids=["rest", "grpc"])
def client(request: pytest.FixtureRequest) -> Iterator[QdrantClient]:
    built = QdrantClient(url=URL, api_key=os.environ.get("KB_TEST_QDRANT_API_KEY"), prefer_grpc=request.param)
    yield built
    built.close()


@pytest.fixture
def base(client: QdrantClient) -> Iterator[str]:
    name = f"kbtest{uuid.uuid4().hex[:8]}"
    yield name
    for collection in client.get_collections().collections:
        if collection.name.startswith(f"{name}_"):
            client.delete_collection(collection.name)


def test_a_generation_on_a_real_server(client: QdrantClient, base: str) -> None:
    catalog = ClientIndexCatalog(client, options=CollectionOptions(on_disk_payload=True), base=base)
    generation = catalog.new_generation()
    store, graph = catalog.open(generation)
    store.create(IndexIdentity("test-model", 4, "kw"))
    graph.reset()
    payload = {"note_path": "a/b.md", "folders": ["a"], "tags": ["t"], "date_num": 20260101}
    point = PointRecord(str(uuid.uuid4()), SparseVector((1,), (1.0,)), payload, (1.0, 0.0, 0.0, 0.0))
    store.upsert([point])
    catalog.activate(generation)

    info = client.get_collection(f"{base}_chunks")  # through the alias
    assert set(CHUNK_PAYLOAD_INDEXES) <= set(info.payload_schema)
    assert info.config.params.on_disk_payload is True
    assert store.identity() == IndexIdentity("test-model", 4, "kw")
    found = store.query(
        dense=(1.0, 0.0, 0.0, 0.0),
        sparse=SparseVector((1,), (1.0,)),
        limit=5,
        prefetch_limit=5,
        point_filter=PointFilter(folders=("a",), date_from="2026-01-01"),
    )
    assert [hit.id for hit in found] == [point.id]
    assert store.export()[0][0].dense == pytest.approx(point.dense)
