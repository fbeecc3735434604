"""What the note, links, context and memory operations answer over HTTP, MCP and the CLI alike: the use
cases of backend.application.operations, translated into the API's schemas."""

from __future__ import annotations

from datetime import UTC, datetime

from backend.api.context_schemas import ContextRequest, ContextResponse, ContextSource
from backend.api.memory_schemas import MemoryIn, MemoryStored, memory_out
from backend.api.note_schemas import NoteOut
from backend.api.request_caps import check_filter_caps
from backend.api.schemas import LinkedNoteOut, NoteLinksOut, UnresolvedLinkOut
from backend.application.context import ContextQuery
from backend.application.note_graph import LinkedNote
from backend.application.operations import build_context, note_links, read_note, remember
from backend.bootstrap import Services
from backend.domain.links import LinkRecord, NoteRecord
from backend.domain.obsidian_uri import obsidian_uri


def _linked(note: LinkedNote) -> LinkedNoteOut:
    return LinkedNoteOut(
        note_path=note.path,
        note_title=note.title,
        kind=note.kind,
        anchor=note.anchor,
        text=note.text,
        line=note.line,
    )


def _raw(link: LinkRecord) -> UnresolvedLinkOut:
    return UnresolvedLinkOut(
        target=link.target, kind=str(link.kind), anchor=link.anchor, text=link.text, line=link.line
    )


def modified_at(record: NoteRecord) -> datetime:
    return datetime.fromtimestamp(record.mtime, tz=UTC)


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


def note_answer(
    services: Services, note_path: str, start_line: int | None = None, end_line: int | None = None
) -> NoteOut:
    view = read_note(services, note_path, start_line, end_line)
    record = view.record
    return NoteOut(
        note_path=record.path,
        note_title=record.title,
        aliases=list(record.aliases),
        tags=list(record.tags),
        date=record.date,
        modified=modified_at(record),
        size_bytes=record.size,
        total_lines=view.window.total_lines,
        start_line=view.window.start_line,
        end_line=view.window.end_line,
        content=view.window.text,
        redactions=view.redactions,
        sensitive_categories=view.sensitive_categories,
        status="degraded" if view.warnings else "healthy",
        warnings=view.warnings,
        obsidian_uri=obsidian_uri(services.settings.obsidian_vault, record.path),
    )


def context_answer(services: Services, body: ContextRequest) -> ContextResponse:
    """The block as /context and the MCP `build_context` tool answer it."""
    check_filter_caps(body, services.settings)
    result = build_context(
        services,
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
        ),
    )
    sources = []
    for source in result.sources:
        passage = source.passage.passage
        # what every source says of its passage, whichever kind it comes from
        shown = {"attribution": passage.label, "chars": len(passage.entry()), "truncated": source.passage.cut}
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
                    score=fact.score or 0.0,
                    sensitive_categories=fact.sensitive_categories,
                    **shown,
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
                    score=hit.score,
                    sensitive_categories=hit.sensitive_categories,
                    **shown,
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


def remember_answer(services: Services, body: MemoryIn) -> MemoryStored:
    view, created = remember(services, body.key, body.value, body.source)
    return MemoryStored(fact=memory_out(view), created=created)
