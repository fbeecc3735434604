from __future__ import annotations

import time

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.schemas import ErrorBody, RelatedNoteOut, SearchRequest, SearchResponse, SearchResult
from backend.application.search import SearchHit
from backend.domain.models import PointFilter

router = APIRouter(tags=["search"])

_ERRORS = {
    422: {"model": ErrorBody, "description": "Invalid request"},
    503: {"model": ErrorBody, "description": "Index not ready or store unavailable"},
}


def _to_result(hit: SearchHit) -> SearchResult:
    p = hit.payload
    return SearchResult(
        chunk_id=hit.chunk_id,
        note_path=p.get("note_path", ""),
        note_title=p.get("note_title", ""),
        content=p.get("content", ""),
        score=hit.score,
        heading_context=p.get("heading_context", ""),
        start_line=p.get("start_line", 0),
        end_line=p.get("end_line", 0),
        tags=p.get("tags") or [],
        aliases=p.get("aliases") or [],
        date=p.get("date"),
    )


@router.post("/search", response_model=SearchResponse, responses=_ERRORS)
async def search(body: SearchRequest, services: ServicesDep) -> SearchResponse:
    """Find the chunks of notes that best answer `query` (dense + keyword fused with RRF by default)."""
    started = time.perf_counter()
    point_filter = PointFilter(
        note_paths=tuple(body.paths),
        folders=tuple(body.folders),
        tags=tuple(body.tags),
        date_from=body.date_from.isoformat() if body.date_from else None,
        date_to=body.date_to.isoformat() if body.date_to else None,
    )
    outcome = await run_in_threadpool(
        services.search.search,
        body.query,
        top_k=body.top_k,
        mode=body.mode,
        point_filter=point_filter,
        include_related=body.include_related,
    )
    return SearchResponse(
        query=body.query,
        mode=outcome.mode,
        status="degraded" if outcome.degraded else "healthy",
        warnings=outcome.warnings,
        results=[_to_result(hit) for hit in outcome.hits[: body.top_k]],
        related_notes=[
            RelatedNoteOut(
                note_path=r.path, note_title=r.title, relationship=r.relationship, link_count=r.link_count
            )
            for r in outcome.related
        ],
        total_hits=outcome.total_hits,
        search_time_ms=round((time.perf_counter() - started) * 1000, 2),
    )
