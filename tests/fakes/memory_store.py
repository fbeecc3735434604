"""`MemoryStore` in memory: one fact per key with its vectors, searched the way the port says (keyword
matches, dense matches from `min_similarity`, both fused by RRF, each side looking 4x deeper than asked).

Leaves out: persistence (a `FactShelf` handed to a second store plays "reopen the same data") and the
engines' payload encoding (times are kept exactly as given)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from backend.application.ports import MemoryStore
from backend.domain.errors import IndexNotReadyError
from backend.domain.models import SparseVector
from backend.domain.notes.memory import MemoryRecord
from tests.fakes._engine import Collection, Shelf, check_dense, dense_side, fused, port_arguments, sparse_side

PREFETCH_FACTOR = 4


@dataclass
class FactShelf(Shelf):
    facts: dict[str, tuple[MemoryRecord, SparseVector, tuple[float, ...] | None]] = field(
        default_factory=dict
    )

    def clear(self) -> None:
        self.facts = {}


class InMemoryMemoryStore(Collection[FactShelf]):
    def __init__(self, shelf: FactShelf | None = None) -> None:
        super().__init__(shelf if shelf is not None else FactShelf())

    def put(self, record: MemoryRecord, *, sparse: SparseVector, dense: Sequence[float] | None) -> None:
        with self._lock:
            self._enter("put")
            if self.shelf.identity is None:
                raise IndexNotReadyError("the memory store has not been created")
            if dense is not None:
                check_dense(self.shelf.identity, len(dense))
            self.shelf.facts[record.key] = (record, sparse, None if dense is None else tuple(dense))

    def get(self, key: str) -> MemoryRecord | None:
        with self._lock:
            self._enter("get")
            stored = self.shelf.facts.get(key)
            return stored[0] if stored else None

    def all(self) -> list[MemoryRecord]:
        with self._lock:
            self._enter("all")
            return [self.shelf.facts[key][0] for key in sorted(self.shelf.facts)]

    def delete(self, key: str) -> bool:
        with self._lock:
            self._enter("delete")
            return self.shelf.facts.pop(key, None) is not None

    def search(self, **request: Any) -> list[tuple[MemoryRecord, float]]:
        asked = port_arguments(MemoryStore.search, request)
        dense, sparse, limit = asked.dense, asked.sparse, asked.limit
        words = sparse if sparse is not None and not sparse.is_empty else None
        if (dense is None and words is None) or limit <= 0:
            return []
        with self._lock:
            self._enter("search")
            if self.shelf.identity is None:
                return []
            if dense is not None:
                check_dense(self.shelf.identity, len(dense))
            depth = limit * PREFETCH_FACTOR if dense is not None and words is not None else limit
            sides = []
            if dense is not None:
                vectors = {k: [v] for k, (_, _, v) in self.shelf.facts.items() if v is not None}
                sides.append(dense_side(dense, vectors, depth, floor=asked.min_similarity))
            if words is not None:
                sides.append(sparse_side(words, {k: s for k, (_, s, _) in self.shelf.facts.items()}, depth))
            ranked = (
                sides[0]
                if len(sides) == 1
                else fused(sides, how="rrf", k=asked.rrf_k, weights=(1, 1), limit=limit)
            )
            return [(self.shelf.facts[key][0], score) for key, score in ranked]
