"""The small engine interface the Qdrant stores are written over, in engine-neutral terms.

The chunk, graph and memory stores (chunk_store, graph_store, memory_store) decide
*what* is stored, matched and asked; a `QdrantEngine` does it on one library: `EdgeEngine`
(edge_engine: qdrant-edge shards in-process) or `ClientEngine` (client_engine: a Qdrant
server, or qdrant-client's local mode in tests). What is truly engine-specific stays in those two files:
where the index identity is kept, locking, error mapping, the disk guard, batching.

Every store owns one engine, so each store keeps its own locks. A store calls engine operations inside one
of the engine's three contexts: `reading` (shared), `writing` (one writer at a time, disk guard) and
`managing` (exclusive: create, drop, close). Reads and writes of a collection that does not exist raise
`IndexNotReadyError`; the stores turn that into "nothing there" for reads.

Neither qdrant-client nor qdrant-edge is imported here: qdrant-client takes most of a second to import, and
the embedded set-up never needs it.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from backend.domain.errors import StoreError
from backend.domain.models import DenseVectors, IndexIdentity, PointRecord, ScoredPoint, SparseVector
from backend.infrastructure.qdrant.vector_query import VectorQuery

DENSE = "dense"
SPARSE = "sparse"

# The collections of one index, named here only (a generation adds its suffix or folder: index_catalog/).
DEFAULT_BASE = "obsidian"


def collection_name(kind: str, base: str = DEFAULT_BASE) -> str:
    """`<base>_<kind>`: chunks, notes and links of an index, the catalog's own records, the memory."""
    return f"{base}_{kind}"


CHUNKS_COLLECTION = collection_name("chunks")
NOTES_COLLECTION = collection_name("notes")
LINKS_COLLECTION = collection_name("links")

# Keys of the identity record (collection metadata for qdrant-client, a JSON file for qdrant-edge).
IDENTITY_MODEL = "embedding_model"
IDENTITY_DIMENSION = "dimension"
IDENTITY_KEYWORDS = "keyword_encoding"
IDENTITY_WINDOWS = "dense_windows"
IDENTITY_DOCUMENT_INSTRUCTION = "document_instruction"
IDENTITY_QUERY_INSTRUCTION = "query_instruction"
IDENTITY_CHUNK_RULES = "chunk_rules"


@dataclass(frozen=True, slots=True)
class Collection:
    """What an engine needs to know to create and open a collection.

    `vectors`: a dense vector (when the identity has a dimension) and a sparse one; False for payload-only.
    `windows`: the dense side may be a multivector of windows (the chunks), when the identity says so.
    `batch`: the most points one request to a Qdrant server carries (its body limit).
    `reindex_on_open`: payload indexes are created again when the collection is opened, healing one whose
    creation was cut short."""

    name: str
    keyword_fields: tuple[str, ...] = ()
    integer_fields: tuple[str, ...] = ()
    vectors: bool = True
    windows: bool = False
    batch: int = 256
    reindex_on_open: bool = False

    def multivector(self, identity: IndexIdentity | None) -> bool:
        """Dense windows are stored as a multivector compared by MAX_SIM: the chunk's own vector first,
        then its windows' (a one-block chunk: its own vector alone)."""
        return (
            self.windows
            and identity is not None
            and identity.dimension is not None
            and identity.dense_windows > 0
        )


@dataclass(frozen=True, slots=True)
class FieldMatch:
    """A payload field equal to any of `values`, or (with `at_least`/`at_most`) a number in that range."""

    key: str
    values: tuple[str | int, ...] = ()
    at_least: int | None = None
    at_most: int | None = None

    @property
    def is_range(self) -> bool:
        return self.at_least is not None or self.at_most is not None


@dataclass(frozen=True, slots=True)
class PayloadFilter:
    """The one engine-neutral filter of every collection: all of `must`, at least one of `should` (when
    given), and (with `lacking`) only points without that named vector. Each engine translates it once."""

    must: tuple[FieldMatch, ...] = ()
    should: tuple[FieldMatch, ...] = ()
    lacking: str | None = None


@dataclass(frozen=True, slots=True)
class StoredPoint:
    """A point as written: `dense` already laid out for its collection (a vector, or a multivector)."""

    id: str
    payload: dict[str, Any]
    sparse: SparseVector | None = None
    dense: list[float] | list[list[float]] | None = None


@dataclass(frozen=True, slots=True)
class Page:
    """One scroll call: the points matching `flt` from `offset` on, with the payload (or only the named
    fields) and the vectors (or only the named ones) asked for."""

    limit: int
    offset: Any = None
    flt: PayloadFilter | None = None
    payload: bool | list[str] = True
    vectors: bool | list[str] = False


