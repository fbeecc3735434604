from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query
from starlette.concurrency import run_in_threadpool

from backend.api.answers import notes_answer
from backend.api.deps import LibraryDep, VaultQuery
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.input_types import MAX_PAGE, IsoDay, IsoMoment
from backend.api.inspect_answers import chunks_answer, unresolved_answer
from backend.api.note_schemas import NoteChunksOut, NoteListOut, NoteOut, UnresolvedLinksOut
from backend.api.schemas import NoteLinksOut
from backend.api.vault_answers import read_links, read_note
from backend.application.operations import NoteListQuery
from backend.domain.notes.note_listing import NoteOrder

router = APIRouter(tags=["notes"])

NotePath = Annotated[
    str,
    Path(
        description="Vault-relative path of the note, as search results give it (URL-encoded); or "
        "`vault:<name>/<path>`, as a block of several vaults cites it.",
        examples=["Finance/Money with Sreenivas.md"],
    ),
]


@router.get(
    "/note/{note_path:path}/links",
    operation_id="note_links",
    response_model=NoteLinksOut,
    responses=error_responses(
        400, "NOTE_NOT_FOUND", "NOTE_AMBIGUOUS", 422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507
    ),
)
async def note_links(note_path: NotePath, library: LibraryDep, vault: VaultQuery = None) -> NoteLinksOut:
    """Backlinks, outlinks (with titles) and not-yet-created targets of one note (vault-relative path),
    all within its vault."""
    return await run_in_threadpool(read_links, library, note_path, vault)


@router.get(
    "/note/{note_path:path}/chunks",
    operation_id="note_chunks",
    response_model=NoteChunksOut,
    responses=error_responses(
        400, "NOTE_NOT_FOUND", "NOTE_AMBIGUOUS", 422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507
    ),
)
async def note_chunks(note_path: NotePath, library: LibraryDep, vault: VaultQuery = None) -> NoteChunksOut:
    """A note as the index holds it: its chunks in order, each with its heading path, lines, tags, date,
    language and the text it was embedded as (secrets redacted). What to read when a note ranks oddly."""
    _, services, path = await run_in_threadpool(library.holding, note_path, vault)
    return await run_in_threadpool(chunks_answer, services, path)


@router.get(
    "/links/unresolved",
    operation_id="unresolved_links",
    response_model=UnresolvedLinksOut,
    responses=error_responses(422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507),
)
async def unresolved(
    library: LibraryDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Links per page.", examples=[50])] = 50,
    offset: Annotated[
        int, Query(ge=0, description="Links to skip (next_offset of the previous page).", examples=[50])
    ] = 0,
    vault: VaultQuery = None,
) -> UnresolvedLinksOut:
    """The vault's links to notes not created yet, one page at a time (`total` counts them all), by source
    note and then as written in it."""
    _, services = library.get(vault)
    return await run_in_threadpool(unresolved_answer, services, limit, offset)


@router.get(
    "/note/{note_path:path}",
    operation_id="get_note",
    response_model=NoteOut,
    responses=error_responses(
        400, "NOTE_NOT_FOUND", "NOTE_AMBIGUOUS", 422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507
    ),
)
async def get_note(
    note_path: NotePath,
    library: LibraryDep,
    start_line: Annotated[
        int | None,
        Query(ge=1, description="First line to return (1-based, as in search results).", examples=[14]),
    ] = None,
    end_line: Annotated[
        int | None,
        Query(ge=1, description="Last line to return, inclusive; past the end means the end.", examples=[18]),
    ] = None,
    vault: VaultQuery = None,
) -> NoteOut:
    """Read an indexed note: its metadata and its text, or only lines `start_line`..`end_line` (file lines,
    1-based, inclusive: the `start_line`/`end_line` of a search result read back that hit, a wider range reads
    around it). The text is read from the vault as it is now, with secrets redacted. A path that is not an
    indexed note is 404 NOTE_NOT_FOUND; a path that tries to leave the vault is 400 SECURITY_VIOLATION."""
    return await run_in_threadpool(read_note, library, note_path, vault, start_line, end_line)


@router.get(
    "/notes",
    operation_id="list_notes",
    response_model=NoteListOut,
    responses=error_responses(400, 422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507),
)
async def list_notes(
    library: LibraryDep,
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
    vault: VaultQuery = None,
) -> NoteListOut:
    """List the indexed notes with their metadata, filtered by folder, tag, note date and modification time,
    one page at a time (`total` counts all matches; follow `next_offset`)."""
    query = NoteListQuery(
        folder=folder,
        tag=tag,
        date_from=date_from,
        date_to=date_to,
        modified_since=modified_since,
        order=sort,
        limit=limit,
        offset=offset,
    )
    _, services = library.get(vault)
    return await run_in_threadpool(notes_answer, services, query)
