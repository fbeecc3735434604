"""`MemoryStore` over a `QdrantEngine`: the remembered facts' own collection, `<base>_memory`.

Beside the index generations and never one of them, so a rebuild does not touch it: on qdrant-edge a shard
under `DATA_DIR/memory/`, on a Qdrant server a collection of its own. Its identity is kept as the chunk
collection's is. Written once for both engines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from backend.domain.errors import IndexNotReadyError
from backend.domain.index.ids import memory_point_id
from backend.domain.models import SparseVector
from backend.domain.notes.memory import MemoryRecord
from backend.infrastructure.qdrant.engine import (
    DEFAULT_BASE,
    Collection,
    CollectionStore,
    Page,
    QdrantEngine,
    StoredPoint,
    check_dense,
    collection_name,
)
from backend.infrastructure.qdrant.vector_query import memory_query

MEMORY_SUFFIX = "memory"
_PAGE = 256
# Times are stored as integer microseconds: qdrant-edge 0.9 returns some payload floats one ulp off.
_MICROS = 1_000_000


def memory_collection(base: str = DEFAULT_BASE) -> str:
    """The facts' collection (qdrant-client) and shard folder (qdrant-edge) name: `<base>_memory`."""
    return collection_name(MEMORY_SUFFIX, base)


class QdrantMemoryStore(CollectionStore):
    _what = "memory store"

    def __init__(self, engine: QdrantEngine, collection: str = memory_collection()) -> None:
        super().__init__(engine, Collection(collection, vectors=True, windows=False))

    def put(self, record: MemoryRecord, *, sparse: SparseVector, dense: Sequence[float] | None) -> None:
        with self._engine.writing("remember a fact", check_disk=False):
            if dense is not None:
                check_dense(self._engine.layout(self._col), len(dense))
            values = [float(x) for x in dense] if dense is not None else None
            point = StoredPoint(memory_point_id(record.key), memory_payload(record), sparse, values)
            self._engine.upsert(self._col, [point])
            self._engine.flush(self._col)  # a remembered fact must survive a crash right after the answer

    def get(self, key: str) -> MemoryRecord | None:
        try:
            with self._engine.reading("read a fact"):
                found = self._engine.retrieve(self._col, [memory_point_id(key)])
        except IndexNotReadyError:
            return None
        return next((memory_from_payload(p) for p in found.values()), None)

    def all(self) -> list[MemoryRecord]:
        records: list[MemoryRecord] = []
        offset: Any = None
        try:
            with self._engine.reading("list facts"):
                while True:
                    page, offset = self._engine.scroll(self._col, Page(_PAGE, offset))
                    records += [memory_from_payload(dict(r.payload or {})) for r in page]
                    if offset is None:
                        break
        except IndexNotReadyError:
            return []
        return sorted(records, key=lambda r: r.key)

    def delete(self, key: str) -> bool:
        point_id = memory_point_id(key)
        try:
            with self._engine.writing("forget a fact", check_disk=False):
                if not self._engine.retrieve(self._col, [point_id]):
                    return False
                self._engine.delete_ids(self._col, [point_id])
                self._engine.flush(self._col)
                return True
        except IndexNotReadyError:
            return False

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
        try:
            with self._engine.reading("search facts"):
                if dense is not None:
                    check_dense(self._engine.layout(self._col), len(dense))
                hits = self._engine.query(self._col, plan, None)
        except IndexNotReadyError:
            return []
        return [(memory_from_payload(hit.payload), hit.score) for hit in hits]


def memory_payload(record: MemoryRecord) -> dict[str, Any]:
    return {
        "key": record.key,
        "value": record.value,
        "source": record.source,
        "created_at_us": round(record.created_at * _MICROS),
        "updated_at_us": round(record.updated_at * _MICROS),
        "dense_ready": int(record.dense_ready),  # an int: qdrant-edge does not match booleans
    }


def memory_from_payload(payload: dict[str, Any]) -> MemoryRecord:
    return MemoryRecord(
        key=str(payload["key"]),
        value=str(payload.get("value", "")),
        source=str(payload.get("source", "")),
        created_at=int(payload.get("created_at_us") or 0) / _MICROS,
        updated_at=int(payload.get("updated_at_us") or 0) / _MICROS,
        dense_ready=bool(payload.get("dense_ready", 1)),
    )
