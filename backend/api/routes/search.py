from __future__ import annotations

import time

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.schemas import ErrorBody, RelatedNoteOut, SearchRequest, SearchResponse, SearchResult
from backend.application.search import SearchHit
from backend.domain.models import PointFilter
from backend.domain.result_rules import highlights

router = APIRouter(tags=["search"])

_ERRORS = {
    422: {"model": ErrorBody, "description": "Invalid request"},
    503: {"model": ErrorBody, "description": "Index not ready, store unavailable, or index files damaged"},
    507: {"model": ErrorBody, "description": "Too little disk space left to open the index (STORAGE_FULL)"},
}


def _to_result(hit: SearchHit, query: str, *, stemming: bool) -> SearchResult:
    p = hit.payload
    content = p.get("content", "")
    return SearchResult(
        chunk_id=hit.chunk_id,
        note_path=p.get("note_path", ""),
        note_title=p.get("note_title", ""),
        content=content,
        score=hit.score,
        heading_context=p.get("heading_context", ""),
        start_line=p.get("start_line", 0),
        end_line=p.get("end_line", 0),
        tags=p.get("tags") or [],
        aliases=p.get("aliases") or [],
        date=p.get("date"),
        highlights=highlights(query, content, stemming=stemming),
    )


@router.post("/search", response_model=SearchResponse, responses=_ERRORS)
async def search(body: SearchRequest, services: ServicesDep, response: Response) -> SearchResponse:
    """Find the chunks of notes that best answer `query` (dense + keyword fused with RRF by default)."""
    started = time.perf_counter()
    if not services.opened:  # the store was down at start-up: answer INDEX_UNAVAILABLE, or open it now
        await run_in_threadpool(services.open)
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
        threshold=body.threshold,
    )
    # a no-op unless notes wait for dense vectors; then it may start the catch-up sync
    await run_in_threadpool(services.catch_up_dense)
    results = [
        _to_result(hit, body.query, stemming=services.settings.keyword_stemming)
        for hit in outcome.hits[: body.top_k]
    ]
    related = [
        RelatedNoteOut(
            note_path=r.path, note_title=r.title, relationship=r.relationship, link_count=r.link_count
        )
        for r in outcome.related
    ]
    total_ms = (time.perf_counter() - started) * 1000
    # where the time went, for latency work (W3C Server-Timing; browsers' dev tools show it too)
    response.headers["Server-Timing"] = (
        f"embed;dur={outcome.embed_ms:.2f}, store;dur={outcome.store_ms:.2f}, total;dur={total_ms:.2f}"
    )
    return SearchResponse(
        query=body.query,
        mode=outcome.mode,
        status="degraded" if outcome.degraded else "healthy",
        warnings=outcome.warnings,
        results=results,
        related_notes=related,
        total_hits=outcome.total_hits,
        search_time_ms=round(total_ms, 2),
    )
