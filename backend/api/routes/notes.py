from __future__ import annotations

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.errors import error_responses
from backend.api.schemas import LinkedNoteOut, NoteLinksOut, UnresolvedLinkOut
from backend.application.note_graph import LinkedNote
from backend.domain.links import LinkRecord

router = APIRouter(prefix="/note", tags=["notes"])


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


@router.get(
    "/{note_path:path}/links", response_model=NoteLinksOut, responses=error_responses(400, 404, 422, 503)
)
async def note_links(note_path: str, services: ServicesDep) -> NoteLinksOut:
    """Backlinks, outlinks (with titles) and not-yet-created targets of one note (vault-relative path)."""
    links = await run_in_threadpool(services.index.note_links, note_path)
    return NoteLinksOut(
        note_path=links.path,
        note_title=links.title,
        outlinks=[_linked(n) for n in links.outlinks],
        backlinks=[_linked(n) for n in links.backlinks],
        unresolved=[_raw(link) for link in links.unresolved],
        attachments=[_raw(link) for link in links.attachments],
    )
