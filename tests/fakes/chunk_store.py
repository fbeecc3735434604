"""`ChunkStore` in memory: the port's contract (tests/fakes_contract runs the engines' contract cases on it)
without an engine, for tests of the rules that read and write chunks.

Leaves out: persistence (a `ChunkShelf` handed to a second store plays "reopen the same data"), the disk
guard, corruption, locking between processes, and Qdrant's order among equal scores (ties go by id here)."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from backend.application.ports import ChunkStore
from backend.domain.errors import IndexNotReadyError, StoreError
from backend.domain.index.payload import CHUNK_INDEX, CONTENT_HASH, DATE, NOTE_PATH, TAGS
from backend.domain.models import (
    ChunkEntry,
    DenseVectors,
    PointFilter,
    PointRecord,
    ScoredPoint,
    SparseVector,
)
from tests.fakes._engine import Collection, Shelf, check_dense, dense_side, fused, port_arguments, sparse_side


@dataclass
class ChunkShelf(Shelf):
    points: dict[str, PointRecord] = field(default_factory=dict)

    def clear(self) -> None:
        self.points = {}


def matches(payload: dict[str, Any], wanted: PointFilter | None) -> bool:
    """`PointFilter` as its docstring says: every given field must hold; paths and tags match any value,
    folders any prefix (whole folder names: `journal` is not `journalism`; `/` is the whole vault), dates
    inclusive against the note's date (an undated note is outside any date range)."""
    if wanted is None:
        return True
    path = str(payload.get(NOTE_PATH, ""))
    folders = {folder.strip().strip("/") for folder in wanted.folders}
    if wanted.note_paths and path not in wanted.note_paths:
        return False
    if folders and "" not in folders and not any(path.startswith(f"{folder}/") for folder in folders):
        return False
    if wanted.tags and not set(payload.get(TAGS) or ()) & set(wanted.tags):
        return False
    if wanted.date_from or wanted.date_to:
        day = str(payload.get(DATE) or "")[:10]
        low, high = _day(wanted.date_from), _day(wanted.date_to)
        if not day or (low and day < low) or (high and day > high):
            return False
    return True


def _day(value: str | None) -> str | None:
    return dt.date.fromisoformat(value[:10]).isoformat() if value else None  # ValueError for a bad day