class Record(Protocol):
    """A point read back (both libraries' records and scored points have these)."""

    @property
    def id(self) -> Any: ...
    @property
    def payload(self) -> dict[str, Any] | None: ...
    @property
    def vector(self) -> Any: ...


class QdrantEngine(Protocol):
    def declare(self, *collections: Collection) -> None:
        """The collections a store serves (a failure names the one that is missing)."""

    def reading(self, action: str) -> AbstractContextManager[None]: ...
    def writing(self, action: str, *, check_disk: bool = True) -> AbstractContextManager[None]: ...
    def managing(self, action: str) -> AbstractContextManager[None]: ...

    def create(self, collections: Sequence[Collection], identity: IndexIdentity | None = None) -> None:
        """Replace the collections by empty ones (all checked before any is dropped), recording `identity`."""

    def ensure(self, collection: Collection) -> None:
        """Open the collection, creating it (without identity) when it does not exist."""

    def identity(self, collection: Collection) -> IndexIdentity | None:
        """The identity recorded with the collection; None when missing or unreadable."""

    def layout(self, collection: Collection) -> IndexIdentity | None:
        """The identity as last known, to phrase vectors and check them (cheap: cached)."""

    def upsert(self, collection: Collection, points: Sequence[StoredPoint]) -> None: ...
    def update_vectors(
        self, collection: Collection, vectors: Sequence[tuple[str, list[float] | list[list[float]]]]
    ) -> None:
        """Each point's dense value (id, value laid out for the collection), in the collection's batches;
        other vectors and the payload stay. A missing point raises, the points before it written."""

    def delete_ids(self, collection: Collection, ids: Sequence[str]) -> None: ...
    def delete_where(self, collection: Collection, flt: PayloadFilter) -> None: ...
    def set_payload(
        self, collection: Collection, updates: Sequence[tuple[dict[str, Any], list[str]]]
    ) -> None:
        """Each payload set on its ids (by filter: an id deleted meanwhile is skipped, not an error)."""

    def query(
        self, collection: Collection, plan: VectorQuery, flt: PayloadFilter | None
    ) -> list[ScoredPoint]:
        """The hits, best first, each with a payload of its own (the caller may keep or change it)."""

    def query_batch(
        self, collection: Collection, plans: Sequence[VectorQuery], flt: PayloadFilter | None
    ) -> list[list[tuple[Hashable, float]]]:
        """Ids (the engine's own objects, handed back to `retrieve` as they are) and scores, per plan."""

    def scroll(self, collection: Collection, page: Page) -> tuple[list[Record], Any]:
        """One page of the points `page` asks for, and the offset of the next page (None after the last)."""

    def count(self, collection: Collection, flt: PayloadFilter | None = None) -> int: ...
    def retrieve(self, collection: Collection, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        """Payloads of the points found, keyed by the ids as given."""

    def retrieve_terms(
        self, collection: Collection, ids: Sequence[Hashable]
    ) -> dict[Hashable, frozenset[int]]:
        """The indices of the keyword vector of the points found, keyed by the ids as given."""

    def flush(self, collection: Collection) -> None: ...

    def optimize(self, collection: Collection) -> None:
        """Lay the stored points out for searching (what the engine does by itself on a server). Blocking:
        the embedded engine holds the interpreter while it works (1.1 s for the Zettelkasten's 25,714
        chunks), so only before the service answers (`IndexSupervisor.open`)."""

    def close(self) -> None: ...


class CollectionStore:
    """What a store of one collection that records its identity (the chunks, the memory) does the same way:
    read that identity, create the collection anew with one, close."""

    _what = "index"  # in messages: "could not create the index: ..."

    def __init__(self, engine: QdrantEngine, collection: Collection) -> None:
        self._engine = engine
        self._col = collection
        engine.declare(collection)

    def identity(self) -> IndexIdentity | None:
        with self._engine.reading(f"read the {self._what}'s identity"):
            return self._engine.identity(self._col)

    def create(self, identity: IndexIdentity) -> None:
        with self._engine.managing(f"create the {self._what}"):
            self._engine.create([self._col], identity)

    def close(self) -> None:
        self._engine.close()


# -- identity ---------------------------------------------------------------------------------------


def identity_record(identity: IndexIdentity) -> dict[str, Any]:
    return {
        IDENTITY_MODEL: identity.embedding_model,
        IDENTITY_DIMENSION: identity.dimension,
        IDENTITY_KEYWORDS: identity.keyword_encoding,
        IDENTITY_WINDOWS: identity.dense_windows,
        IDENTITY_DOCUMENT_INSTRUCTION: identity.document_instruction,
        IDENTITY_QUERY_INSTRUCTION: identity.query_instruction,
        IDENTITY_CHUNK_RULES: identity.chunk_rules,
    }


def identity_from_record(record: object) -> IndexIdentity | None:
    """None for anything that is not a well-formed record (missing, foreign or damaged)."""
    if not isinstance(record, dict):
        return None
    model = record.get(IDENTITY_MODEL)
    dimension = record.get(IDENTITY_DIMENSION)
    if not isinstance(model, str) or not model:
        return None
    if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int)):
        return None
    keywords = record.get(IDENTITY_KEYWORDS)
    windows = record.get(IDENTITY_WINDOWS)  # absent before windows existed: one vector per chunk
    return IndexIdentity(
        embedding_model=model,
        dimension=dimension,
        keyword_encoding=keywords if isinstance(keywords, str) else "",
        dense_windows=_count(windows),
        # absent before instructions were recorded: the texts were embedded as they are
        document_instruction=_text(record.get(IDENTITY_DOCUMENT_INSTRUCTION)),
        query_instruction=_text(record.get(IDENTITY_QUERY_INSTRUCTION)),
        chunk_rules=_count(record.get(IDENTITY_CHUNK_RULES)),  # absent before the rules were recorded: 0
    )


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def check_query_vectors(
    identity: IndexIdentity | None, dense: Sequence[float] | None, sparse: SparseVector | None
) -> None:
    """Reject requests Qdrant would fail on, with a message a person can act on."""
    if dense is None and sparse is None:
        raise StoreError("a query needs a dense vector, a sparse vector or both")
    if dense is not None:
        check_dense(identity, len(dense))


