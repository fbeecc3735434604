"""`QdrantEngine` on qdrant-client: a Qdrant server in production, local mode (`:memory:` / `path=`) in tests.

The index identity lives in the collection's `metadata` (Qdrant server >= 1.16; qdrant-client 1.20 local
mode keeps it too, also across a reopen of `path=`). A fused query is one `query_points` call: a dense and a
sparse `Prefetch`, fused by `RrfQuery(rrf=Rrf(k=rrf_k))`. The k is always sent, because a plain
`FusionQuery(RRF)` means k=2 on both server and local mode, not the k=60 callers expect.

Thread safety: the remote client (httpx / grpc) is safe to share between threads, so reads and the one
writer run concurrently and only create/close are exclusive. Local mode is plain Python over dicts and
numpy arrays, so there every write is exclusive too. Payload indexes are created against a server only:
local mode ignores them and warns about each one.
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
from backend.domain.models import IndexIdentity, ScoredPoint, SparseVector
from backend.infrastructure.qdrant.engine import (
    DENSE,
    SPARSE,
    Collection,
    FieldMatch,
    Page,
    PayloadFilter,
    Record,
    StoredPoint,
    check_dense,
    dense_query,
    describe_error,
    identity_from_record,
    identity_record,
    term_indices,
)
from backend.infrastructure.qdrant.rwlock import ReadWriteLock
from backend.infrastructure.qdrant.vector_query import VectorQuery

_UNAVAILABLE_HTTP = frozenset({502, 503, 504})
_UNAVAILABLE_GRPC = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


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


class ClientEngine:
    def __init__(
        self, client: QdrantClient, *, options: CollectionOptions | None = None, close_client: bool = True
    ) -> None:
        self._client = client
        self._close_client = close_client  # False when the client is shared (an index catalog owns it)
        self._options = options or CollectionOptions()
        self._local = is_local_mode(client)
        self._lifecycle = ReadWriteLock()
        self._write_lock = threading.Lock()
        self._names: tuple[str, ...] = ()
        self._identities: dict[str, IndexIdentity | None] = {}  # last seen; rechecked when a query fails
        self._closed = False

    def declare(self, *collections: Collection) -> None:
        self._names = tuple(dict.fromkeys([*self._names, *(c.name for c in collections)]))

    # -- contexts --------------------------------------------------------------------------------

    @contextmanager
    def reading(self, action: str) -> Iterator[None]:
        with self._lifecycle.read(), self._mapped(action):
            yield

    @contextmanager
    def writing(self, action: str, *, check_disk: bool = True) -> Iterator[None]:
        if self._local:
            with self._lifecycle.write(), self._mapped(action):
                yield
        else:
            with self._lifecycle.read(), self._write_lock, self._mapped(action):
                yield

    @contextmanager
    def managing(self, action: str) -> Iterator[None]:
        with self._lifecycle.write(), self._mapped(action):
            yield

    def close(self) -> None:
        with self._lifecycle.write():
            if self._closed:
                return
            self._closed = True
            if self._close_client:
                with client_errors_mapped(self._client, "close the index", ()):
                    self._client.close()

    @contextmanager
    def _mapped(self, action: str) -> Iterator[None]:
        if self._closed:
            raise StoreError("the index store has been closed")
        with client_errors_mapped(self._client, action, self._names):
            yield

    # -- lifecycle (inside `managing`) -----------------------------------------------------------

    def create(self, collections: Sequence[Collection], identity: IndexIdentity | None = None) -> None:
        for collection in collections:
            self._identities.pop(collection.name, None)
            if self._client.collection_exists(collection.name):
                self._client.delete_collection(collection.name)
            self._make(collection, identity)
            self._identities[collection.name] = identity

    def ensure(self, collection: Collection) -> None:
        if not self._client.collection_exists(collection.name):
            self._make(collection, None)
        else:
            self._index_fields(collection)  # idempotent; heals a collection whose creation was cut short

    def _make(self, collection: Collection, identity: IndexIdentity | None) -> None:
        on_disk = self._options.on_disk_vectors
        vectors: dict[str, qm.VectorParams] = {}
        sparse: dict[str, qm.SparseVectorParams] | None = None
        if collection.vectors:
            if identity is not None and identity.dimension is not None:
                windows = (
                    qm.MultiVectorConfig(comparator=qm.MultiVectorComparator.MAX_SIM)
                    if collection.multivector(identity)
                    else None
                )
                vectors[DENSE] = qm.VectorParams(
                    size=identity.dimension,
                    distance=qm.Distance.COSINE,
                    on_disk=on_disk or None,
                    multivector_config=windows,
                )
            index = qm.SparseIndexParams(on_disk=on_disk)
            sparse = {SPARSE: qm.SparseVectorParams(modifier=qm.Modifier.IDF, index=index)}
        self._client.create_collection(
            collection.name,
            vectors_config=vectors,
            sparse_vectors_config=sparse,
            metadata=identity_record(identity) if identity is not None else None,
            **self._options.create_kwargs(),
        )
        self._index_fields(collection)

    def _index_fields(self, collection: Collection) -> None:
        if self._local:  # local mode ignores payload indexes and warns about each one
            return
        name = collection.name
        for field in collection.keyword_fields:
            self._client.create_payload_index(name, field, qm.PayloadSchemaType.KEYWORD, wait=True)
        for field in collection.integer_fields:
            self._client.create_payload_index(name, field, qm.PayloadSchemaType.INTEGER, wait=True)

    def identity(self, collection: Collection) -> IndexIdentity | None:
        self._identities[collection.name] = identity = self._fetch_identity(collection.name)
        return identity

    def layout(self, collection: Collection) -> IndexIdentity | None:
        known = self._identities.get(collection.name)
        return known if known is not None else self.identity(collection)

    def _fetch_identity(self, name: str) -> IndexIdentity | None:
        if not self._client.collection_exists(name):
            return None
        return identity_from_record(self._client.get_collection(name).config.metadata)

    # -- points (inside `reading` or `writing`) --------------------------------------------------

    def upsert(self, collection: Collection, points: Sequence[StoredPoint]) -> None:
        for start in range(0, len(points), collection.batch):
            batch = [_point_struct(p) for p in points[start : start + collection.batch]]
            self._client.upsert(collection.name, points=batch, wait=True)

    def update_vectors(
        self, collection: Collection, vectors: Sequence[tuple[str, list[float] | list[list[float]]]]
    ) -> None:
        for start in range(0, len(vectors), collection.batch):
            points = [
                qm.PointVectors(id=point_id, vector={DENSE: value})
                for point_id, value in vectors[start : start + collection.batch]
            ]
            self._client.update_vectors(collection.name, points=points, wait=True)

    def delete_ids(self, collection: Collection, ids: Sequence[str]) -> None:
        selector = qm.PointIdsList(points=list(ids))
        self._client.delete(collection.name, points_selector=selector, wait=True)

    def delete_where(self, collection: Collection, flt: PayloadFilter) -> None:
        selector = qm.FilterSelector(filter=client_filter(flt))
        self._client.delete(collection.name, points_selector=selector, wait=True)

    def set_payload(
        self, collection: Collection, updates: Sequence[tuple[dict[str, Any], list[str]]]
    ) -> None:
        operations = [
            qm.SetPayloadOperation(
                set_payload=qm.SetPayload(
                    payload=payload, filter=qm.Filter(must=[qm.HasIdCondition(has_id=ids)])
                )
            )
            for payload, ids in updates
        ]
        self._client.batch_update_points(collection.name, operations, wait=True)

    def query(
        self, collection: Collection, plan: VectorQuery, flt: PayloadFilter | None
    ) -> list[ScoredPoint]:
        args = client_query_args(plan, client_filter(flt), self._multivector(collection, plan))
        response = self._explained(collection, plan, self._client.query_points, collection.name, **args)
        return [ScoredPoint(str(p.id), float(p.score), dict(p.payload or {})) for p in response.points]

    def query_batch(
        self, collection: Collection, plans: Sequence[VectorQuery], flt: PayloadFilter | None
    ) -> list[list[tuple[Hashable, float]]]:
        wanted = client_filter(flt)
        requests = [
            qm.QueryRequest(
                **_batch_args(
                    client_query_args(plan, wanted, self._multivector(collection, plan), with_payload=False)
                )
            )
            for plan in plans
        ]
        answers = self._explained(
            collection, plans[0], self._client.query_batch_points, collection.name, requests=requests
        )
        return [[(str(p.id), float(p.score)) for p in answer.points] for answer in answers]

    def _multivector(self, collection: Collection, plan: VectorQuery) -> bool:
        # the layout of the dense side (one vector or windows) is needed to phrase the query
        return plan.dense is not None and collection.multivector(self.layout(collection))

    def _explained(
        self, collection: Collection, plan: VectorQuery, call: Any, *args: Any, **kwargs: Any
    ) -> Any:
        try:
            return call(*args, **kwargs)
        except Exception as exc:
            if plan.dense is not None and not is_unavailable(exc):
                # The collection may have been rebuilt elsewhere; explain in index terms if so.
                check_dense(self.identity(collection), len(plan.dense))
            raise

    def scroll(self, collection: Collection, page: Page) -> tuple[list[Record], Any]:
        return self._client.scroll(  # type: ignore[return-value]
            collection.name,
            scroll_filter=client_filter(page.flt),
            limit=page.limit,
            offset=page.offset,
            with_payload=page.payload,
            with_vectors=page.vectors,
        )

    def count(self, collection: Collection, flt: PayloadFilter | None = None) -> int:
        return int(self._client.count(collection.name, count_filter=client_filter(flt), exact=True).count)

    def retrieve(self, collection: Collection, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        given = {str(i): i for i in ids}
        records = self._client.retrieve(
            collection.name, ids=list(given), with_payload=True, with_vectors=False
        )
        return {given[str(r.id)]: dict(r.payload or {}) for r in records}

    def retrieve_terms(
        self, collection: Collection, ids: Sequence[Hashable]
    ) -> dict[Hashable, frozenset[int]]:
        given = {str(i): i for i in ids}
        records = self._client.retrieve(
            collection.name, ids=list(given), with_payload=False, with_vectors=[SPARSE]
        )
        return {given[str(r.id)]: term_indices(r.vector) for r in records}

    def flush(self, collection: Collection) -> None:
        """Nothing to do: a write is acknowledged once the server (or local mode) holds it."""

    def optimize(self, collection: Collection) -> None:
        """Nothing to do: a server's optimizers run by themselves (and local mode has none)."""


