"""`MemoryStore` on qdrant-edge: one shard directory of its own (`DATA_DIR/memory/obsidian_memory/`), beside
the index catalog's generations and never inside them, with the identity file the chunk store uses."""

from __future__ import annotations

import json
import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from backend.domain.errors import IndexNotReadyError, StoreError
from backend.domain.ids import memory_point_id
from backend.domain.memory import MemoryRecord
from backend.domain.models import IndexIdentity, SparseVector
from backend.infrastructure.durable_files import write_json_durably
from backend.infrastructure.memory_common import memory_from_payload, memory_payload
from backend.infrastructure.qdrant_common import (
    DENSE,
    SPARSE,
    check_dense,
    edge_errors_mapped,
    edge_load_error,
    ensure_edge_shard_free,
    identity_from_record,
    identity_record,
)
from backend.infrastructure.qdrant_edge_store import IDENTITY_FILE, edge_request
from backend.infrastructure.vector_query import memory_query

_PAGE = 256


class EdgeMemoryStore:
    def __init__(self, shard_dir: Path) -> None:
        self._dir = Path(shard_dir)
        self._lock = threading.RLock()  # facts are few and small: one operation at a time is plenty
        self._shard: qe.EdgeShard | None = None
        self._identity: IndexIdentity | None = None
        self._closed = False

    def identity(self) -> IndexIdentity | None:
        with self._lock:
            if self._identity is None:
                self._identity = self._read_identity()
            return self._identity

    def create(self, identity: IndexIdentity) -> None:
        with self._lock, edge_errors_mapped("create the memory store"):
            self._check_open()
            self._close_shard()
            self._identity = None
            if self._dir.exists():
                ensure_edge_shard_free(self._dir)
                shutil.rmtree(self._dir)
            self._dir.parent.mkdir(parents=True, exist_ok=True)
            vectors: dict[str, qe.EdgeVectorParams] = {}
            if identity.dimension is not None:
                vectors[DENSE] = qe.EdgeVectorParams(size=identity.dimension, distance=qe.Distance.Cosine)
            config = qe.EdgeConfig(
                vectors=vectors, sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
            )
            shard = qe.EdgeShard.create(str(self._dir), config)
            try:
                write_json_durably(self._dir / IDENTITY_FILE, identity_record(identity))
                shard.flush()
            except BaseException:
                shard.close()
                raise
            self._shard = shard
            self._identity = identity

    def put(self, record: MemoryRecord, *, sparse: SparseVector, dense: Sequence[float] | None) -> None:
        with self._lock, edge_errors_mapped("remember a fact"):
            shard = self._open()
            vector: dict[str, Any] = {SPARSE: qe.SparseVector(list(sparse.indices), list(sparse.values))}
            if dense is not None:
                check_dense(self._identity, len(dense))
                vector[DENSE] = [float(x) for x in dense]
            point = qe.Point(memory_point_id(record.key), vector, memory_payload(record))
            shard.update(qe.UpdateOperation.upsert_points([point]))
            shard.flush()  # a remembered fact must survive a crash right after the answer

    def get(self, key: str) -> MemoryRecord | None:
        with self._lock, edge_errors_mapped("read a fact"):
            if not self._exists():
                return None
            found = self._open().retrieve([memory_point_id(key)], True, False)
            return memory_from_payload(dict(found[0].payload or {})) if found else None

    def all(self) -> list[MemoryRecord]:
        with self._lock, edge_errors_mapped("list facts"):
            if not self._exists():
                return []
            shard = self._open()
            records: list[MemoryRecord] = []
            offset: Any = None
            while True:
                request = qe.ScrollRequest(offset=offset, limit=_PAGE, with_payload=True, with_vector=False)
                page, offset = shard.scroll(request)
                records += [memory_from_payload(dict(r.payload or {})) for r in page]
                if offset is None:
                    return sorted(records, key=lambda r: r.key)

    def delete(self, key: str) -> bool:
        with self._lock, edge_errors_mapped("forget a fact"):
            if self.get(key) is None:
                return False
            shard = self._open()
            shard.update(qe.UpdateOperation.delete_points([memory_point_id(key)]))
            shard.flush()
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
        with self._lock, edge_errors_mapped("search facts"):
            if not self._exists():
                return []
            shard = self._open()
            if dense is not None:
                check_dense(self._identity, len(dense))
            request = edge_request(plan, None)
            hits = shard.query(request)
        return [(memory_from_payload(dict(h.payload or {})), float(h.score)) for h in hits]

    def close(self) -> None:
        with self._lock, edge_errors_mapped("close the memory store"):
            self._closed = True
            self._close_shard()

    # -- helpers ---------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the memory store has been closed")

    def _exists(self) -> bool:
        self._check_open()
        return self._shard is not None or self._dir.is_dir()

    def _open(self) -> qe.EdgeShard:
        self._check_open()
        if self._shard is None:
            if not self._dir.is_dir():
                raise IndexNotReadyError(f"the memory store does not exist in {self._dir}")
            try:
                self._shard = qe.EdgeShard.load(str(self._dir))
            except Exception as exc:
                raise edge_load_error(self._dir, exc) from exc
            self._identity = self._read_identity()
        return self._shard

    def _close_shard(self) -> None:
        shard, self._shard = self._shard, None
        if shard is not None:
            try:
                shard.flush()
            finally:
                shard.close()

    def _read_identity(self) -> IndexIdentity | None:
        try:
            record = json.loads((self._dir / IDENTITY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return identity_from_record(record)
