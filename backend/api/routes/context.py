from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.answers import context_answer
from backend.api.context_schemas import ContextRequest, ContextResponse
from backend.api.deps import ServicesDep
from backend.api.errors import INDEX_UNREADABLE, error_responses

router = APIRouter(tags=["context"])


@router.post(
    "/context",
    operation_id="build_context",
    response_model=ContextResponse,
    responses=error_responses(400, "EMBEDDING_MODEL_MISMATCH", 422, *INDEX_UNREADABLE, 507),
)
async def build_context(body: ContextRequest, services: ServicesDep) -> ContextResponse:
    """A ready-to-inject context block for a question (`query`) or a conversation (`messages`): the best
    chunks, each attributed as `[path:start-end]`, within `max_chars` (everything counted), never cut
    mid-word, without duplicates, secrets redacted; plus the same entries as data in `sources`. Use the
    `start_line`/`end_line` of a source with GET /note/{path} to read more around it."""
    return await run_in_threadpool(context_answer, services, body)
