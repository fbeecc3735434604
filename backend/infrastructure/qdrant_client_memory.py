"""`MemoryStore` on qdrant-client: the `obsidian_memory` collection on the Qdrant server (local mode in
tests), beside the index generations and never one of them. The identity lives in the collection's
metadata, as for the chunk collection."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from qdrant_client import QdrantClient
from qdrant_client import models as qm

from backend.domain.errors import IndexNotReadyError, StoreError
from backend.domain.ids import memory_point_id
from backend.domain.memory import MemoryRecord
from backend.domain.models import IndexIdentity, SparseVector
from backend.infrastructure.memory_common import memory_from_payload, memory_payload
from backend.infrastructure.qdrant_client_store import client_errors_mapped, client_query_args
from backend.infrastructure.qdrant_common import (
    DENSE,
    SPARSE,
    check_dense,
    identity_from_record,
    identity_record,
)
from backend.infrastructure.vector_query import memory_query

_PAGE = 256


class ClientMemoryStore:
    def __init__(self, client: QdrantClient, collection: str, *, close_client: bool = True) -> None:
        self._client = client
        self._collection = collection
        self._close_client = close_client
        self._lock = threading.RLock()  # facts are few: one call at a time (local mode needs it anyway)
        self._identity: IndexIdentity | None = None
        self._closed = False

    def identity(self) -> IndexIdentity | None:
        with self._mapped("read the memory store's identity"):
            if not self._client.collection_exists(self._collection):
                return None
            self._identity = identity_from_record(
                self._client.get_collection(self._collection).config.metadata
            )
            return self._identity

    def create(self, identity: IndexIdentity) -> None:
        with self._mapped("create the memory store"):
            if self._client.collection_exists(self._collection):
                self._client.delete_collection(self._collection)
            vectors: dict[str, qm.VectorParams] = {}
            if identity.dimension is not None:
                vectors[DENSE] = qm.VectorParams(size=identity.dimension, distance=qm.Distance.COSINE)
            self._client.create_collection(
                self._collection,
                vectors_config=vectors,
                sparse_vectors_config={SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF)},
                metadata=identity_record(identity),
            )
            self._identity = identity

    def put(self, record: MemoryRecord, *, sparse: SparseVector, dense: Sequence[float] | None) -> None:
        with self._mapped("remember a fact"):
            vector: dict[str, Any] = {
                SPARSE: qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))
            }
            if dense is not None:
                check_dense(self._known_identity(), len(dense))
                vector[DENSE] = [float(x) for x in dense]
            point = qm.PointStruct(
                id=memory_point_id(record.key), vector=vector, payload=memory_payload(record)
            )
            self._client.upsert(self._collection, points=[point], wait=True)

    def get(self, key: str) -> MemoryRecord | None:
        try:
            with self._mapped("read a fact"):
                found = self._client.retrieve(self._collection, [memory_point_id(key)], with_payload=True)
        except IndexNotReadyError:
            return None
        return memory_from_payload(dict(found[0].payload or {})) if found else None

    def all(self) -> list[MemoryRecord]:
        records: list[MemoryRecord] = []
        offset: Any = None
        try:
            with self._mapped("list facts"):
                while True:
                    page, offset = self._client.scroll(
                        self._collection, limit=_PAGE, offset=offset, with_payload=True, with_vectors=False
                    )
                    records += [memory_from_payload(dict(r.payload or {})) for r in page]
                    if offset is None:
                        break
        except IndexNotReadyError:
            return []
        return sorted(records, key=lambda r: r.key)

    def delete(self, key: str) -> bool:
        with self._lock:
            if self.get(key) is None:
                return False
            with self._mapped("forget a fact"):
                selector = qm.PointIdsList(points=[memory_point_id(key)])
                self._client.delete(self._collection, points_selector=selector, wait=True)
            return True

    def search(
        self,
        *,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        limit: int,
        min_similarity: float = 0.0,
        rrf_k: int = 60,
    ) -> list[tuple[MemoryRecord, float]]:
        plan = memory_query(
            dense=dense, sparse=sparse, limit=limit, min_similarity=min_similarity, rrf_k=rrf_k
        )
        if plan is None:
            return []
        args = client_query_args(plan, None)
        try:
            with self._mapped("search facts"):
                if dense is not None:
                    check_dense(self._known_identity(), len(dense))
                response = self._client.query_points(self._collection, **args)
        except IndexNotReadyError:
            return []
        return [(memory_from_payload(dict(p.payload or {})), float(p.score)) for p in response.points]

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._close_client:
                with client_errors_mapped(self._client, "close the memory store", ()):
                    self._client.close()

    def _known_identity(self) -> IndexIdentity | None:
        if self._identity is None:
            self._identity = self.identity()
        return self._identity

    @contextmanager
    def _mapped(self, action: str) -> Iterator[None]:
        with self._lock:
            if self._closed:
                raise StoreError("the memory store has been closed")
            with client_errors_mapped(self._client, action, (self._collection,)):
                yield
