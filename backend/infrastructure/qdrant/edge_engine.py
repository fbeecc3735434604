"""`QdrantEngine` on qdrant-edge: the Rust Qdrant engine in-process, one shard directory per collection.

Layout: `<root>/<collection>/` is the shard; `<root>/<collection>/kb_identity.json` records the identity the
shard was built with, so dropping the directory drops both together. qdrant-edge refuses a shard without
any vector, so a payload-only collection declares one sparse vector that no point carries.

Thread safety: the engine serves concurrent queries while one writer updates (checked with 3 readers and
a writer on one shard). A readers-writer lock therefore only guards the shards' lifecycle (open, create,
close: exclusive; everything else: shared), and a mutex keeps writers one at a time. Shards are loaded on
first use; loading replays the log, so it writes and is guarded against a full disk like every write.
"""

from __future__ import annotations

import json
import shutil
import threading
import uuid
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from backend.domain.errors import (
    IndexNotReadyError,
    StoreError,
)
from backend.domain.models import IndexIdentity, ScoredPoint, SparseVector
from backend.infrastructure.disk_space import NO_GUARD, DiskGuard
from backend.infrastructure.durable_files import write_json_durably
from backend.infrastructure.qdrant.edge_errors import (
    edge_errors_mapped,
    edge_load_error,
    ensure_edge_shard_free,
)
from backend.infrastructure.qdrant.engine import (
    DENSE,
    SPARSE,
    Collection,
    FieldMatch,
    Page,
    PayloadFilter,
    Record,
    StoredPoint,
    dense_query,
    identity_from_record,
    identity_record,
    term_indices,
)
from backend.infrastructure.qdrant.rwlock import ReadWriteLock
from backend.infrastructure.qdrant.vector_query import VectorQuery

IDENTITY_FILE = "kb_identity.json"
_PLACEHOLDER_VECTOR = "unused"