class InMemoryChunkStore(Collection[ChunkShelf]):
    def __init__(self, shelf: ChunkShelf | None = None) -> None:
        super().__init__(shelf if shelf is not None else ChunkShelf())

    # -- writes ----------------------------------------------------------------------------------

    def upsert(self, points: Sequence[PointRecord]) -> None:
        if not points:
            return
        with self._lock:
            self._ready("upsert")
            self._check_dense(p.dense for p in points)
            self.shelf.points.update((p.id, copy.deepcopy(p)) for p in points)

    def add_dense(self, vectors: Sequence[DenseVectors]) -> None:
        if not vectors:
            return
        with self._lock:
            self._ready("add_dense")
            self._check_dense(p.dense for p in vectors)
            for point in vectors:  # in order, up to a missing point: as both engines do
                stored = self.shelf.points.get(point.id)
                if stored is None:
                    raise StoreError(f"could not add dense vectors: no point with id {point.id}")
                self.shelf.points[point.id] = replace(stored, dense=point.dense, windows=point.windows)

    def _check_dense(self, vectors: Iterable[Sequence[float] | None]) -> None:
        for vector in vectors:  # all before anything is written, as the engines' store does
            if vector is not None:
                check_dense(self.shelf.identity, len(vector))

    def delete_by_note(self, note_path: str) -> None:
        self._delete("delete_by_note", lambda p: p[NOTE_PATH] == note_path)

    def delete_chunks_from(self, note_path: str, first_stale: int) -> None:
        self._delete(
            "delete_chunks_from", lambda p: p[NOTE_PATH] == note_path and p[CHUNK_INDEX] >= first_stale
        )

    def _delete(self, method: str, doomed: Any) -> None:
        with self._lock:
            self._ready(method)
            self.shelf.points = {i: p for i, p in self.shelf.points.items() if not doomed(p.payload)}

    # -- reads -----------------------------------------------------------------------------------

    def inventory(self) -> list[ChunkEntry]:
        with self._lock:
            if self._missing("inventory"):
                return []
            keyword_only = self._keyword_only()
            return [
                ChunkEntry(
                    id=p.id,
                    note_path=str(p.payload.get(NOTE_PATH, "")),
                    chunk_index=int(p.payload.get(CHUNK_INDEX, -1)),
                    content_hash=str(p.payload.get(CONTENT_HASH, "")),
                    has_dense=keyword_only or p.dense is not None,
                )
                for p in self._sorted()
            ]

    def note_vectors(self, note_path: str) -> list[tuple[dict[str, Any], list[float]]]:
        with self._lock:
            if self._missing("note_vectors") or self._keyword_only():
                return []
            return [
                (copy.deepcopy(p.payload), list(p.dense))
                for p in self._sorted()
                if p.payload.get(NOTE_PATH) == note_path and p.dense is not None
            ]

    def query(self, **request: Any) -> list[ScoredPoint]:
        asked = port_arguments(ChunkStore.query, request)
        dense, sparse, limit, wanted = asked.dense, asked.sparse, asked.limit, asked.point_filter
        if sparse is not None and sparse.is_empty:
            if dense is None:
                return []
            sparse = None  # no terms: the keyword side can match nothing
        if limit <= 0:
            return []
        with self._lock:
            self._ready("query")
            self._check_vectors(dense, sparse)
            if dense is not None and sparse is not None:
                depth = max(asked.prefetch_limit, 1)
                sides = [self._dense(dense, depth, wanted), self._sparse(sparse, depth, wanted)]
                ranked = fused(sides, how=asked.fusion, k=asked.rrf_k, weights=asked.rrf_weights, limit=limit)
            elif dense is not None:
                ranked = self._dense(dense, limit, wanted)
            else:
                assert sparse is not None
                ranked = self._sparse(sparse, limit, wanted)
            return [ScoredPoint(i, s, copy.deepcopy(self.shelf.points[i].payload)) for i, s in ranked]

    def rank_sides(self, **request: Any) -> tuple[list[tuple[Hashable, float]], list[tuple[Hashable, float]]]:
        asked = port_arguments(ChunkStore.rank_sides, request)
        dense, sparse, limit, wanted = asked.dense, asked.sparse, asked.limit, asked.point_filter
        if limit <= 0:
            return [], []
        with self._lock:
            self._ready("rank_sides")
            self._check_vectors(dense, sparse)
            keyword = [] if sparse.is_empty else self._sparse(sparse, limit, wanted)
            return list(self._dense(dense, limit, wanted)), list(keyword)

    def payloads(self, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        with self._lock:
            self._ready("payloads")
            stored = self.shelf.points
            return {i: copy.deepcopy(stored[str(i)].payload) for i in ids if str(i) in stored}

    def optimize(self) -> None:
        pass  # nothing to lay out: every search scans the shelf

    def warm(
        self,
        stop: Callable[[], bool] | None = None,
        each_page: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> int:
        if each_page is not None and not (stop is not None and stop()):
            with self._lock:
                page = [copy.deepcopy(point.payload) for point in self.shelf.points.values()]
            each_page(page)
        return 0  # everything is in memory already: nothing read in

    def keyword_terms(self, ids: Sequence[Hashable]) -> dict[Hashable, frozenset[int]]:
        with self._lock:
            self._ready("keyword_terms")
            stored = self.shelf.points
            return {i: frozenset(stored[str(i)].sparse.indices) for i in ids if str(i) in stored}

    def count(self, point_filter: PointFilter | None = None) -> int:
        with self._lock:
            return 0 if self._missing("count") else len(self._kept(point_filter))

    def scroll(
        self, *, point_filter: PointFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        with self._lock:
            if self._missing("scroll"):
                return [], None
            page, following = _page(self._kept(point_filter), limit, offset)
            return [ScoredPoint(p.id, 0.0, copy.deepcopy(p.payload)) for p in page], following

    def export(self, *, limit: int = 256, offset: str | None = None) -> tuple[list[PointRecord], str | None]:
        with self._lock:
            if self._missing("export"):
                return [], None
            page, following = _page(self._sorted(), limit, offset)
            return [copy.deepcopy(p) for p in page], following

    # -- helpers ---------------------------------------------------------------------------------

    def _missing(self, method: str) -> bool:
        self._enter(method)
        return self.shelf.identity is None

    def _ready(self, method: str) -> None:
        if self._missing(method):
            raise IndexNotReadyError("the index has not been created")

    def _keyword_only(self) -> bool:
        return self.shelf.identity is not None and self.shelf.identity.dimension is None

    def _check_vectors(self, dense: Sequence[float] | None, sparse: SparseVector | None) -> None:
        if dense is None and sparse is None:
            raise StoreError("a query needs a dense vector, a sparse vector or both")
        if dense is not None:
            check_dense(self.shelf.identity, len(dense))

    def _sorted(self) -> list[PointRecord]:
        return [self.shelf.points[i] for i in sorted(self.shelf.points)]

    def _kept(self, point_filter: PointFilter | None) -> list[PointRecord]:
        return [p for p in self._sorted() if matches(p.payload, point_filter)]

    def _dense(
        self, query: Sequence[float], limit: int, wanted: PointFilter | None
    ) -> list[tuple[str, float]]:
        windows = self.shelf.identity is not None and self.shelf.identity.dense_windows > 0
        vectors = {
            p.id: [p.dense, *(p.windows if windows else ())]
            for p in self._kept(wanted)
            if p.dense is not None
        }
        return dense_side(query, vectors, limit)

    def _sparse(self, query: SparseVector, limit: int, wanted: PointFilter | None) -> list[tuple[str, float]]:
        # IDF counts every point of the collection, as Qdrant's does, not only the filtered ones
        every = {p.id: p.sparse for p in self.shelf.points.values()}
        kept = {p.id for p in self._kept(wanted)}
        return [(i, s) for i, s in sparse_side(query, every, len(every)) if i in kept][:limit]


def _page(points: list[PointRecord], limit: int, offset: str | None) -> tuple[list[PointRecord], str | None]:
    """Pages in id order; the offset is the id the next page starts at, as Qdrant's."""
    start = [p for p in points if offset is None or p.id >= offset]
    return start[:limit], start[limit].id if len(start) > limit else None
