"""One query of a collection with the named vectors `dense` and `sparse`, decided once for both engines.

What is searched (dense, keyword, or both fused), how deep each side's prefetch goes, the fusion and its
weights, and where a similarity floor applies are rules of the index, not of an engine: the chunk store and
the memory store build their query here, and each engine translates a `VectorQuery` in one function
(`client_query_args` in client_engine, `edge_request` in edge_engine).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from backend.domain.models import SparseVector

MEMORY_PREFETCH_FACTOR = 4  # each side of a fact search looks this many times deeper than the answer


@dataclass(frozen=True, slots=True)
class VectorQuery:
    limit: int
    dense: tuple[float, ...] | None
    sparse: SparseVector | None
    prefetch_limit: int  # per side, when both are fused
    fusion: str = "rrf"  # reciprocal rank fusion (with k and weights), or "dbsf" (distribution-based)
    rrf_k: int = 60
    rrf_weights: tuple[float, float] = (1.0, 1.0)  # dense, keyword
    dense_floor: float | None = None  # least cosine similarity of a dense match (on its prefetch when fused)

    @property
    def fused(self) -> bool:
        return self.dense is not None and self.sparse is not None


def vector_query(
    *,
    dense: Sequence[float] | None,
    sparse: SparseVector | None,
    limit: int,
    prefetch_limit: int,
    fusion: str = "rrf",
    rrf_k: int = 60,
    rrf_weights: tuple[float, float] = (1.0, 1.0),
    dense_floor: float | None = None,
) -> VectorQuery | None:
    """None when nothing can match: no room for a hit, or a sparse vector without terms and no dense one.
    (Neither vector given at all is the caller's mistake: the stores reject it, `check_query_vectors`.)"""
    if sparse is not None and sparse.is_empty:
        if dense is None:
            return None
        sparse = None  # no terms: nothing can match on the keyword side
    if limit <= 0:
        return None
    return VectorQuery(
        limit=limit,
        dense=tuple(float(x) for x in dense) if dense is not None else None,
        sparse=sparse,
        prefetch_limit=max(prefetch_limit, 1),
        fusion=fusion,
        rrf_k=rrf_k,
        rrf_weights=rrf_weights,
        dense_floor=dense_floor,
    )


def memory_query(
    *,
    dense: Sequence[float] | None,
    sparse: SparseVector | None,
    limit: int,
    min_similarity: float,
    rrf_k: int,
) -> VectorQuery | None:
    """A fact search: both sides fused by plain RRF, each looking MEMORY_PREFETCH_FACTOR times deeper, and
    a dense match counts from `min_similarity`."""
    if dense is None and (sparse is None or sparse.is_empty):
        return None
    return vector_query(
        dense=dense,
        sparse=sparse,
        limit=limit,
        prefetch_limit=limit * MEMORY_PREFETCH_FACTOR,
        rrf_k=rrf_k,
        dense_floor=min_similarity,
    )


def side_queries(*, dense: Sequence[float], sparse: SparseVector, limit: int) -> list[VectorQuery]:
    """The two sides of a fusion done outside the engine, dense first, each `limit` deep: the keyword side is
    left out when the query has no terms, and both when there is no room for a hit."""
    plans = [
        vector_query(dense=dense, sparse=None, limit=limit, prefetch_limit=limit),
        vector_query(dense=None, sparse=sparse, limit=limit, prefetch_limit=limit),
    ]
    return [plan for plan in plans if plan is not None]