class EdgeEngine:
    def __init__(self, root: Path, *, guard: DiskGuard = NO_GUARD) -> None:
        self._root = Path(root)
        self._guard = guard
        self._lifecycle = ReadWriteLock()
        self._open_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._shards: dict[str, qe.EdgeShard] = {}
        self._identities: dict[str, IndexIdentity | None] = {}
        self._closed = False
        self._id_texts: dict[int, str] = {}  # `_as_text`

    def declare(self, *collections: Collection) -> None:
        """Nothing to do: a missing shard is seen on the disk."""

    def shard_dir(self, collection: Collection) -> Path:
        return self._root / collection.name

    # -- contexts --------------------------------------------------------------------------------

    @contextmanager
    def reading(self, action: str) -> Iterator[None]:
        with self._lifecycle.read(), edge_errors_mapped(action):
            self._check_open()
            yield

    @contextmanager
    def writing(self, action: str, *, check_disk: bool = True) -> Iterator[None]:
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped(action):
            self._check_open()
            if check_disk:
                self._guard.check(action)  # deletions are written to the log too
            yield

    @contextmanager
    def managing(self, action: str) -> Iterator[None]:
        with self._lifecycle.write(), edge_errors_mapped(action):
            self._check_open()
            yield

    def close(self) -> None:
        with self._lifecycle.write(), edge_errors_mapped("close the index"):
            self._closed = True
            shards, self._shards = self._shards, {}
            for shard in shards.values():
                _close_shard(shard)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the index store has been closed")

    # -- lifecycle (inside `managing`) -----------------------------------------------------------

    def create(self, collections: Sequence[Collection], identity: IndexIdentity | None = None) -> None:
        self._guard.check("create the index")
        for collection in collections:
            self._identities.pop(collection.name, None)
            shard = self._shards.pop(collection.name, None)
            if shard is not None:
                _close_shard(shard)
        existing = [self.shard_dir(c) for c in collections if self.shard_dir(c).exists()]
        for directory in existing:  # all checked before any is deleted
            ensure_edge_shard_free(directory)
        for directory in existing:
            shutil.rmtree(directory)
        for collection in collections:
            self._shards[collection.name] = self._make(collection, identity)
            self._identities[collection.name] = identity

    def ensure(self, collection: Collection) -> None:
        if collection.name in self._shards:
            return
        if self.shard_dir(collection).is_dir():
            self._shard(collection)
        else:
            self._guard.check("create the index")
            self._shards[collection.name] = self._make(collection, None)
            self._identities[collection.name] = None

    def _make(self, collection: Collection, identity: IndexIdentity | None) -> qe.EdgeShard:
        directory = self.shard_dir(collection)
        self._root.mkdir(parents=True, exist_ok=True)
        shard = qe.EdgeShard.create(str(directory), _edge_config(collection, identity))
        try:
            _index_fields(shard, collection)
            if identity is not None:
                # Written last: a crash before this leaves no identity, which reads as "rebuild me".
                write_json_durably(directory / IDENTITY_FILE, identity_record(identity))
            shard.flush()
        except BaseException:
            shard.close()
            raise
        return shard

    def _shard(self, collection: Collection) -> qe.EdgeShard:
        """The open shard, loading it on first use (call inside a context)."""
        shard = self._shards.get(collection.name)
        if shard is not None:
            return shard
        with self._open_lock:
            shard = self._shards.get(collection.name)
            if shard is None:
                directory = self.shard_dir(collection)
                if not directory.is_dir():
                    raise IndexNotReadyError(f"the index {collection.name!r} does not exist in {self._root}")
                self._guard.check("open the index")  # loading replays the log: it writes
                identity = self._read_identity(collection)
                try:
                    shard = qe.EdgeShard.load(str(directory), _layout_on_load(collection, identity))
                except Exception as exc:
                    raise edge_load_error(directory, exc) from exc
                if collection.reindex_on_open:
                    try:
                        _index_fields(shard, collection)  # a no-op when present
                    except BaseException:
                        shard.close()
                        raise
                self._identities[collection.name] = identity
                self._shards[collection.name] = shard
            return shard

    def identity(self, collection: Collection) -> IndexIdentity | None:
        known = self._identities.get(collection.name)
        if collection.name in self._shards and known is not None:
            return known
        return self._read_identity(collection)

    def layout(self, collection: Collection) -> IndexIdentity | None:
        self._shard(collection)
        return self._identities.get(collection.name)

    def _read_identity(self, collection: Collection) -> IndexIdentity | None:
        try:
            text = (self.shard_dir(collection) / IDENTITY_FILE).read_text(encoding="utf-8")
            return identity_from_record(json.loads(text))
        except (OSError, ValueError):
            return None

    # -- points (inside `reading` or `writing`) --------------------------------------------------

    def upsert(self, collection: Collection, points: Sequence[StoredPoint]) -> None:
        # One update, so one entry of the log: a note's chunks are written whole or not at all.
        shard = self._shard(collection)
        shard.update(qe.UpdateOperation.upsert_points([_edge_point(p) for p in points]))

    def update_vectors(
        self, collection: Collection, vectors: Sequence[tuple[str, list[float] | list[list[float]]]]
    ) -> None:
        points = [qe.PointVectors(uuid.UUID(point_id), {DENSE: value}) for point_id, value in vectors]
        self._shard(collection).update(qe.UpdateOperation.update_vectors(points))

    def delete_ids(self, collection: Collection, ids: Sequence[str]) -> None:
        self._shard(collection).update(qe.UpdateOperation.delete_points(list(ids)))

    def delete_where(self, collection: Collection, flt: PayloadFilter) -> None:
        self._shard(collection).update(qe.UpdateOperation.delete_points_by_filter(edge_filter(flt)))

    def set_payload(
        self, collection: Collection, updates: Sequence[tuple[dict[str, Any], list[str]]]
    ) -> None:
        shard = self._shard(collection)
        for payload, ids in updates:
            only = qe.Filter(must=[qe.HasIdCondition(set(ids))])
            shard.update(qe.UpdateOperation.set_payload_by_filter(only, payload))

    def query(
        self, collection: Collection, plan: VectorQuery, flt: PayloadFilter | None
    ) -> list[ScoredPoint]:
        shard = self._shard(collection)
        multivector = collection.multivector(self._identities.get(collection.name))
        hits = shard.query(edge_request(plan, edge_filter(flt), multivector))
        return [
            ScoredPoint(str(h.id), h.score, h.payload or {}) for h in hits
        ]  # each read of .payload is new

    def query_batch(
        self, collection: Collection, plans: Sequence[VectorQuery], flt: PayloadFilter | None
    ) -> list[list[tuple[Hashable, float]]]:
        shard = self._shard(collection)
        multivector = collection.multivector(self._identities.get(collection.name))
        wanted = edge_filter(flt)
        requests = [edge_request(plan, wanted, multivector, with_payload=False) for plan in plans]
        answers = shard.query_batch(qe.QueryBatchRequest(requests))
        return [self._as_text(hits) for hits in answers]

    def _as_text(self, hits: Sequence[qe.ScoredPoint]) -> list[tuple[Hashable, float]]:
        """Each hit's id as text at once (every id a search ranks is hashed, compared and kept by its text
        later on), the texts of ids seen before remembered: the shard gives each id as a new `UUID`, whose
        text costs as much again as the UUID itself (0.14 of 0.31 ms for a search's 200 ids). Bounded by
        the points a vault holds (`_ID_TEXTS_KEPT`)."""
        known = self._id_texts
        if len(known) > _ID_TEXTS_KEPT:
            known.clear()
        ranked: list[tuple[Hashable, float]] = []
        for hit in hits:
            point_id = hit.id
            text = known.get(point_id.int)
            if text is None:
                text = known[point_id.int] = str(point_id)
            ranked.append((text, hit.score))
        return ranked

    def scroll(self, collection: Collection, page: Page) -> tuple[list[Record], Any]:
        payload = qe.PayloadSelector.Include(page.payload) if isinstance(page.payload, list) else page.payload
        request = qe.ScrollRequest(
            offset=page.offset,
            limit=page.limit,
            filter=edge_filter(page.flt),
            with_payload=payload,
            with_vector=page.vectors,
        )
        return self._shard(collection).scroll(request)  # type: ignore[no-any-return]

    def count(self, collection: Collection, flt: PayloadFilter | None = None) -> int:
        return int(self._shard(collection).count(qe.CountRequest(exact=True, filter=edge_filter(flt))))

    def retrieve(self, collection: Collection, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        given = {i if isinstance(i, uuid.UUID) else uuid.UUID(str(i)): i for i in ids}
        records = self._shard(collection).retrieve(list(given), with_payload=True, with_vector=False)
        return {given[r.id]: r.payload or {} for r in records}  # each read of .payload is a new dict

    def retrieve_terms(
        self, collection: Collection, ids: Sequence[Hashable]
    ) -> dict[Hashable, frozenset[int]]:
        given = {i if isinstance(i, uuid.UUID) else uuid.UUID(str(i)): i for i in ids}
        records = self._shard(collection).retrieve(list(given), with_payload=False, with_vector=[SPARSE])
        return {given[r.id]: term_indices(r.vector) for r in records}

    def flush(self, collection: Collection) -> None:
        self._shard(collection).flush()

    def optimize(self, collection: Collection) -> None:
        if collection.vectors:  # the dense side's int8 copies (`_edge_config`); a no-op once made
            self._shard(collection).optimize()


_ID_TEXTS_KEPT = 200_000  # ~36 MB at most (measured); the Zettelkasten keeps ~26k of them (~5 MB)


def _close_shard(shard: qe.EdgeShard) -> None:
    try:
        shard.flush()
    finally:
        shard.close()


# -- translation -----------------------------------------------------------------------------------


# The dense side is searched exactly, not through a graph: qdrant-edge builds HNSW only in a blocking
# `optimize()` (235 s at 50k points), and approximate. What `optimize()` does build in a second is an int8
# copy of every dense vector beside the original (`_QUANTIZED`, in memory): a search scans the copies (a
# quarter of the bytes: the scan is bound by memory) for twice as many candidates as asked (`_RESCORED`) and
# scores those again with the originals. On the Zettelkasten's 25,714 chunks the dense side took 2.0-2.5 ->
# 1.0 ms, the same 100 points with the same scores for 150 of 150 questions (docs/measurements.md). Points
# written after the last `optimize()` are scanned as they are, exactly.
_QUANTIZED = qe.ScalarQuantizationConfig(qe.ScalarType.Int8, always_ram=True)
_NO_GRAPH = qe.HnswIndexConfig(m=0, ef_construct=100, full_scan_threshold=10)  # m=0: no HNSW graph
_RESCORED = qe.SearchParams(quantization=qe.QuantizationSearchParams(rescore=True, oversampling=2.0))


def _edge_config(collection: Collection, identity: IndexIdentity | None) -> qe.EdgeConfig:
    if not collection.vectors:
        return qe.EdgeConfig(sparse_vectors={_PLACEHOLDER_VECTOR: qe.EdgeSparseVectorParams()})
    vectors: dict[str, qe.EdgeVectorParams] = {}
    if identity is not None and identity.dimension is not None:
        windows = (
            qe.MultiVectorConfig(qe.MultiVectorComparator.MaxSim)
            if collection.multivector(identity)
            else None
        )
        vectors[DENSE] = qe.EdgeVectorParams(
            size=identity.dimension,
            distance=qe.Distance.Cosine,
            multivector_config=windows,
            quantization_config=_QUANTIZED,
        )
    return qe.EdgeConfig(
        vectors=vectors,
        sparse_vectors={SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        hnsw_config=_NO_GRAPH,
    )


def _layout_on_load(collection: Collection, identity: IndexIdentity | None) -> qe.EdgeConfig | None:
    """The config a shard of dense vectors is loaded with: this engine's (a shard made before the int8
    copies takes them on, at its next `optimize`); None, the shard's own, for any other or without a
    recorded identity to size the vectors by."""
    if not collection.vectors or identity is None or identity.dimension is None:
        return None
    return _edge_config(collection, identity)


def _index_fields(shard: qe.EdgeShard, collection: Collection) -> None:
    for field in collection.keyword_fields:
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    for field in collection.integer_fields:
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Integer))


