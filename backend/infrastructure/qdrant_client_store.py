"""`ChunkStore` on qdrant-client: a Qdrant server in production, local mode (`:memory:` / `path=`) in tests.

The index identity lives in the collection's `metadata` (Qdrant server >= 1.16; qdrant-client 1.20 local
mode keeps it too, also across a reopen of `path=`). Hybrid search is one `query_points` call: a dense and
a sparse `Prefetch`, fused by `RrfQuery(rrf=Rrf(k=rrf_k))`. The k is always sent, because a plain
`FusionQuery(RRF)` means k=2 on both server and local mode, not the k=60 callers expect.

Thread safety: the remote client (httpx / grpc) is safe to share between threads, so reads and the one
writer run concurrently and only create/close are exclusive. Local mode is plain Python over dicts and
numpy arrays, so there every write is exclusive too.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import grpc
import httpx
from qdrant_client import QdrantClient
from qdrant_client import models as qm
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from backend.domain.errors import IndexNotReadyError, IndexUnavailableError, KnowledgeBridgeError, StoreError
from backend.domain.models import (
    ChunkEntry,
    IndexIdentity,
    PointFilter,
    PointRecord,
    ScoredPoint,
    SparseVector,
)
from backend.domain.payload import CHUNK_INDEX, DATE_NUM, FOLDERS, NOTE_PATH, TAGS
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
    describe_error,
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

_CLOSING = "close the index"
_UPSERT_BATCH = 256  # keeps each request far below the server's 32 MB body limit at 1024-d
_UNAVAILABLE_HTTP = frozenset({502, 503, 504})
_UNAVAILABLE_GRPC = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
# Every payload field a chunk filter reads (see `_client_filter`), with the index type it needs.
CHUNK_PAYLOAD_INDEXES = {
    NOTE_PATH: qm.PayloadSchemaType.KEYWORD,
    FOLDERS: qm.PayloadSchemaType.KEYWORD,
    TAGS: qm.PayloadSchemaType.KEYWORD,
    DATE_NUM: qm.PayloadSchemaType.INTEGER,
}


@dataclass(frozen=True, slots=True)
class CollectionOptions:
    """How the server lays out the collections we create (QDRANT_SHARD_NUMBER, ... in the settings).

    None leaves the server's default. Local mode accepts and ignores all of them except the vectors' on-disk
    flags; a cluster needs them (see docs/deployment.md)."""

    shard_number: int | None = None
    replication_factor: int | None = None
    write_consistency_factor: int | None = None
    on_disk_vectors: bool = False
    on_disk_payload: bool = False

    def create_kwargs(self) -> dict[str, Any]:
        """The layout arguments of `create_collection`, for every collection: chunks, notes, links."""
        return {
            "shard_number": self.shard_number,
            "replication_factor": self.replication_factor,
            "write_consistency_factor": self.write_consistency_factor,
            "on_disk_payload": self.on_disk_payload or None,
        }


def is_local_mode(client: QdrantClient) -> bool:
    """qdrant-client's in-process mode (":memory:" or a path): no payload indexes, Python-side locking."""
    options = getattr(client, "init_options", {}) or {}
    return options.get("location") == ":memory:" or options.get("path") is not None


