"""Search use case: one query -> dense and/or keyword vectors -> one fused store query -> hits."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from backend.application.indexing import IndexService
from backend.application.note_graph import RelatedNote
from backend.application.ports import ChunkStore, Embedder
from backend.domain.errors import EmbedderUnavailableError
from backend.domain.models import PointFilter, SearchMode
from backend.domain.sparse import SparseEncoder

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SearchHit:
    chunk_id: str
    score: float
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[SearchHit]
    total_hits: int
    mode: SearchMode  # the mode actually used (keyword when dense was unavailable)
    warnings: list[str] = field(default_factory=list)
    related: list[RelatedNote] = field(default_factory=list)

    @property
    def degraded(self) -> bool:
        return bool(self.warnings)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    prefetch_limit: int = 100
    rrf_k: int = 5


class SearchService:
    def __init__(
        self,
        *,
        store: ChunkStore,
        embedder: Embedder | None,
        encoder: SparseEncoder,
        index: IndexService,
        options: SearchOptions | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._encoder = encoder
        self._index = index
        self._options = options or SearchOptions()

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = SearchMode.HYBRID,
        point_filter: PointFilter | None = None,
        candidates: int | None = None,
        include_related: bool = False,
    ) -> SearchOutcome:
        """`candidates` widens the fused list (evaluation needs enough chunks to fill 10 notes)."""
        self._index.check_searchable()
        warnings: list[str] = []
        if not self._index.complete:
            warnings.append(
                f"the first indexing is still running ({self._index.indexed_notes} notes so far); "
                "results may be incomplete"
            )
        dense: list[float] | None = None
        if mode is not SearchMode.KEYWORD:
            dense, reason = self._embed_query(query)
            if dense is None:
                warnings.append(f"{reason}; answered from keyword search only")
                mode = SearchMode.KEYWORD
        sparse = self._encoder.encode_query(query) if mode is not SearchMode.DENSE else None
        if mode is SearchMode.KEYWORD and (sparse is None or sparse.is_empty):
            return SearchOutcome(hits=[], total_hits=0, mode=mode, warnings=warnings)

        limit = max(top_k, candidates or 0, self._options.prefetch_limit)
        points = self._store.query(
            dense=dense,
            sparse=sparse if sparse is not None and not sparse.is_empty else None,
            limit=limit,
            prefetch_limit=max(limit, self._options.prefetch_limit),
            point_filter=point_filter if point_filter is not None and not point_filter.is_empty else None,
            rrf_k=self._options.rrf_k,
        )
        size = max(top_k, candidates or 0)
        hits = [SearchHit(chunk_id=p.id, score=p.score, payload=p.payload) for p in points[:size]]
        related: list[RelatedNote] = []
        if include_related and hits:
            paths = list(dict.fromkeys(str(h.payload.get("note_path", "")) for h in hits[:top_k]))
            related = self._index.graph.related(paths)
        return SearchOutcome(hits=hits, total_hits=len(points), mode=mode, warnings=warnings, related=related)

    def _embed_query(self, query: str) -> tuple[list[float] | None, str]:
        if self._embedder is None:
            return None, "no embedder is configured (EMBEDDING_PROVIDER=none)"
        try:
            return self._embedder.embed_query(query), ""
        except EmbedderUnavailableError as exc:
            log.warning("query embedding failed: %s", exc.detail)
            return None, f"the embedder is unavailable ({exc.detail})"
