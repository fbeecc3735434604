"""What each operation answers over HTTP, MCP and the CLI alike: a use case of backend.application.operations,
asked with the request translated into its query, its answer translated into the API's schemas.

A route, an MCP tool and a CLI command each call one of these and only add what their transport needs (a
status code, a header, printing), so every door asks and answers the same way. The index's own state
(/index/status, /index/verify) is answered in status_answer.py.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import asdict
from datetime import UTC, datetime
from typing import Any, NamedTuple

from backend.api.context_schemas import (
    ConsideredOut,
    ContextExplainOut,
    ContextRequest,
    ContextResponse,
    ContextSource,
)
from backend.api.explain_answer import hit_whys, search_explain_out
from backend.api.explain_schemas import HitWhyOut
from backend.api.memory_schemas import (
    MemoryDeleted,
    MemoryIn,
    MemoryListOut,
    MemoryOut,
    MemoryStored,
    MemorySuggestionOut,
)
from backend.api.note_schemas import NoteListOut, NoteOut, NoteSummaryOut
from backend.api.request_caps import check_filter_caps
from backend.api.schemas import (
    LinkedNoteOut,
    NoteGroupOut,
    NoteLinksOut,
    RelatedNoteOut,
    SearchRequest,
    SearchResponse,
    SearchResult,
    StageTimeOut,
    TimeIntentOut,
    UnresolvedLinkOut,
)
from backend.application.notes.memory import MemoryView
from backend.application.operations import (
    Found,
    NoteListQuery,
    SearchQuery,
    build_context,
    find_notes,
    forget,
    list_memories,
    list_notes,
    note_links,
    present_found,
    read_note,
    related_notes,
    remember,
)
from backend.application.recall.context import ContextQuery, ContextResult, ContextSourceView
from backend.application.search.presenting import ResultView
from backend.application.search.service import SearchOutcome
from backend.application.search.stage_clock import SERIALISATION
from backend.application.serving.note_graph import LinkedNote, RelatedNote
from backend.bootstrap import Services
from backend.domain.links import LinkRecord, NoteRecord
from backend.domain.models import from_same_fields
from backend.domain.notes.obsidian_uri import obsidian_uri
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.recall.memory_suggestion import MemorySuggestion


def _status(warnings: list[str]) -> str:
    return "degraded" if warnings else "healthy"


def _utc(seconds: float) -> datetime:
    """A time the index keeps as seconds since the epoch, as the moment the API shows."""
    return datetime.fromtimestamp(seconds, tz=UTC)


# -- search and context ------------------------------------------------------------------------------


class SearchAnswered(NamedTuple):
    answer: SearchResponse
    timing: str  # its Server-Timing header
    outcome: SearchOutcome


def search_answer(services: Services, body: SearchRequest) -> SearchAnswered:
    """The search as /search, the MCP `search` tool and the CLI answer it, and its Server-Timing header."""
    return found_answer(services, body, find_for(services, body))


def find_for(services: Services, body: SearchRequest) -> Found:
    """The search `body` asks, before its hits are presented (`found_answer`)."""
    check_filter_caps(body, services.settings)
    return find_notes(
        services,
        from_same_fields(
            SearchQuery,
            body,
            point_filter=body.point_filter(),
            by_note=body.group_by == "note",
            candidates=services.settings.search_prefetch_limit,
        ),
    )


def found_answer(
    services: Services,
    body: SearchRequest,
    found: Found,
    kept: Collection[str] | None = None,
    *,
    waited: bool = False,
) -> SearchAnswered:
    """The answer of a search found (`find_for`): every hit presented, or only those of `kept` (chunk ids);
    `waited`: presented after other vaults' searches (`present_found`)."""
    presented = present_found(services, found, kept, waited=waited)
    outcome = presented.outcome
    related = [related_out(r) for r in outcome.related]
    vault_name = services.settings.obsidian_vault
    whys = hit_whys(presented.explanation, presented.recall)
    answer = SearchResponse(
        query=body.query,
        mode=outcome.mode,
        status=_status(presented.warnings),
        warnings=presented.warnings + presented.notices,
        results=[_result_out(v, vault_name, whys) for v in presented.views],
        related_notes=related,
        memories=[_memory_out(m) for m in presented.memories],
        sensitive_detected=presented.sensitive_detected,
        total_hits=outcome.total_hits,
        search_time_ms=round(presented.total_ms, 2),
        time_intent=_time_intent(outcome.time_intent),
        groups=_groups(presented.views, vault_name, whys) if body.group_by == "note" else None,
        memory_suggestion=_suggestion_out(presented.memory_suggestion),
        explain=search_explain_out(presented.explanation),
    )
    clock = outcome.clock
    clock.lap(SERIALISATION)
    if body.explain:
        answer.stages = [StageTimeOut(stage=stage, ms=round(ms, 3)) for stage, ms in clock.stages()]
    # where the time went, for latency work (W3C Server-Timing; browsers' dev tools show it too)
    total = presented.total_ms
    timing = f"embed;dur={outcome.embed_ms:.2f}, store;dur={outcome.store_ms:.2f}, total;dur={total:.2f}"
    timing += f", {clock.server_timing()}"
    return SearchAnswered(answer, timing, outcome)