class ClientChunkStore:
    def __init__(
        self,
        client: QdrantClient,
        collection: str = CHUNKS_COLLECTION,
        *,
        options: CollectionOptions | None = None,
        close_client: bool = True,
    ) -> None:
        self._client = client
        self._close_client = close_client  # False when the client is shared (an index catalog owns it)
        self._collection = collection
        self._options = options or CollectionOptions()
        self._local = is_local_mode(client)
        self._lifecycle = ReadWriteLock()
        self._write_lock = threading.Lock()
        self._identity: IndexIdentity | None = None  # last seen; rechecked when a query fails
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------

    def identity(self) -> IndexIdentity | None:
        with self._lifecycle.read(), self._mapped("read the index identity"):
            self._identity = self._fetch_identity()
            return self._identity

    def create(self, identity: IndexIdentity) -> None:
        with self._lifecycle.write(), self._mapped("create the index"):
            self._identity = None
            name = self._collection
            if self._client.collection_exists(name):
                self._client.delete_collection(name)
            on_disk = self._options.on_disk_vectors
            vectors: dict[str, qm.VectorParams] = {}
            if identity.dimension is not None:
                windows = (
                    qm.MultiVectorConfig(comparator=qm.MultiVectorComparator.MAX_SIM)
                    if is_multivector(identity)
                    else None
                )
                vectors[DENSE] = qm.VectorParams(
                    size=identity.dimension,
                    distance=qm.Distance.COSINE,
                    on_disk=on_disk or None,
                    multivector_config=windows,
                )
            sparse_index = qm.SparseIndexParams(on_disk=on_disk)
            sparse = qm.SparseVectorParams(modifier=qm.Modifier.IDF, index=sparse_index)
            self._client.create_collection(
                name,
                vectors_config=vectors,
                sparse_vectors_config={SPARSE: sparse},
                metadata=identity_record(identity),
                **self._options.create_kwargs(),
            )
            if not self._local:  # local mode ignores payload indexes and warns about each one
                for field, schema in CHUNK_PAYLOAD_INDEXES.items():
                    self._client.create_payload_index(name, field, schema, wait=True)
            self._identity = identity

    def close(self) -> None:
        with self._lifecycle.write():
            if self._closed:
                return
            self._closed = True
            if self._close_client:
                with self._mapped(_CLOSING):
                    self._client.close()

    def _fetch_identity(self) -> IndexIdentity | None:
        if not self._client.collection_exists(self._collection):
            return None
        info = self._client.get_collection(self._collection)
        return identity_from_record(info.config.metadata)

    # -- writes ----------------------------------------------------------------------------------

    def upsert(self, points: Sequence[PointRecord]) -> None:
        if not points:
            return
        with self._writing(), self._mapped("write points"):
            identity = self._known_identity()
            for point in points:
                if point.dense is not None:
                    check_dense(identity, len(point.dense))
            for start in range(0, len(points), _UPSERT_BATCH):
                batch = [_point_struct(p, identity) for p in points[start : start + _UPSERT_BATCH]]
                self._client.upsert(self._collection, points=batch, wait=True)

    def delete_by_note(self, note_path: str) -> None:
        with self._writing(), self._mapped("delete points"):
            match = qm.FieldCondition(key=NOTE_PATH, match=qm.MatchValue(value=note_path))
            selector = qm.FilterSelector(filter=qm.Filter(must=[match]))
            self._client.delete(self._collection, points_selector=selector, wait=True)

    def delete_chunks_from(self, note_path: str, first_stale: int) -> None:
        with self._writing(), self._mapped("delete points"):
            stale = qm.Filter(
                must=[
                    qm.FieldCondition(key=NOTE_PATH, match=qm.MatchValue(value=note_path)),
                    qm.FieldCondition(key=CHUNK_INDEX, range=qm.Range(gte=first_stale)),
                ]
            )
            selector = qm.FilterSelector(filter=stale)
            self._client.delete(self._collection, points_selector=selector, wait=True)

    # -- reads -----------------------------------------------------------------------------------

    def inventory(self) -> list[ChunkEntry]:
        try:
            with self._lifecycle.read(), self._mapped("list the index"):
                identity = self._known_identity()
                lacking: set[str] = set()
                if identity is not None and identity.dimension is not None:
                    no_dense = qm.Filter(must_not=[qm.HasVectorCondition(has_vector=DENSE)])
                    lacking = {str(r.id) for r in self._scroll_all(no_dense, with_payload=False)}
                records = self._scroll_all(None, with_payload=INVENTORY_FIELDS)
        except IndexNotReadyError:
            return []
        return [chunk_entry(r.id, r.payload, str(r.id) not in lacking) for r in records]

    def _scroll_all(self, flt: qm.Filter | None, *, with_payload: bool | list[str]) -> list[qm.Record]:
        found: list[qm.Record] = []
        offset: Any = None
        while True:
            records, offset = self._client.scroll(
                self._collection,
                scroll_filter=flt,
                limit=INVENTORY_PAGE,
                offset=offset,
                with_payload=with_payload,
                with_vectors=False,
            )
            found += records
            if offset is None:
                return found

    def note_vectors(self, note_path: str) -> list[tuple[dict[str, Any], list[float]]]:
        flt = qm.Filter(must=[qm.FieldCondition(key=NOTE_PATH, match=qm.MatchValue(value=note_path))])
        found: list[tuple[dict[str, Any], list[float]]] = []
        offset: Any = None
        try:
            with self._lifecycle.read(), self._mapped("read vectors"):
                while True:
                    records, offset = self._client.scroll(
                        self._collection,
                        scroll_filter=flt,
                        limit=256,
                        offset=offset,
                        with_payload=True,
                        with_vectors=[DENSE],
                    )
                    for record in records:
                        vectors = record.vector if isinstance(record.vector, dict) else {}
                        dense, _ = split_dense(vectors.get(DENSE))  # windows are cheap to redo
                        if dense is not None:
                            found.append((dict(record.payload or {}), list(dense)))
                    if offset is None:
                        return found
        except IndexNotReadyError:
            return []

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
        flt = client_filter(chunk_filter(normalise_filter(point_filter)))
        with self._lifecycle.read(), self._mapped("search"):
            check_query_vectors(self._identity, plan.dense, plan.sparse)
            # the layout of the dense side (one vector or windows) is needed to phrase the query
            layout = self._known_identity() if plan.dense is not None else None
            args = client_query_args(plan, flt, layout)
            try:
                response = self._client.query_points(self._collection, **args)
            except Exception as exc:
                if dense is not None and not is_unavailable(exc):
                    # The collection may have been rebuilt elsewhere; explain in index terms if so.
                    self._identity = self._fetch_identity()
                    check_dense(self._identity, len(dense))
                raise
        return [_scored(p.id, p.score, p.payload) for p in response.points]

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
        flt = client_filter(chunk_filter(normalise_filter(point_filter)))
        with self._lifecycle.read(), self._mapped("search"):
            check_query_vectors(self._identity, plans[0].dense, plans[-1].sparse)
            layout = self._known_identity()
            requests = [
                qm.QueryRequest(**_batch_args(client_query_args(plan, flt, layout, with_payload=False)))
                for plan in plans
            ]
            try:
                answers = self._client.query_batch_points(self._collection, requests=requests)
            except Exception as exc:
                if not is_unavailable(exc):
                    # The collection may have been rebuilt elsewhere; explain in index terms if so.
                    self._identity = self._fetch_identity()
                    check_dense(self._identity, len(dense))
                raise
        ranked = [[(str(p.id), float(p.score)) for p in answer.points] for answer in answers]
        return ranked[0], ranked[1] if len(ranked) > 1 else []

    def payloads(self, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        if not ids:
            return {}
        given = {str(i): i for i in ids}
        with self._lifecycle.read(), self._mapped("read payloads"):
            records = self._client.retrieve(
                self._collection, ids=list(given), with_payload=True, with_vectors=False
            )
        return {given[str(r.id)]: dict(r.payload or {}) for r in records}

    def count(self, point_filter: PointFilter | None = None) -> int:
        flt = client_filter(chunk_filter(normalise_filter(point_filter)))
        try:
            with self._lifecycle.read(), self._mapped("count points"):
                return int(self._client.count(self._collection, count_filter=flt, exact=True).count)
        except IndexNotReadyError:
            return 0  # no collection yet (or mid-rebuild): nothing to count

    def scroll(
        self, *, point_filter: PointFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        flt = client_filter(chunk_filter(normalise_filter(point_filter)))
        try:
            with self._lifecycle.read(), self._mapped("list points"):
                records, next_offset = self._client.scroll(
                    self._collection,
                    scroll_filter=flt,
                    limit=limit,
                    offset=offset,
                    with_payload=True,
                    with_vectors=False,
                )
        except IndexNotReadyError:
            return [], None  # no collection yet (or mid-rebuild): nothing to list
        page = [_scored(r.id, 0.0, r.payload) for r in records]
        return page, None if next_offset is None else str(next_offset)

    def export(self, *, limit: int = 256, offset: str | None = None) -> tuple[list[PointRecord], str | None]:
        try:
            with self._lifecycle.read(), self._mapped("export points"):
                records, next_offset = self._client.scroll(
                    self._collection, limit=limit, offset=offset, with_payload=True, with_vectors=True
                )
        except IndexNotReadyError:
            return [], None
        page = [point_record(r.id, r.vector, r.payload) for r in records]
        return page, None if next_offset is None else str(next_offset)

    # -- helpers ---------------------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        if self._local:
            with self._lifecycle.write():
                yield
        else:
            with self._lifecycle.read(), self._write_lock:
                yield

    def _known_identity(self) -> IndexIdentity | None:
        if self._identity is None:
            self._identity = self._fetch_identity()
        return self._identity

    @contextmanager
    def _mapped(self, action: str) -> Iterator[None]:
        if self._closed and action != _CLOSING:
            raise StoreError("the index store has been closed")
        with client_errors_mapped(self._client, action, (self._collection,)):
            yield


# -- translation -----------------------------------------------------------------------------------


def client_query_args(
    query: VectorQuery,
    flt: qm.Filter | None,
    layout: IndexIdentity | None = None,
    *,
    with_payload: bool = True,
) -> dict[str, Any]:
    """`query_points` arguments for a `VectorQuery` (the k of RRF always sent: see the module's doc); `layout`
    is the index's identity when it may hold dense windows (a multivector)."""
    args: dict[str, Any] = {"limit": query.limit, "query_filter": flt, "with_payload": with_payload}
    floor = {} if query.dense_floor is None else {"score_threshold": query.dense_floor}
    if query.dense is not None and query.sparse is not None:
        size = query.prefetch_limit
        args["prefetch"] = [
            qm.Prefetch(query=dense_query(query.dense, layout), using=DENSE, limit=size, filter=flt, **floor),
            qm.Prefetch(query=_sparse(query.sparse), using=SPARSE, limit=size, filter=flt),
        ]
        args["query"] = (
            qm.FusionQuery(fusion=qm.Fusion.DBSF)
            if query.fusion == "dbsf"
            else qm.RrfQuery(rrf=qm.Rrf(k=query.rrf_k, weights=list(query.rrf_weights)))
        )
    elif query.dense is not None:
        args.update(query=dense_query(query.dense, layout), using=DENSE, **floor)
    elif query.sparse is not None:
        args.update(query=_sparse(query.sparse), using=SPARSE)
    return args


def _batch_args(args: dict[str, Any]) -> dict[str, Any]:
    """`query_points` arguments as a batch's `QueryRequest` fields (its filter is called `filter`)."""
    return {("filter" if key == "query_filter" else key): value for key, value in args.items()}


def _sparse(sparse: SparseVector) -> qm.SparseVector:
    return qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))


