"""What /search, the MCP `search` tool and the CLI answer: the search use case, translated."""

from __future__ import annotations

from backend.api.memory_schemas import memory_out
from backend.api.request_caps import check_filter_caps
from backend.api.schemas import (
    NoteGroupOut,
    RelatedNoteOut,
    SearchRequest,
    SearchResponse,
    SearchResult,
    TimeIntentOut,
)
from backend.application.operations import SearchQuery, search_notes
from backend.application.presenting import ResultView
from backend.bootstrap import Services
from backend.domain.obsidian_uri import obsidian_uri
from backend.domain.time_intent import TimeSpan


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


def search_answer(services: Services, body: SearchRequest) -> tuple[SearchResponse, str]:
    """The search as /search, the MCP `search` tool and the CLI answer it, and its Server-Timing header."""
    check_filter_caps(body, services.settings)
    by_note = body.group_by == "note"
    found = search_notes(
        services,
        SearchQuery(
            query=body.query,
            top_k=body.top_k,
            mode=body.mode,
            point_filter=body.point_filter(),
            include_related=body.include_related,
            threshold=body.threshold,
            max_chunks_per_note=body.max_chunks_per_note,
            by_note=by_note,
            include_memory=body.include_memory,
            memory_top_k=body.memory_top_k,
            candidates=services.settings.search_prefetch_limit,
            stemming=services.settings.keyword_stemming,
        ),
    )
    outcome = found.outcome
    related = [
        RelatedNoteOut(
            note_path=r.path, note_title=r.title, relationship=r.relationship, link_count=r.link_count
        )
        for r in outcome.related
    ]
    vault_name = services.settings.obsidian_vault
    answer = SearchResponse(
        query=body.query,
        mode=outcome.mode,
        status="degraded" if found.warnings else "healthy",
        warnings=found.warnings,
        results=[result_out(v, vault_name) for v in found.views],
        related_notes=related,
        memories=[memory_out(m) for m in found.memories],
        sensitive_detected=found.sensitive_detected,
        total_hits=outcome.total_hits,
        search_time_ms=round(found.total_ms, 2),
        time_intent=_time_intent(outcome.time_intent),
        groups=_groups(found.views, vault_name) if by_note else None,
    )
    # where the time went, for latency work (W3C Server-Timing; browsers' dev tools show it too)
    timing = (
        f"embed;dur={outcome.embed_ms:.2f}, store;dur={outcome.store_ms:.2f}, total;dur={found.total_ms:.2f}"
    )
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
