"""What the in-memory stores share: how a closed or unreachable store answers, and the scoring Qdrant does
(cosine for dense vectors, dot product over IDF-weighted terms for sparse ones, the port's fusions).

Plain Python over a few hundred points: the point is that a use-case test reads what the rule does, not that
it is fast on a large corpus."""

from __future__ import annotations

import inspect
import math
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, Generic, TypeVar

from backend.domain.errors import IndexUnavailableError, StoreError
from backend.domain.models import IndexIdentity, SparseVector
from backend.domain.ranking import fusion

K = TypeVar("K", bound=Hashable)


class Switchable:
    """A store a test can close (StoreError from then on, as the port says) or take down (`down = True`:
    IndexUnavailableError, what an adapter raises when Qdrant cannot be reached). `calls` lists the port
    methods called, in order, so a test can count store round trips."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._closed = False
        self.down = False
        self.calls: list[str] = []

    def _enter(self, method: str) -> None:
        self.calls.append(method)
        if self._closed:
            raise StoreError("the store has been closed")
        if self.down:
            raise IndexUnavailableError("the store cannot be reached (switched off by the test)")

    def close(self) -> None:
        with self._lock:
            self._closed = True


@dataclass
class Shelf:
    """The data of one collection, kept apart from the store object: a second store handed the same shelf
    plays "reopen the same data" (what an engine's files on disk give)."""

    identity: IndexIdentity | None = None

    def clear(self) -> None:
        raise NotImplementedError


S = TypeVar("S", bound=Shelf)


class Collection(Switchable, Generic[S]):
    """A store of one collection, created for (and recording) an `IndexIdentity`; none before `create`."""

    def __init__(self, shelf: S) -> None:
        super().__init__()
        self.shelf = shelf

    def identity(self) -> IndexIdentity | None:
        self.calls.append("identity")
        return self.shelf.identity

    def create(self, identity: IndexIdentity) -> None:
        with self._lock:
            self._enter("create")
            self.shelf.identity = identity
            self.shelf.clear()


def port_arguments(method: Callable[..., Any], request: dict[str, Any]) -> SimpleNamespace:
    """The keyword arguments of a call, checked against the port method's own signature and completed with
    its defaults: a fake taking `**request` accepts exactly what the port does, and cannot drift from it."""
    bound = inspect.signature(method).bind(None, **request)
    bound.apply_defaults()
    return SimpleNamespace(**{name: value for name, value in bound.arguments.items() if name != "self"})


def check_dense(identity: IndexIdentity | None, length: int) -> None:
    """The port's rule for a dense vector the collection cannot take (both adapters' words)."""
    if identity is None:
        return
    if identity.dimension is None:
        raise StoreError(
            "this index is keyword-only (built without an embedding model) and has no dense vectors"
        )
    if length != identity.dimension:
        raise StoreError(f"dense vector has {length} dimensions but the index has {identity.dimension}")


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def best_first(scores: Iterable[tuple[K, float]], limit: int) -> list[tuple[K, float]]:
    """Ties by id: Qdrant orders them by storage, which no test may rely on; the fake is at least stable."""
    return sorted(scores, key=lambda item: (-item[1], str(item[0])))[: max(limit, 0)]


def dense_side(
    query: Sequence[float],
    vectors: Mapping[K, Sequence[Sequence[float]]],
    limit: int,
    floor: float | None = None,
) -> list[tuple[K, float]]:
    """Nearest by cosine; a point with several vectors (a chunk and its windows) scores its best (MAX_SIM)."""
    scored = ((key, max(cosine(query, v) for v in rows)) for key, rows in vectors.items() if rows)
    return best_first(((key, s) for key, s in scored if floor is None or s >= floor), limit)


def sparse_side(query: SparseVector, vectors: Mapping[K, SparseVector], limit: int) -> list[tuple[K, float]]:
    """Qdrant's sparse search with the IDF modifier: each query term weighs ln(1 + (N - n + 0.5) / (n + 0.5))
    (N points, n of them holding the term); only points sharing a term with the query are found."""
    total = len(vectors)
    holding = Counter(term for vector in vectors.values() for term in set(vector.indices))
    asked = dict(zip(query.indices, query.values, strict=True))
    idf = {t: math.log(1 + (total - holding[t] + 0.5) / (holding[t] + 0.5)) for t in asked if holding[t]}
    scored = []
    for key, vector in vectors.items():
        shared = [(t, v) for t, v in zip(vector.indices, vector.values, strict=True) if t in idf]
        if shared:
            scored.append((key, sum(asked[t] * idf[t] * v for t, v in shared)))
    return best_first(scored, limit)


def fused(
    sides: Sequence[list[tuple[K, float]]], *, how: str, k: int, weights: Sequence[float], limit: int
) -> list[tuple[K, float]]:
    """The port's fusions, by the domain's formulas (which the contract suite checks against both engines)."""
    scores = fusion.dbsf(sides) if how == "dbsf" else fusion.rrf(sides, weights, k)
    return best_first(scores.items(), limit)
