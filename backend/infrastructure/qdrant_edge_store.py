"""`ChunkStore` on qdrant-edge: the Rust Qdrant engine in-process, one shard directory per collection.

Layout: `<path>/<collection>/` is the shard; `<path>/<collection>/kb_identity.json` records the embedder
the shard was built with, so dropping the directory drops both together.

Thread safety: the engine serves concurrent queries while one writer updates (checked with 3 readers and
a writer on one shard). A readers-writer lock therefore only guards the shard's lifecycle (open, create,
close: exclusive; everything else: shared), and a mutex keeps writers one at a time.
"""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from backend.domain.errors import IndexNotReadyError, StoreError
from backend.domain.models import (
    ChunkEntry,
    IndexIdentity,
    PointFilter,
    PointRecord,
    ScoredPoint,
    SparseVector,
)
from backend.domain.payload import CHUNK_INDEX, DATE_NUM, FOLDERS, NOTE_PATH, TAGS
from backend.infrastructure.disk_space import NO_GUARD, DiskGuard
from backend.infrastructure.durable_files import write_json_durably
from backend.infrastructure.qdrant_common import (
    CHUNKS_COLLECTION,
    DENSE,
    INVENTORY_FIELDS,
    INVENTORY_PAGE,
    SPARSE,
    FieldMatch,
    PayloadFilter,
    check_dense,
    check_query_vectors,
    chunk_entry,
    chunk_filter,
    dense_query,
    edge_errors_mapped,
    edge_load_error,
    ensure_edge_shard_free,
    identity_from_record,
    identity_record,
    is_multivector,
    normalise_filter,
    point_record,
    split_dense,
    stored_dense,
)
from backend.infrastructure.rwlock import ReadWriteLock
from backend.infrastructure.vector_query import VectorQuery, side_queries, vector_query

IDENTITY_FILE = "kb_identity.json"
_KEYWORD_FIELDS = (NOTE_PATH, FOLDERS, TAGS)