def check_dense(identity: IndexIdentity | None, length: int) -> None:
    if identity is None:
        return  # unknown here; the store itself will object if the vector does not fit
    if identity.dimension is None:
        raise StoreError(
            "this index is keyword-only (built without an embedding model) and has no dense vectors",
            suggestion="Search with mode=keyword, or rebuild the index with an embedding model.",
        )
    if length != identity.dimension:
        raise StoreError(
            f"dense vector has {length} dimensions but the index was built with "
            f"{identity.embedding_model} ({identity.dimension} dimensions)",
            suggestion="Use the embedding model the index was built with, or rebuild the index.",
        )


def describe_error(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- the dense side's layout ------------------------------------------------------------------------


def stored_dense(point: PointRecord | DenseVectors, multivector: bool) -> list[float] | list[list[float]]:
    """The value of a point's dense vector as the collection lays it out."""
    assert point.dense is not None
    if multivector:
        return [list(point.dense), *(list(window) for window in point.windows)]
    return list(point.dense)


def dense_query(vector: Sequence[float], multivector: bool) -> list[float] | list[list[float]]:
    """A query vector as the collection compares it: a one-vector multivector under MAX_SIM, so a chunk
    scores the cosine of its best window."""
    query = [float(x) for x in vector]
    return [query] if multivector else query


def split_dense(value: Any) -> tuple[tuple[float, ...] | None, tuple[tuple[float, ...], ...]]:
    """A stored dense value back into the chunk's own vector and its windows' (either layout)."""
    if value is None or len(value) == 0:
        return None, ()
    if isinstance(value[0], (int, float)):
        return tuple(float(x) for x in value), ()
    rows = [tuple(float(x) for x in row) for row in value]
    return rows[0], tuple(rows[1:])


def term_indices(vector: Any) -> frozenset[int]:
    """The indices of a stored point's keyword vector, from either library's record (none without one)."""
    sparse = vector.get(SPARSE) if isinstance(vector, dict) else None
    return frozenset(sparse.indices) if sparse is not None else frozenset()


def point_record(point_id: Any, vector: Any, payload: dict[str, Any] | None) -> PointRecord:
    """A stored point as the store port exports it, from either library's record (both name their sparse
    vector's parts `indices` and `values`)."""
    vectors = vector if isinstance(vector, dict) else {}
    sparse = vectors.get(SPARSE)
    dense, windows = split_dense(vectors.get(DENSE))
    return PointRecord(
        id=str(point_id),
        sparse=SparseVector(tuple(sparse.indices), tuple(float(v) for v in sparse.values))
        if sparse is not None
        else SparseVector((), ()),
        payload=dict(payload or {}),
        dense=dense,
        windows=windows,
    )