def related_answer(services: Services, paths: Sequence[str], limit: int) -> list[RelatedNoteOut]:
    """The related notes of these results (a search's `related_notes`, of the results kept by a merge)."""
    return [related_out(r) for r in related_notes(services, paths, limit)]


def related_out(note: RelatedNote) -> RelatedNoteOut:
    return RelatedNoteOut(
        note_path=note.path, note_title=note.title, relationship=note.relationship, link_count=note.link_count
    )


def _result_out(view: ResultView, vault_name: str, whys: dict[str, HitWhyOut]) -> SearchResult:
    # The view's fields as they are, not `asdict(view)`: that copies every list and string of every result
    # recursively first (~0.2 ms of a ten-result search), and the model copies them again as it validates.
    # Only the pointer is a dataclass, which the model takes as a dict.
    pointer = asdict(view.pointed_from) if view.pointed_from is not None else None
    return from_same_fields(
        SearchResult,
        view,
        pointed_from=pointer,
        obsidian_uri=obsidian_uri(vault_name, view.note_path),
        why=whys.get(view.chunk_id),
    )


def _time_intent(span: TimeSpan | None) -> TimeIntentOut | None:
    if span is None:
        return None
    return TimeIntentOut(
        text=span.text, start=span.start.isoformat(), end=span.end.isoformat(), granularity=span.granularity
    )


def _groups(views: list[ResultView], vault_name: str, whys: dict[str, HitWhyOut]) -> list[NoteGroupOut]:
    groups: dict[str, NoteGroupOut] = {}
    for view in views:  # grouped already: a note's chunks are consecutive, best note first
        group = groups.get(view.note_path)
        if group is None:
            group = groups[view.note_path] = from_same_fields(NoteGroupOut, view, chunks=[])
        group.chunks.append(_result_out(view, vault_name, whys))
    return list(groups.values())


def context_answer(services: Services, body: ContextRequest) -> ContextResponse:
    """The block as /context and the MCP `build_context` tool answer it."""
    check_filter_caps(body, services.settings)
    return context_response(body, build_context(services, context_query(body)))


def context_query(body: ContextRequest) -> ContextQuery:
    """The request as the context use case takes it."""
    return from_same_fields(
        ContextQuery,
        body,
        point_filter=body.point_filter(),
        messages=[(m.role, m.content) for m in body.messages],
    )


def context_response(body: ContextRequest, result: ContextResult) -> ContextResponse:
    """The use case's block as /context answers it (of one vault or several)."""
    return ContextResponse(
        query=result.query,
        context=result.block,
        chars=len(result.block),
        max_chars=body.max_chars,
        sources=[_source_out(source) for source in result.sources],
        omitted=result.omitted,
        mode=result.mode,
        status=_status(result.warnings),
        warnings=result.warnings + result.notices,
        sensitive_detected=result.sensitive_detected,
        memory_suggestion=_suggestion_out(result.memory_suggestion, result.suggestion_vault),
        explain=_context_explain(body, result) if body.explain else None,
    )


def _context_explain(body: ContextRequest, result: ContextResult) -> ContextExplainOut:
    return ContextExplainOut(
        floor=body.min_confidence,
        max_chars=body.max_chars,
        max_chunks=body.max_chunks,
        considered=[
            from_same_fields(ConsideredOut, c, attribution=c.label, note_path=c.path, quoted=c.quoted)
            for c in result.considered
        ],
    )


def _suggestion_out(suggestion: MemorySuggestion | None, vault: str = "") -> MemorySuggestionOut | None:
    return MemorySuggestionOut(**asdict(suggestion), vault=vault) if suggestion is not None else None


