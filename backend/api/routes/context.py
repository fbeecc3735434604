from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.context_schemas import ContextRequest, ContextResponse, ContextSource
from backend.api.deps import ServicesDep
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.request_caps import check_filter_caps
from backend.application.context import ContextQuery
from backend.bootstrap import Services

router = APIRouter(tags=["context"])


def context_response(services: Services, body: ContextRequest) -> ContextResponse:
    """The block as /context and the MCP `build_context` tool answer it."""
    check_filter_caps(body, services.settings)
    services.open()
    result = services.context.build(
        ContextQuery(
            query=body.query,
            messages=[(m.role, m.content) for m in body.messages],
            max_chars=body.max_chars,
            max_chunks=body.max_chunks,
            mode=body.mode,
            point_filter=body.point_filter(),
            threshold=body.threshold,
            include_memory=body.include_memory,
            exclude_categories=body.exclude_categories,
        )
    )
    sources = []
    for source in result.sources:
        passage = source.passage.passage
        entry_chars = len(passage.entry())
        if source.memory is not None:
            fact = source.memory
            sources.append(
                ContextSource(
                    kind="memory",
                    note_path=fact.source,
                    note_title="",
                    heading_context="",
                    start_line=0,
                    end_line=0,
                    memory_key=fact.key,
                    attribution=passage.label,
                    score=fact.score or 0.0,
                    chars=entry_chars,
                    truncated=source.passage.cut,
                    sensitive_categories=fact.sensitive_categories,
                )
            )
        elif source.result is not None:
            hit = source.result
            sources.append(
                ContextSource(
                    kind="note",
                    note_path=hit.note_path,
                    note_title=hit.note_title,
                    heading_context=hit.heading_context,
                    start_line=passage.start_line,
                    end_line=passage.end_line,
                    memory_key=None,
                    attribution=passage.label,
                    score=hit.score,
                    chars=entry_chars,
                    truncated=source.passage.cut,
                    sensitive_categories=hit.sensitive_categories,
                )
            )
    return ContextResponse(
        query=result.query,
        context=result.block,
        chars=len(result.block),
        max_chars=body.max_chars,
        sources=sources,
        omitted=result.omitted,
        mode=result.mode,
        status="degraded" if result.warnings else "healthy",
        warnings=result.warnings,
        sensitive_detected=result.sensitive_detected,
    )


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
    return await run_in_threadpool(context_response, services, body)