# -- translation -----------------------------------------------------------------------------------


def client_query_args(
    query: VectorQuery, flt: qm.Filter | None, multivector: bool = False, *, with_payload: bool = True
) -> dict[str, Any]:
    """`query_points` arguments for a `VectorQuery` (the k of RRF always sent: see the module's doc)."""
    args: dict[str, Any] = {"limit": query.limit, "query_filter": flt, "with_payload": with_payload}
    floor = {} if query.dense_floor is None else {"score_threshold": query.dense_floor}
    if query.dense is not None and query.sparse is not None:
        size = query.prefetch_limit
        args["prefetch"] = [
            qm.Prefetch(
                query=dense_query(query.dense, multivector), using=DENSE, limit=size, filter=flt, **floor
            ),
            qm.Prefetch(query=_sparse(query.sparse), using=SPARSE, limit=size, filter=flt),
        ]
        args["query"] = (
            qm.FusionQuery(fusion=qm.Fusion.DBSF)
            if query.fusion == "dbsf"
            else qm.RrfQuery(rrf=qm.Rrf(k=query.rrf_k, weights=list(query.rrf_weights)))
        )
    elif query.dense is not None:
        args.update(query=dense_query(query.dense, multivector), using=DENSE, **floor)
    elif query.sparse is not None:
        args.update(query=_sparse(query.sparse), using=SPARSE)
    return args