class EdgeChunkStore:
    def __init__(
        self, path: Path, collection: str = CHUNKS_COLLECTION, *, guard: DiskGuard = NO_GUARD
    ) -> None:
        self._root = Path(path)
        self._guard = guard
        self._collection = collection
        self._lifecycle = ReadWriteLock()
        self._open_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._shard: qe.EdgeShard | None = None
        self._identity: IndexIdentity | None = None
        self._closed = False

    @property
    def shard_dir(self) -> Path:
        return self._root / self._collection

    # -- lifecycle -------------------------------------------------------------------------------

    def identity(self) -> IndexIdentity | None:
        with self._lifecycle.read():
            if self._shard is not None and self._identity is not None:
                return self._identity
            return self._read_identity()

    def create(self, identity: IndexIdentity) -> None:
        with self._lifecycle.write(), edge_errors_mapped("create the index"):
            self._check_open()
            self._guard.check("create the index")
            self._close_shard()
            self._identity = None
            if self.shard_dir.exists():
                ensure_edge_shard_free(self.shard_dir)
                shutil.rmtree(self.shard_dir)
            shard = qe.EdgeShard.create(str(self.shard_dir), _edge_config(identity))
            try:
                for field in _KEYWORD_FIELDS:
                    shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
                shard.update(qe.UpdateOperation.create_field_index(DATE_NUM, qe.PayloadSchemaType.Integer))
                # Written last: a crash before this leaves no identity, which reads as "rebuild me".
                write_json_durably(self.shard_dir / IDENTITY_FILE, identity_record(identity))
                shard.flush()
            except BaseException:
                shard.close()
                raise
            self._shard = shard
            self._identity = identity

    def close(self) -> None:
        with self._lifecycle.write(), edge_errors_mapped("close the index"):
            self._closed = True
            self._close_shard()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the index store has been closed")

    def _close_shard(self) -> None:
        shard, self._shard = self._shard, None
        if shard is not None:
            try:
                shard.flush()
            finally:
                shard.close()

    def _read_identity(self) -> IndexIdentity | None:
        if not self.shard_dir.is_dir():
            return None
        try:
            record = json.loads((self.shard_dir / IDENTITY_FILE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return identity_from_record(record)

    def _missing(self) -> bool:
        """True when no shard exists yet: counting and listing then have nothing to report."""
        self._check_open()
        return self._shard is None and not self.shard_dir.is_dir()

    def _open(self) -> qe.EdgeShard:
        """The open shard, loading it on first use. Call with the lifecycle lock held (shared is enough)."""
        self._check_open()
        shard = self._shard
        if shard is not None:
            return shard
        with self._open_lock:
            shard = self._shard
            if shard is None:
                if not self.shard_dir.is_dir():
                    raise IndexNotReadyError(f"the index {self._collection!r} does not exist in {self._root}")
                self._guard.check("open the index")  # loading replays the log: it writes
                try:
                    shard = qe.EdgeShard.load(str(self.shard_dir))
                except Exception as exc:
                    raise edge_load_error(self.shard_dir, exc) from exc
                self._identity = self._read_identity()
                self._shard = shard
            return shard

    # -- writes ----------------------------------------------------------------------------------

    def upsert(self, points: Sequence[PointRecord]) -> None:
        if not points:
            return
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("write points"):
            self._guard.check("write points")
            shard = self._open()
            for point in points:
                if point.dense is not None:
                    check_dense(self._identity, len(point.dense))
            layout = self._identity
            shard.update(qe.UpdateOperation.upsert_points([_edge_point(p, layout) for p in points]))

    def delete_by_note(self, note_path: str) -> None:
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("delete points"):
            self._guard.check("delete points")  # deletions are written to the log too
            match = qe.FieldCondition(key=NOTE_PATH, match=qe.MatchValue(note_path))
            self._open().update(qe.UpdateOperation.delete_points_by_filter(qe.Filter(must=[match])))

    def delete_chunks_from(self, note_path: str, first_stale: int) -> None:
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("delete points"):
            self._guard.check("delete points")
            stale = qe.Filter(
                must=[
                    qe.FieldCondition(key=NOTE_PATH, match=qe.MatchValue(note_path)),
                    qe.FieldCondition(key=CHUNK_INDEX, range=qe.RangeFloat(gte=first_stale)),
                ]
            )
            self._open().update(qe.UpdateOperation.delete_points_by_filter(stale))

    # -- reads -----------------------------------------------------------------------------------

    def inventory(self) -> list[ChunkEntry]:
        with self._lifecycle.read(), edge_errors_mapped("list the index"):
            if self._missing():
                return []
            shard = self._open()
            lacking = set(self._ids(shard, qe.Filter(must_not=[qe.HasVectorCondition(DENSE)])))
            if self._identity is None or self._identity.dimension is None:
                lacking = set()  # a keyword-only index has no dense vectors to lack
            entries: list[ChunkEntry] = []
            offset: Any = None
            while True:
                request = qe.ScrollRequest(
                    offset=offset,
                    limit=INVENTORY_PAGE,
                    with_payload=qe.PayloadSelector.Include(INVENTORY_FIELDS),
                    with_vector=False,
                )
                records, offset = shard.scroll(request)
                entries += [chunk_entry(r.id, r.payload, str(r.id) not in lacking) for r in records]
                if offset is None:
                    return entries

    @staticmethod
    def _ids(shard: qe.EdgeShard, flt: qe.Filter) -> list[str]:
        found: list[str] = []
        offset: Any = None
        while True:
            request = qe.ScrollRequest(
                offset=offset, limit=INVENTORY_PAGE, filter=flt, with_payload=False, with_vector=False
            )
            records, offset = shard.scroll(request)
            found += [str(r.id) for r in records]
            if offset is None:
                return found

    def note_vectors(self, note_path: str) -> list[tuple[dict[str, Any], list[float]]]:
        found: list[tuple[dict[str, Any], list[float]]] = []
        offset: Any = None
        with self._lifecycle.read(), edge_errors_mapped("read vectors"):
            if self._missing():
                return []
            self._open()
            if self._identity is not None and self._identity.dimension is None:
                return []  # a keyword-only index keeps no dense vectors (asking for one is an error)
            flt = qe.Filter(must=[qe.FieldCondition(key=NOTE_PATH, match=qe.MatchValue(note_path))])
            while True:
                request = qe.ScrollRequest(
                    offset=offset, limit=256, filter=flt, with_payload=True, with_vector=[DENSE]
                )
                records, offset = self._open().scroll(request)
                for record in records:
                    stored = (record.vector or {}).get(DENSE) if isinstance(record.vector, dict) else None
                    dense, _ = split_dense(stored)  # the chunk's own vector (windows are cheap to redo)
                    if dense is not None:
                        found.append((dict(record.payload or {}), list(dense)))
                if offset is None:
                    return found

    def query(
        self,
        *,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        limit: int,
        prefetch_limit: int,
        point_filter: PointFilter | None = None,
        rrf_k: int = 60,
        rrf_weights: tuple[float, float] = (1.0, 1.0),
        fusion: str = "rrf",
    ) -> list[ScoredPoint]:
        plan = vector_query(
            dense=dense,
            sparse=sparse,
            limit=limit,
            prefetch_limit=prefetch_limit,
            fusion=fusion,
            rrf_k=rrf_k,
            rrf_weights=rrf_weights,
        )
        if plan is None:
            return []
        wanted = chunk_filter(normalise_filter(point_filter))
        with self._lifecycle.read(), edge_errors_mapped("search"):
            shard = self._open()
            check_query_vectors(self._identity, plan.dense, plan.sparse)
            request = edge_request(plan, edge_filter(wanted), self._identity)
            hits = shard.query(request)
        return [
            ScoredPoint(id=str(h.id), score=h.score, payload=h.payload or {}) for h in hits
        ]  # fresh dicts

    def rank_sides(
        self,
        *,
        dense: Sequence[float],
        sparse: SparseVector,
        limit: int,
        point_filter: PointFilter | None = None,
    ) -> tuple[list[tuple[Hashable, float]], list[tuple[Hashable, float]]]:
        plans = side_queries(dense=dense, sparse=sparse, limit=limit)
        if not plans:
            return [], []
        wanted = edge_filter(chunk_filter(normalise_filter(point_filter)))
        with self._lifecycle.read(), edge_errors_mapped("search"):
            shard = self._open()
            check_query_vectors(self._identity, plans[0].dense, plans[-1].sparse)
            requests = [edge_request(plan, wanted, self._identity, with_payload=False) for plan in plans]
            answers = shard.query_batch(qe.QueryBatchRequest(requests))
        # the shard's own id objects: a search turns only the few it keeps into strings
        ranked = [[(h.id, h.score) for h in hits] for hits in answers]
        return ranked[0], ranked[1] if len(ranked) > 1 else []

    def payloads(self, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        if not ids:
            return {}
        given = {i if isinstance(i, uuid.UUID) else uuid.UUID(str(i)): i for i in ids}
        with self._lifecycle.read(), edge_errors_mapped("read payloads"):
            records = self._open().retrieve(list(given), with_payload=True, with_vector=False)
        return {given[r.id]: r.payload or {} for r in records}  # each read of .payload is a new dict

    def count(self, point_filter: PointFilter | None = None) -> int:
        wanted = chunk_filter(normalise_filter(point_filter))
        with self._lifecycle.read(), edge_errors_mapped("count points"):
            if self._missing():
                return 0
            flt = edge_filter(wanted)
            return int(self._open().count(qe.CountRequest(exact=True, filter=flt)))

    def scroll(
        self, *, point_filter: PointFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        wanted = chunk_filter(normalise_filter(point_filter))
        with self._lifecycle.read(), edge_errors_mapped("list points"):
            if self._missing():
                return [], None
            flt = edge_filter(wanted)
            request = qe.ScrollRequest(
                offset=offset, limit=limit, filter=flt, with_payload=True, with_vector=False
            )
            records, next_offset = self._open().scroll(request)
        page = [ScoredPoint(id=str(r.id), score=0.0, payload=dict(r.payload or {})) for r in records]
        return page, None if next_offset is None else str(next_offset)

    def export(self, *, limit: int = 256, offset: str | None = None) -> tuple[list[PointRecord], str | None]:
        with self._lifecycle.read(), edge_errors_mapped("export points"):
            if self._missing():
                return [], None
            request = qe.ScrollRequest(
                offset=offset, limit=limit, filter=None, with_payload=True, with_vector=True
            )
            records, next_offset = self._open().scroll(request)
        page = [point_record(r.id, r.vector, r.payload) for r in records]
        return page, None if next_offset is None else str(next_offset)


# -- translation -----------------------------------------------------------------------------------


def _edge_config(identity: IndexIdentity) -> qe.EdgeConfig:
    vectors: dict[str, qe.EdgeVectorParams] = {}
    if identity.dimension is not None:
        windows = qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim) if is_multivector(identity) else None
        vectors[DENSE] = qe.EdgeVectorParams(
            size=identity.dimension, distance=qe.Distance.Cosine, multivector_config=windows
        )
    return qe.EdgeConfig(
        vectors=vectors, sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)}
    )


def _edge_point(point: PointRecord, identity: IndexIdentity | None) -> qe.Point:
    vector: dict[str, Any] = {SPARSE: qe.SparseVector(list(point.sparse.indices), list(point.sparse.values))}
    if point.dense is not None:
        vector[DENSE] = stored_dense(point, identity)
    return qe.Point(point.id, vector, dict(point.payload))


def edge_request(
    query: VectorQuery,
    flt: qe.Filter | None,
    layout: IndexIdentity | None = None,
    *,
    with_payload: bool = True,
) -> qe.QueryRequest:
    """The shard's `QueryRequest` for a `VectorQuery`; `layout` is the index's identity when it may hold dense
    windows (a multivector)."""
    floor = {} if query.dense_floor is None else {"score_threshold": query.dense_floor}
    if query.dense is not None and query.sparse is not None:
        size = query.prefetch_limit
        return qe.QueryRequest(
            limit=query.limit,
            prefetches=[
                qe.Prefetch(limit=size, query=_nearest_dense(query.dense, layout), filter=flt, **floor),
                qe.Prefetch(limit=size, query=_nearest_sparse(query.sparse), filter=flt),
            ],
            query=qe.Fusion.Dbsf()
            if query.fusion == "dbsf"
            else qe.Fusion.Rrf(k=query.rrf_k, weights=list(query.rrf_weights)),
            filter=flt,
            with_payload=with_payload,
            with_vector=False,
        )
    if query.dense is not None:
        nearest = _nearest_dense(query.dense, layout)
    else:
        assert query.sparse is not None  # vector_query gives no query without a vector
        nearest, floor = _nearest_sparse(query.sparse), {}
    return qe.QueryRequest(
        limit=query.limit, query=nearest, filter=flt, with_payload=with_payload, with_vector=False, **floor
    )


def _nearest_dense(dense: Sequence[float], identity: IndexIdentity | None) -> qe.Query:
    return qe.Query.Nearest(dense_query(dense, identity), using=DENSE)


def _nearest_sparse(sparse: SparseVector) -> qe.Query:
    return qe.Query.Nearest(qe.SparseVector(list(sparse.indices), list(sparse.values)), using=SPARSE)


def edge_filter(flt: PayloadFilter | None) -> qe.Filter | None:
    if flt is None:
        return None
    must = [_condition(match) for match in flt.must]
    should = [_condition(match) for match in flt.should]
    return qe.Filter(must=must or None, should=should or None)


def _condition(match: FieldMatch) -> qe.FieldCondition:
    if match.is_range:
        return qe.FieldCondition(key=match.key, range=qe.RangeFloat(gte=match.at_least, lte=match.at_most))
    return qe.FieldCondition(key=match.key, match=qe.MatchAny(list(match.values)))
