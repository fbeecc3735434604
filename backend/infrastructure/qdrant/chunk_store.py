"""`ChunkStore` over a `QdrantEngine`: the chunks of one index generation, one collection with the named
vectors `dense` (one vector, or a multivector of windows) and `sparse`, and the payload of `domain.payload`.

Written once for both engines: what is stored, filtered and asked is decided here; the engine (qdrant-edge
shards or qdrant-client) does it. A chunk filter (`PointFilter`) is reduced to exact payload matches once
(`normalise_filter`, `chunk_filter`); every field it reads has a payload index (`CHUNK_PAYLOAD_INDEXES`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from backend.domain.errors import IndexNotReadyError
from backend.domain.index.payload import (
    CHUNK_INDEX,
    CONTENT_HASH,
    DATE_NUM,
    FOLDERS,
    NOTE_PATH,
    TAGS,
    date_num,
)
from backend.domain.models import (
    ChunkEntry,
    DenseVectors,
    IndexIdentity,
    PointFilter,
    PointRecord,
    ScoredPoint,
    SparseVector,
)
from backend.infrastructure.qdrant.engine import (
    CHUNKS_COLLECTION,
    DENSE,
    Collection,
    CollectionStore,
    FieldMatch,
    Page,
    PayloadFilter,
    QdrantEngine,
    StoredPoint,
    check_dense,
    check_query_vectors,
    point_record,
    split_dense,
    stored_dense,
)
from backend.infrastructure.qdrant.payload_cache import PayloadCache
from backend.infrastructure.qdrant.vector_query import side_queries, vector_query

_KEYWORD_FIELDS = (NOTE_PATH, FOLDERS, TAGS)
_INTEGER_FIELDS = (DATE_NUM,)
# Every payload field a chunk filter reads (see `chunk_filter`), with the index type it needs.
CHUNK_PAYLOAD_INDEXES = {
    **dict.fromkeys(_KEYWORD_FIELDS, "keyword"),
    **dict.fromkeys(_INTEGER_FIELDS, "integer"),
}
INVENTORY_FIELDS = [NOTE_PATH, CHUNK_INDEX, CONTENT_HASH]  # the payload an inventory reads
INVENTORY_PAGE = 4096
_VECTOR_PAGE = 256
# memory for the payloads kept between searches (payload_cache.py; SEARCH_CACHE_MB): every payload of the
# 13,410-note Zettelkasten takes 72 MB as Python objects
PAYLOAD_CACHE_MB = 96
WARM_PAGE = 1024  # payloads read at a time while warming (each page under its own read lock)
V = TypeVar("V")  # what the cache keeps of a point: its payload, or its keyword terms


def chunk_collection(name: str = CHUNKS_COLLECTION) -> Collection:
    return Collection(name, _KEYWORD_FIELDS, _INTEGER_FIELDS, vectors=True, windows=True, batch=256)


class QdrantChunkStore(CollectionStore):
    def __init__(
        self, engine: QdrantEngine, collection: str = CHUNKS_COLLECTION, *, cache_mb: int = PAYLOAD_CACHE_MB
    ) -> None:
        super().__init__(engine, chunk_collection(collection))
        self._kept = PayloadCache(cache_mb * 1024 * 1024)

    @property
    def payload_cache(self) -> PayloadCache:
        """The payloads kept between searches (its hits and misses say how well it serves)."""
        return self._kept

    def create(self, identity: IndexIdentity) -> None:
        try:
            super().create(identity)
        finally:
            self._kept.clear()

    # -- writes ----------------------------------------------------------------------------------

    def upsert(self, points: Sequence[PointRecord]) -> None:
        if not points:
            return
        with self._engine.writing("write points"):
            multivector = self._dense_layout(p.dense for p in points)
            stored = [
                StoredPoint(
                    p.id, p.payload, p.sparse, stored_dense(p, multivector) if p.dense is not None else None
                )
                for p in points
            ]
            try:
                self._engine.upsert(self._col, stored)
            finally:
                self._kept.forget(str(p.id) for p in points)

    def add_dense(self, vectors: Sequence[DenseVectors]) -> None:
        if not vectors:
            return
        with self._engine.writing("add dense vectors"):
            multivector = self._dense_layout(p.dense for p in vectors)
            # the payloads are not touched, so what the cache keeps of them stays right
            self._engine.update_vectors(self._col, [(p.id, stored_dense(p, multivector)) for p in vectors])

    def _dense_layout(self, vectors: Iterable[Sequence[float] | None]) -> bool:
        """Whether the collection lays dense values out as multivectors, once every vector to be written
        was checked against its dimension (before anything is written)."""
        layout = self._engine.layout(self._col)
        for vector in vectors:
            if vector is not None:
                check_dense(layout, len(vector))
        return self._col.multivector(layout)

    def delete_by_note(self, note_path: str) -> None:
        with self._engine.writing("delete points"):
            try:
                self._engine.delete_where(
                    self._col, PayloadFilter(must=(FieldMatch(NOTE_PATH, (note_path,)),))
                )
            finally:
                self._kept.forget_note(note_path)

    def delete_chunks_from(self, note_path: str, first_stale: int) -> None:
        stale = PayloadFilter(
            must=(FieldMatch(NOTE_PATH, (note_path,)), FieldMatch(CHUNK_INDEX, at_least=first_stale))
        )
        with self._engine.writing("delete points"):
            try:
                self._engine.delete_where(self._col, stale)
            finally:
                self._kept.forget_note(note_path)

    # -- reads -----------------------------------------------------------------------------------

    def inventory(self) -> list[ChunkEntry]:
        try:
            with self._engine.reading("list the index"):
                identity = self._engine.layout(self._col)
                lacking: set[str] = set()
                if identity is not None and identity.dimension is not None:
                    # a keyword-only index has no dense vectors to lack
                    without = PayloadFilter(lacking=DENSE)
                    lacking = {str(r.id) for r in self._scroll_all(without, payload=False)}
                records = self._scroll_all(None, payload=INVENTORY_FIELDS)
        except IndexNotReadyError:
            return []
        return [chunk_entry(r.id, r.payload, str(r.id) not in lacking) for r in records]

    def _scroll_all(self, flt: PayloadFilter | None, *, payload: bool | list[str]) -> list[Any]:
        found: list[Any] = []
        offset: Any = None
        while True:
            records, offset = self._engine.scroll(self._col, Page(INVENTORY_PAGE, offset, flt, payload))
            found += records
            if offset is None:
                return found

    def note_vectors(self, note_path: str) -> list[tuple[dict[str, Any], list[float]]]:
        flt = PayloadFilter(must=(FieldMatch(NOTE_PATH, (note_path,)),))
        found: list[tuple[dict[str, Any], list[float]]] = []
        offset: Any = None
        try:
            with self._engine.reading("read vectors"):
                identity = self._engine.layout(self._col)
                if identity is not None and identity.dimension is None:
                    return []  # a keyword-only index keeps no dense vectors (asking for one is an error)
                while True:
                    page = Page(_VECTOR_PAGE, offset, flt, vectors=[DENSE])
                    records, offset = self._engine.scroll(self._col, page)
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
        plan = vector_query(dense=dense, sparse=sparse, limit=limit, prefetch_limit=prefetch_limit,
                            fusion=fusion, rrf_k=rrf_k, rrf_weights=rrf_weights)  # fmt: skip
        if plan is None:
            return []
        wanted = chunk_filter(normalise_filter(point_filter))
        with self._engine.reading("search"):
            check_query_vectors(self._engine.layout(self._col), plan.dense, plan.sparse)
            if not self._kept.budget:
                return self._engine.query(self._col, plan, wanted)
            # ids and scores, then the payloads: most are kept from earlier searches
            ranked = self._engine.query_batch(self._col, [plan], wanted)[0]
            named = {str(point_id): point_id for point_id, _ in ranked}
            payloads = self._kept_payloads(named)
        return [
            ScoredPoint(name, score, payloads[name])
            for name, (_, score) in zip(named, ranked, strict=True)
            if name in payloads  # deleted meanwhile by a writer (a Qdrant server does not wait for us)
        ]

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
        wanted = chunk_filter(normalise_filter(point_filter))
        with self._engine.reading("search"):
            check_query_vectors(self._engine.layout(self._col), plans[0].dense, plans[-1].sparse)
            ranked = self._engine.query_batch(self._col, plans, wanted)
        return ranked[0], ranked[1] if len(ranked) > 1 else []

    def payloads(self, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        if not ids:
            return {}
        named = {str(point_id): point_id for point_id in ids}
        with self._engine.reading("read payloads"):
            return {named[name]: payload for name, payload in self._kept_payloads(named).items()}

    def _kept_payloads(self, named: dict[str, Hashable]) -> dict[str, dict[str, Any]]:
        """The payloads of the points `named` maps (id as text -> the engine's id), by id as text: the kept
        ones, the rest read from the store and kept (inside `reading`)."""
        found, fresh = self._kept_or_read(named, self._kept.found, self._engine.retrieve, self._kept.keep)
        found.update((name, dict(payload)) for name, payload in fresh.items())  # the kept dicts stay ours
        return found

    def _kept_or_read(
        self,
        named: dict[str, Hashable],
        kept_of: Callable[[Iterable[str]], tuple[dict[str, V], list[str]]],
        read: Callable[[Collection, Sequence[Hashable]], Mapping[Hashable, V]],
        keep: Callable[[int, dict[str, V]], object],
    ) -> tuple[dict[str, V], dict[str, V]]:
        """What the cache keeps of the points `named` maps, and what was `read` from the store for the rest
        (kept unless a write came between: `PayloadCache.epoch`), both by id as text (inside `reading`)."""
        epoch = self._kept.epoch
        found, missing = kept_of(named)
        fresh: dict[str, V] = {}
        if missing:
            read_now = read(self._col, [named[name] for name in missing])
            fresh = {str(point_id): value for point_id, value in read_now.items()}
            keep(epoch, fresh)
        return found, fresh

    def warm(
        self,
        stop: Callable[[], bool] | None = None,
        each_page: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> int:
        """Read stored payloads into memory ahead of searches, until the cache's budget is spent or `stop`
        says so (asked between pages); how many. A page read while a writer wrote is not kept (searches
        read it as they need it). `each_page` sees every page, after the read lock is let go."""
        kept, offset, total = self._kept, None, 0
        while kept.budget and not kept.full and not (stop is not None and stop()):
            try:
                with self._engine.reading("read payloads"):
                    epoch = kept.epoch
                    records, offset = self._engine.scroll(self._col, Page(WARM_PAGE, offset, None, True))
                    read = {str(r.id): dict(r.payload or {}) for r in records}
                    total += kept.keep(epoch, read, only_into_room=True)
            except IndexNotReadyError:
                break
            if each_page is not None:
                each_page([dict(payload) for payload in read.values()])  # the kept dicts stay ours
            if offset is None:
                break
        return total

    def keyword_terms(self, ids: Sequence[Hashable]) -> dict[Hashable, frozenset[int]]:
        if not ids:
            return {}
        named = {str(point_id): point_id for point_id in ids}
        kept = self._kept
        with self._engine.reading("read keyword terms"):
            found, fresh = self._kept_or_read(named, kept.terms, self._engine.retrieve_terms, kept.keep_terms)
        return {named[name]: terms for name, terms in (found | fresh).items()}

    def optimize(self) -> None:
        with self._engine.writing("lay the index out for search"):
            self._engine.optimize(self._col)

    def count(self, point_filter: PointFilter | None = None) -> int:
        wanted = chunk_filter(normalise_filter(point_filter))
        try:
            with self._engine.reading("count points"):
                return self._engine.count(self._col, wanted)
        except IndexNotReadyError:
            return 0  # no collection yet (or mid-rebuild): nothing to count

    def scroll(
        self, *, point_filter: PointFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        wanted = chunk_filter(normalise_filter(point_filter))
        try:
            with self._engine.reading("list points"):
                records, next_offset = self._engine.scroll(self._col, Page(limit, offset, wanted))
        except IndexNotReadyError:
            return [], None  # no collection yet (or mid-rebuild): nothing to list
        page = [ScoredPoint(id=str(r.id), score=0.0, payload=dict(r.payload or {})) for r in records]
        return page, None if next_offset is None else str(next_offset)

    def export(self, *, limit: int = 256, offset: str | None = None) -> tuple[list[PointRecord], str | None]:
        try:
            with self._engine.reading("export points"):
                records, next_offset = self._engine.scroll(self._col, Page(limit, offset, vectors=True))
        except IndexNotReadyError:
            return [], None
        page = [point_record(r.id, r.vector, r.payload) for r in records]
        return page, None if next_offset is None else str(next_offset)


# -- chunk filters and entries ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """A `PointFilter` reduced to the exact payload matches Qdrant evaluates (all AND-ed)."""

    note_paths: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()  # exact values of the payload `folders` list
    tags: tuple[str, ...] = ()
    date_num_from: int | None = None  # inclusive YYYYMMDD
    date_num_to: int | None = None


def chunk_filter(spec: FilterSpec | None) -> PayloadFilter | None:
    if spec is None:
        return None
    must = [
        FieldMatch(key, values)
        for key, values in ((NOTE_PATH, spec.note_paths), (FOLDERS, spec.folders), (TAGS, spec.tags))
        if values
    ]
    if spec.date_num_from is not None or spec.date_num_to is not None:
        must.append(FieldMatch(DATE_NUM, at_least=spec.date_num_from, at_most=spec.date_num_to))
    return PayloadFilter(must=tuple(must))


def normalise_filter(point_filter: PointFilter | None) -> FilterSpec | None:
    """None when nothing restricts the result.

    Folders: the payload lists every ancestor folder, so "notes under `a/b`" is an exact match on `a/b`;
    surrounding slashes are dropped, and asking for the vault root (`/` or ``) removes the folder condition.
    Raises ValueError for a date that is not an ISO day.
    """
    if point_filter is None or point_filter.is_empty:
        return None
    folders = tuple(dict.fromkeys(folder.strip().strip("/") for folder in point_filter.folders))
    if "" in folders:
        folders = ()
    spec = FilterSpec(
        note_paths=tuple(dict.fromkeys(point_filter.note_paths)),
        folders=folders,
        tags=tuple(dict.fromkeys(point_filter.tags)),
        date_num_from=_day_num(point_filter.date_from),
        date_num_to=_day_num(point_filter.date_to),
    )
    if spec == FilterSpec():
        return None
    return spec


def _day_num(day: str | None) -> int | None:
    if not day:
        return None
    try:
        dt.date.fromisoformat(day[:10])
    except ValueError as exc:
        raise ValueError(f"not an ISO day (YYYY-MM-DD): {day!r}") from exc
    return date_num(day)


def chunk_entry(point_id: object, payload: dict[str, Any] | None, has_dense: bool) -> ChunkEntry:
    payload = payload or {}
    index = payload.get(CHUNK_INDEX)
    return ChunkEntry(
        id=str(point_id),
        note_path=str(payload.get(NOTE_PATH, "")),
        chunk_index=index if isinstance(index, int) and not isinstance(index, bool) else -1,
        content_hash=str(payload.get(CONTENT_HASH, "")),
        has_dense=has_dense,
    )
