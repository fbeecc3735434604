from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.concurrency import run_in_threadpool

from backend.api.answers import links_answer, modified_at, note_answer
from backend.api.deps import ServicesDep
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.input_types import IsoDay, IsoMoment
from backend.api.note_schemas import NoteListOut, NoteOut, NoteSummaryOut
from backend.api.schemas import NoteLinksOut
from backend.application import operations
from backend.bootstrap import Services
from backend.domain.errors import InvalidRequestError
from backend.domain.note_listing import NoteListFilter, NoteOrder

router = APIRouter(tags=["notes"])

NotePath = Annotated[
    str,
    Path(
        description="Vault-relative path of the note, as search results give it (URL-encoded).",
        examples=["Finance/Money with Sreenivas.md"],
    ),
]

MAX_PAGE = 500


def notes_response(
    services: Services,
    *,
    folder: str = "",
    tag: str | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
    modified_since: datetime | None = None,
    sort: NoteOrder = NoteOrder.PATH,
    limit: int = 50,
    offset: int = 0,
) -> NoteListOut:
    if date_from and date_to and date_from > date_to:
        raise InvalidRequestError("date_from must not be after date_to")
    if modified_since is not None and modified_since.tzinfo is None:
        modified_since = modified_since.replace(tzinfo=UTC)  # a time without a zone is UTC
    listing = operations.list_notes(
        services,
        NoteListFilter(
            folder=folder,
            tag=tag.strip() if tag and tag.strip() else None,
            date_from=date_from.isoformat() if date_from else None,
            date_to=date_to.isoformat() if date_to else None,
            modified_since=modified_since.timestamp() if modified_since else None,
        ),
        order=sort,
        limit=limit,
        offset=offset,
    )
    page = listing.page
    return NoteListOut(
        notes=[
            NoteSummaryOut(
                note_path=r.path,
                note_title=r.title,
                aliases=list(r.aliases),
                tags=list(r.tags),
                date=r.date,
                modified=modified_at(r),
                size_bytes=r.size,
                sensitive_categories=listing.sensitive.get(r.path, []),
            )
            for r in page.notes
        ],
        total=page.total,
        limit=limit,
        offset=offset,
        next_offset=page.next_offset,
        status="degraded" if listing.warnings else "healthy",
        warnings=listing.warnings,
    )


@router.get(
    "/note/{note_path:path}/links",
    operation_id="note_links",
    response_model=NoteLinksOut,
    responses=error_responses(400, "NOTE_NOT_FOUND", 422, *INDEX_UNREADABLE, 507),
)
async def note_links(note_path: NotePath, services: ServicesDep) -> NoteLinksOut:
    """Backlinks, outlinks (with titles) and not-yet-created targets of one note (vault-relative path)."""
    return await run_in_threadpool(links_answer, services, note_path)


@router.get(
    "/note/{note_path:path}",
    operation_id="get_note",
    response_model=NoteOut,
    responses=error_responses(400, "NOTE_NOT_FOUND", 422, *INDEX_UNREADABLE, 507),
)
async def get_note(
    note_path: NotePath,
    services: ServicesDep,
    start_line: Annotated[
        int | None,
        Query(ge=1, description="First line to return (1-based, as in search results).", examples=[14]),
    ] = None,
    end_line: Annotated[
        int | None,
        Query(ge=1, description="Last line to return, inclusive; past the end means the end.", examples=[18]),
    ] = None,
) -> NoteOut:
    """Read an indexed note: its metadata and its text, or only lines `start_line`..`end_line` (file lines,
    1-based, inclusive: the `start_line`/`end_line` of a search result read back that hit, a wider range reads
    around it). The text is read from the vault as it is now, with secrets redacted. A path that is not an
    indexed note is 404 NOTE_NOT_FOUND; a path that tries to leave the vault is 400 SECURITY_VIOLATION."""
    return await run_in_threadpool(note_answer, services, note_path, start_line, end_line)


@router.get(
    "/notes",
    operation_id="list_notes",
    response_model=NoteListOut,
    responses=error_responses(400, 422, *INDEX_UNREADABLE, 507),
)
async def list_notes(
    services: ServicesDep,
    folder: Annotated[
        str, Query(description="Only notes under this vault-relative folder.", examples=["Journal/2026"])
    ] = "",
    tag: Annotated[
        str | None,
        Query(
            description="Only notes with this tag or a tag nested under it (case-insensitive).",
            examples=["finance"],
        ),
    ] = None,
    date_from: Annotated[
        IsoDay | None, Query(description="Only notes dated on or after this day.", examples=["2026-03-01"])
    ] = None,
    date_to: Annotated[
        IsoDay | None,
        Query(
            description="Only notes dated on or before this day (not before date_from).",
            examples=["2026-03-31"],
        ),
    ] = None,
    modified_since: Annotated[
        IsoMoment | None,
        Query(
            description="Only notes whose file changed at or after this time (ISO 8601; UTC if no zone).",
            examples=["2026-03-28T00:00:00Z"],
        ),
    ] = None,
    sort: Annotated[
        NoteOrder,
        Query(
            description="path (default), modified (newest first) or date (newest first).", examples=["date"]
        ),
    ] = NoteOrder.PATH,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Notes per page.", examples=[20])] = 50,
    offset: Annotated[
        int, Query(ge=0, description="Notes to skip (next_offset of the previous page).", examples=[20])
    ] = 0,
) -> NoteListOut:
    """List the indexed notes with their metadata, filtered by folder, tag, note date and modification time,
    one page at a time (`total` counts all matches; follow `next_offset`)."""
    return await run_in_threadpool(
        lambda: notes_response(
            services,
            folder=folder,
            tag=tag,
            date_from=date_from,
            date_to=date_to,
            modified_since=modified_since,
            sort=sort,
            limit=limit,
            offset=offset,
        )
    )