def _source_out(source: ContextSourceView) -> ContextSource:
    """An entry of the block as data. Where it comes from is the packed passage's (for a fact: its source
    note, lines 0 and its key); title, heading, score and categories are the fact's or the search hit's."""
    passage = source.passage.passage
    if source.memory is not None:
        fact = source.memory
        kind, title, heading, score, confidence = "memory", "", "", fact.score or 0.0, 0.0
        categories = fact.sensitive_categories
    else:
        hit = source.result
        assert hit is not None  # a source is a remembered fact or a search hit
        kind, title, heading, score, confidence = (
            "note",
            hit.note_title,
            hit.heading_context,
            hit.score,
            hit.confidence,
        )
        categories = hit.sensitive_categories
    return ContextSource(
        kind=kind,
        vault=source.vault,
        note_path=passage.path,
        note_title=title,
        heading_context=heading,
        start_line=passage.start_line,
        end_line=passage.end_line,
        memory_key=passage.memory_key,
        attribution=passage.label,
        score=score,
        confidence=confidence,
        chars=len(passage.entry()),
        truncated=source.passage.cut or source.passage.excerpted,
        sensitive_categories=categories,
    )


# -- notes and links ---------------------------------------------------------------------------------


def note_answer(
    services: Services, note_path: str, start_line: int | None = None, end_line: int | None = None
) -> NoteOut:
    view = read_note(services, note_path, start_line, end_line)
    return NoteOut(
        **_note_fields(view.record),
        total_lines=view.window.total_lines,
        start_line=view.window.start_line,
        end_line=view.window.end_line,
        content=view.window.text,
        redactions=view.redactions,
        sensitive_categories=view.sensitive_categories,
        status=_status(view.warnings),
        warnings=view.warnings,
        obsidian_uri=obsidian_uri(services.settings.obsidian_vault, view.record.path),
    )


def notes_answer(services: Services, query: NoteListQuery) -> NoteListOut:
    listing = list_notes(services, query)
    page = listing.page
    return NoteListOut(
        notes=[
            NoteSummaryOut(**_note_fields(r), sensitive_categories=listing.sensitive.get(r.path, []))
            for r in page.notes
        ],
        total=page.total,
        limit=query.limit,
        offset=query.offset,
        next_offset=page.next_offset,
        status=_status(listing.warnings),
        warnings=listing.warnings + listing.notices,
    )


def _note_fields(record: NoteRecord) -> dict[str, Any]:
    """What a note read and a note listing both say of a note."""
    return {
        "note_path": record.path,
        "note_title": record.title,
        "aliases": list(record.aliases),
        "tags": list(record.tags),
        "date": record.date,
        "modified": _utc(record.mtime),
        "size_bytes": record.size,
    }


def links_answer(services: Services, note_path: str) -> NoteLinksOut:
    links = note_links(services, note_path)
    return NoteLinksOut(
        note_path=links.path,
        note_title=links.title,
        outlinks=[_linked(n) for n in links.outlinks],
        backlinks=[_linked(n) for n in links.backlinks],
        unresolved=[_raw(link) for link in links.unresolved],
        attachments=[_raw(link) for link in links.attachments],
    )


def _linked(note: LinkedNote) -> LinkedNoteOut:
    fields = asdict(note)  # kind, anchor, text and line keep their names; path and title gain `note_`
    return LinkedNoteOut(note_path=fields.pop("path"), note_title=fields.pop("title"), **fields)


def _raw(link: LinkRecord) -> UnresolvedLinkOut:
    return UnresolvedLinkOut(
        target=link.target, kind=str(link.kind), anchor=link.anchor, text=link.text, line=link.line
    )


# -- memory ------------------------------------------------------------------------------------------


def remember_answer(services: Services, body: MemoryIn) -> MemoryStored:
    view, created = remember(services, body.key, body.value, body.source)
    return MemoryStored(fact=_memory_out(view), created=created)


def memories_answer(services: Services, limit: int, offset: int, vault: str) -> MemoryListOut:
    """A page of the facts of the vault `vault` names (`services`), each naming it."""
    page = list_memories(services, limit, offset)
    return MemoryListOut(
        facts=[_memory_out(v, vault) for v in page.facts],
        total=page.total,
        limit=limit,
        offset=offset,
        next_offset=page.next_offset,
    )


def forget_answer(services: Services, key: str) -> MemoryDeleted:
    forget(services, key)
    return MemoryDeleted(key=key.strip(), deleted=True)


def _memory_out(view: MemoryView, vault: str = "") -> MemoryOut:
    return MemoryOut(
        **asdict(view)
        | {"created_at": _utc(view.created_at), "updated_at": _utc(view.updated_at), "vault": vault}
    )
