from __future__ import annotations

import time

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.memory_schemas import MemoryOut
from backend.api.request_caps import check_filter_caps
from backend.api.routes.memory import memory_out
from backend.api.schemas import (
    NoteGroupOut,
    RelatedNoteOut,
    SearchRequest,
    SearchResponse,
    SearchResult,
    TimeIntentOut,
)
from backend.application.presenting import ResultView, group_by_note, present_hits
from backend.bootstrap import Services
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.obsidian_uri import obsidian_uri
from backend.domain.time_intent import TimeSpan

router = APIRouter(tags=["search"])


def result_out(view: ResultView, vault_name: str) -> SearchResult:
    return SearchResult(
        chunk_id=view.chunk_id,
        note_path=view.note_path,
        note_title=view.note_title,
        content=view.content,
        score=view.score,
        heading_context=view.heading_context,
        start_line=view.start_line,
        end_line=view.end_line,
        tags=view.tags,
        aliases=view.aliases,
        date=view.date,
        highlights=view.highlights,
        sensitive_categories=view.sensitive_categories,
        redactions=view.redactions,
        obsidian_uri=obsidian_uri(vault_name, view.note_path),
    )


def search_response(services: Services, body: SearchRequest) -> tuple[SearchResponse, str]:
    """The search as /search and the MCP `search` tool answer it, and its Server-Timing header."""
    started = time.perf_counter()
    check_filter_caps(body, services.settings)
    services.open()  # no-op once open; after a start with the store down: INDEX_UNAVAILABLE, or open it now
    by_note = body.group_by == "note"
    outcome = services.search.search(
        body.query,
        top_k=body.top_k,
        mode=body.mode,
        point_filter=body.point_filter(),
        include_related=body.include_related,
        threshold=body.threshold,
        max_chunks_per_note=body.max_chunks_per_note,
        # grouped: top_k counts notes, so every matched chunk is a candidate (no deeper store query)
        candidates=services.settings.search_prefetch_limit if by_note else None,
    )
    # a no-op unless notes wait for dense vectors; then it may start the catch-up sync
    services.catch_up_dense()
    hits = group_by_note(outcome.hits, body.top_k) if by_note else outcome.hits[: body.top_k]
    views = present_hits(hits, body.query, services.policy, stemming=services.settings.keyword_stemming)
    warnings = list(outcome.warnings)
    memories: list[MemoryOut] = []
    if body.include_memory:
        try:
            found = services.memory.search(body.query, limit=body.memory_top_k)
        except KnowledgeBridgeError as exc:  # the notes still answer: say what is missing
            warnings.append(f"remembered facts are unavailable: {exc.detail}")
        else:
            warnings += found.warnings
            memories = [memory_out(hit) for hit in found.hits]
    total_ms = (time.perf_counter() - started) * 1000
    related = [
        RelatedNoteOut(
            note_path=r.path, note_title=r.title, relationship=r.relationship, link_count=r.link_count
        )
        for r in outcome.related
    ]
    answer = SearchResponse(
        query=body.query,
        mode=outcome.mode,
        status="degraded" if warnings else "healthy",
        warnings=warnings,
        results=[result_out(v, services.settings.obsidian_vault) for v in views],
        related_notes=related,
        memories=memories,
        sensitive_detected=any(v.sensitive_categories for v in views)
        or any(m.sensitive_categories for m in memories),
        total_hits=outcome.total_hits,
        search_time_ms=round(total_ms, 2),
        time_intent=_time_intent(outcome.time_intent),
        groups=_groups(views, services.settings.obsidian_vault) if by_note else None,
    )
    # where the time went, for latency work (W3C Server-Timing; browsers' dev tools show it too)
    timing = f"embed;dur={outcome.embed_ms:.2f}, store;dur={outcome.store_ms:.2f}, total;dur={total_ms:.2f}"
    return answer, timing


def _time_intent(span: TimeSpan | None) -> TimeIntentOut | None:
    if span is None:
        return None
    return TimeIntentOut(
        text=span.text, start=span.start.isoformat(), end=span.end.isoformat(), granularity=span.granularity
    )


def _groups(views: list[ResultView], vault_name: str) -> list[NoteGroupOut]:
    groups: dict[str, NoteGroupOut] = {}
    for view in views:  # grouped already: a note's chunks are consecutive, best note first
        group = groups.get(view.note_path)
        if group is None:
            group = groups[view.note_path] = NoteGroupOut(
                note_path=view.note_path,
                note_title=view.note_title,
                score=view.score,
                tags=view.tags,
                date=view.date,
                chunks=[],
            )
        group.chunks.append(result_out(view, vault_name))
    return list(groups.values())


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
    answer, timing = await run_in_threadpool(search_response, services, body)
    response.headers["Server-Timing"] = timing
    return answer
