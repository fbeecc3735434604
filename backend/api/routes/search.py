from __future__ import annotations

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.schemas import SearchRequest, SearchResponse
from backend.api.search_answer import search_answer

router = APIRouter(tags=["search"])


@router.post(
    "/search",
    operation_id="search",
    response_model=SearchResponse,
    responses=error_responses(400, "EMBEDDING_MODEL_MISMATCH", 422, *INDEX_UNREADABLE, 507),
)
async def search(body: SearchRequest, services: ServicesDep, response: Response) -> SearchResponse:
    """Find the chunks of notes that best answer `query` (dense + keyword fused with RRF by default), with the
    notes linked to them, and (with `include_memory`) the remembered facts that match. Each result is flagged
    with the sensitive categories it touches; secrets in it are redacted."""
    answer, timing = await run_in_threadpool(search_answer, services, body)
    response.headers["Server-Timing"] = timing
    return answer