def _point_struct(point: PointRecord, identity: IndexIdentity | None) -> qm.PointStruct:
    vector: dict[str, Any] = {SPARSE: _sparse(point.sparse)}
    if point.dense is not None:
        vector[DENSE] = stored_dense(point, identity)
    return qm.PointStruct(id=point.id, vector=vector, payload=dict(point.payload))


def client_filter(flt: PayloadFilter | None) -> qm.Filter | None:
    if flt is None:
        return None
    must: list[qm.Condition] = [_condition(match) for match in flt.must]
    should: list[qm.Condition] = [_condition(match) for match in flt.should]
    return qm.Filter(must=must or None, should=should or None)


def _condition(match: FieldMatch) -> qm.FieldCondition:
    if match.is_range:
        return qm.FieldCondition(key=match.key, range=qm.Range(gte=match.at_least, lte=match.at_most))
    return qm.FieldCondition(key=match.key, match=qm.MatchAny(any=list(match.values)))  # type: ignore[arg-type]


def _scored(point_id: Any, score: float, payload: dict[str, Any] | None) -> ScoredPoint:
    return ScoredPoint(id=str(point_id), score=float(score), payload=dict(payload or {}))


# -- errors ----------------------------------------------------------------------------------------


@contextmanager
def client_errors_mapped(client: QdrantClient, action: str, collections: Sequence[str]) -> Iterator[None]:
    """Every failure leaves as an IndexUnavailableError, IndexNotReadyError (one of `collections` does not
    exist) or StoreError."""
    try:
        yield
    except KnowledgeBridgeError:
        raise
    except Exception as exc:
        if is_unavailable(exc):
            raise IndexUnavailableError(f"Qdrant is unreachable ({action}): {_describe(exc)}") from exc
        missing = _missing_collection(client, collections)
        if missing is not None:
            raise IndexNotReadyError(f"the index {missing!r} does not exist") from exc
        raise StoreError(f"could not {action}: {_describe(exc)}") from exc


def _describe(exc: BaseException) -> str:
    """One line: gRPC errors carry a multi-line debug string besides their status and details."""
    if isinstance(exc, grpc.RpcError) and callable(getattr(exc, "code", None)):
        details = exc.details() if callable(getattr(exc, "details", None)) else ""
        return f"gRPC {exc.code().name}: {details}"
    return describe_error(exc)


def _missing_collection(client: QdrantClient, collections: Sequence[str]) -> str | None:
    try:
        return next((name for name in collections if not client.collection_exists(name)), None)
    except Exception:
        return None  # cannot tell; the original failure is reported as it is


def is_unavailable(exc: BaseException) -> bool:
    if isinstance(exc, ResponseHandlingException | httpx.TransportError | ConnectionError | TimeoutError):
        return True
    if isinstance(exc, UnexpectedResponse):
        return exc.status_code in _UNAVAILABLE_HTTP
    if isinstance(exc, grpc.RpcError):
        code = getattr(exc, "code", None)
        return callable(code) and code() in _UNAVAILABLE_GRPC
    return False
