"""What the look-inside reads answer: a note's chunks as stored, and the vault's links to notes not created
yet (the other doors' answers are in answers.py)."""

from __future__ import annotations

from backend.api.note_schemas import NoteChunksOut, StoredChunkOut, UnresolvedLinksOut, VaultLinkOut
from backend.application.operations import note_chunks, unresolved_links
from backend.bootstrap import Services
from backend.domain.index.payload import HEADING_SEPARATOR


def chunks_answer(services: Services, note_path: str) -> NoteChunksOut:
    found = note_chunks(services, note_path)
    return NoteChunksOut(
        note_path=found.record.path,
        note_title=found.record.title,
        current=found.current,
        chunks=[
            StoredChunkOut(
                chunk_id=c.chunk_id,
                chunk_index=c.chunk_index,
                heading_context=HEADING_SEPARATOR.join(c.heading_path),
                start_line=c.start_line,
                end_line=c.end_line,
                tags=list(c.tags),
                date=c.date,
                language=c.language,
                embedded_text=c.embedded_text,
            )
            for c in found.chunks
        ],
    )


def unresolved_answer(services: Services, limit: int, offset: int) -> UnresolvedLinksOut:
    page = unresolved_links(services, limit, offset)
    return UnresolvedLinksOut(
        total=page.total,
        items=[
            VaultLinkOut(source_path=link.source, target=link.target, kind=str(link.kind), line=link.line)
            for link in page.links
        ],
        next_offset=page.next_offset,
    )
