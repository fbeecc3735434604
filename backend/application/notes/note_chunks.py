"""One note as the index holds it: its chunks as stored (heading path, lines, tags, date, language) and the
text each was embedded as, for the look-inside page. Read-only, like every read of the vault."""

from __future__ import annotations

from dataclasses import dataclass

from backend.application.notes.reading import NoteReader
from backend.application.ports import NoteParser, Vault
from backend.application.serving.serving_index import ServingIndex
from backend.domain.index.ids import content_hash
from backend.domain.index.index_texts import embedded_text
from backend.domain.index.payload import CHUNK_INDEX, LANGUAGE
from backend.domain.links import NoteRecord
from backend.domain.models import PointFilter, ScoredPoint
from backend.domain.text.content_policy import ContentPolicy

PAGE = 256


@dataclass(frozen=True, slots=True)
class StoredChunk:
    chunk_id: str
    chunk_index: int
    heading_path: tuple[str, ...]
    start_line: int
    end_line: int
    tags: tuple[str, ...]
    date: str | None
    language: str | None  # the language its words were stemmed in (None: stored before it was kept)
    embedded_text: str  # what the embedder was given: title and headings, inline tags, the text (redacted)


@dataclass(frozen=True, slots=True)
class NoteChunks:
    record: NoteRecord
    chunks: list[StoredChunk]
    current: bool  # the file on disk is the text these chunks were cut from


class NoteChunkReader:
    def __init__(
        self,
        *,
        index: ServingIndex,
        vault: Vault,
        parser: NoteParser,
        policy: ContentPolicy,
        notes: NoteReader,
    ) -> None:
        self._index = index
        self._vault = vault
        self._parser = parser
        self._policy = policy
        self._notes = notes

    def chunks(self, asked: str) -> NoteChunks:
        """The chunks of the note `asked` names (as `NoteReader.find` resolves it), in their order."""
        record = self._notes.find(asked)
        points: list[ScoredPoint] = []
        offset: str | None = None
        with self._index.serving() as live:
            while True:
                page, offset = live.store.scroll(
                    point_filter=PointFilter(note_paths=(record.path,)), limit=PAGE, offset=offset
                )
                points.extend(page)
                if offset is None:
                    break
        points.sort(key=lambda point: int(point.payload.get(CHUNK_INDEX, 0)))
        inline, current = self._inline_tags(record)
        return NoteChunks(record, [self._stored(point, record, inline) for point in points], current)

    def _inline_tags(self, record: NoteRecord) -> tuple[tuple[str, ...], bool]:
        """The tags the note writes in its text (embedded with every chunk), and whether the file is still the
        text that was indexed; a file gone or unreadable since gives none."""
        try:
            text, _ = self._vault.read_text(record.path)
        except OSError:
            return (), False
        note = self._parser(record.path, text)
        return note.inline_tags, content_hash(text) == record.content_hash

    def _stored(self, point: ScoredPoint, record: NoteRecord, inline: tuple[str, ...]) -> StoredChunk:
        p = point.payload
        headings = tuple(str(h) for h in p.get("heading_path") or ())
        title = str(p.get("note_title") or record.title)
        text = embedded_text(title, headings, inline, str(p.get("content", "")))
        return StoredChunk(
            chunk_id=point.id,
            chunk_index=int(p.get(CHUNK_INDEX, 0)),
            heading_path=headings,
            start_line=int(p.get("start_line", 0)),
            end_line=int(p.get("end_line", 0)),
            tags=tuple(str(t) for t in p.get("tags") or ()),
            date=p.get("date"),
            language=p.get(LANGUAGE),
            embedded_text=self._policy.clean(text).text,
        )