def _batch_args(args: dict[str, Any]) -> dict[str, Any]:
    """`query_points` arguments as a batch's `QueryRequest` fields (its filter is called `filter`)."""
    return {("filter" if key == "query_filter" else key): value for key, value in args.items()}


def _sparse(sparse: SparseVector) -> qm.SparseVector:
    return qm.SparseVector(indices=list(sparse.indices), values=list(sparse.values))


def _point_struct(point: StoredPoint) -> qm.PointStruct:
    vector: dict[str, Any] = {}
    if point.sparse is not None:
        vector[SPARSE] = _sparse(point.sparse)
    if point.dense is not None:
        vector[DENSE] = point.dense
    return qm.PointStruct(id=point.id, vector=vector, payload=dict(point.payload))


def client_filter(flt: PayloadFilter | None) -> qm.Filter | None:
    if flt is None:
        return None
    must: list[qm.Condition] = [_condition(match) for match in flt.must]
    should: list[qm.Condition] = [_condition(match) for match in flt.should]
    must_not: list[qm.Condition] = [qm.HasVectorCondition(has_vector=flt.lacking)] if flt.lacking else []
    return qm.Filter(must=must or None, should=should or None, must_not=must_not or None)


def _condition(match: FieldMatch) -> qm.FieldCondition:
    if match.is_range:
        return qm.FieldCondition(key=match.key, range=qm.Range(gte=match.at_least, lte=match.at_most))
    return qm.FieldCondition(key=match.key, match=qm.MatchAny(any=list(match.values)))  # type: ignore[arg-type]


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