def _edge_point(point: StoredPoint) -> qe.Point:
    vector: dict[str, Any] = {}
    if point.sparse is not None:
        vector[SPARSE] = _sparse(point.sparse)
    if point.dense is not None:
        vector[DENSE] = point.dense
    return qe.Point(point.id, vector, point.payload)


def edge_request(
    query: VectorQuery, flt: qe.Filter | None, multivector: bool, *, with_payload: bool = True
) -> qe.QueryRequest:
    """The shard's `QueryRequest` for a `VectorQuery`."""
    floor = {} if query.dense_floor is None else {"score_threshold": query.dense_floor}
    if query.dense is not None and query.sparse is not None:
        size = query.prefetch_limit
        return qe.QueryRequest(
            limit=query.limit,
            prefetches=[
                qe.Prefetch(
                    limit=size,
                    query=_nearest_dense(query.dense, multivector),
                    params=_RESCORED,
                    filter=flt,
                    **floor,
                ),
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
        nearest, params = _nearest_dense(query.dense, multivector), _RESCORED
    else:
        assert query.sparse is not None  # vector_query gives no query without a vector
        nearest, floor, params = _nearest_sparse(query.sparse), {}, None
    return qe.QueryRequest(
        limit=query.limit,
        query=nearest,
        filter=flt,
        with_payload=with_payload,
        with_vector=False,
        params=params,
        **floor,
    )


def _nearest_dense(dense: Sequence[float], multivector: bool) -> qe.Query:
    return qe.Query.Nearest(dense_query(dense, multivector), using=DENSE)  # searched with `_RESCORED`


def _nearest_sparse(sparse: SparseVector) -> qe.Query:
    return qe.Query.Nearest(_sparse(sparse), using=SPARSE)


def _sparse(sparse: SparseVector) -> qe.SparseVector:
    return qe.SparseVector(list(sparse.indices), list(sparse.values))


def edge_filter(flt: PayloadFilter | None) -> qe.Filter | None:
    if flt is None:
        return None
    must = [_condition(match) for match in flt.must]
    should = [_condition(match) for match in flt.should]
    must_not = [qe.HasVectorCondition(flt.lacking)] if flt.lacking is not None else []
    return qe.Filter(must=must or None, should=should or None, must_not=must_not or None)


def _condition(match: FieldMatch) -> qe.FieldCondition:
    if match.is_range:
        return qe.FieldCondition(key=match.key, range=qe.RangeFloat(gte=match.at_least, lte=match.at_most))
    return qe.FieldCondition(key=match.key, match=qe.MatchAny(list(match.values)))
