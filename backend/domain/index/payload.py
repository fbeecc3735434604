"""The payload stored with every chunk point, and the field names filters rely on."""

from __future__ import annotations

from typing import Any

from backend.domain.models import Chunk, ParsedNote
from backend.domain.notes.line_map import stored
from backend.domain.notes.note_origin import source_url
from backend.domain.notes.note_status import says_replaced
from backend.domain.periods.written_periods import chunk_periods

NOTE_PATH = "note_path"
FOLDERS = "folders"  # every ancestor folder of the note, so a prefix filter is an exact "any of" match
TAGS = "tags"
DATE = "date"  # ISO day string, for display
LANGUAGE = "language"  # the language the note's words were stemmed in (none stored before: detected again)
# ISO days or "start/end" days the chunk is of: its note's, or those its text writes out in a note that
# states none (written_periods; an index written before periods were stored has none: its date stands in)
PERIODS = "periods"
# whether the chunk says what time it is of (days it writes out, its note's date:, name, properties or
# folder), not only a year its note's name mentions: only such a chunk is of another time
PERIOD_STATED = "period_stated"
# its note says the time it is of by its `date:`, a day or label in its name or its folder
# (ParsedNote.own_time; not a property's day, never `created:`): every chunk is of that time, whatever year it
# writes
NOTE_STATES_TIME = "note_states_time"
# its note says another note replaced it (note_status): it ranks lower and is never quoted by the recall
REPLACED = "replaced"
# the address its note was saved from (a web clipper's `source:`/`url:`), one spelling per page; None for a
# note of one's own words (note_origin; a clipper's folder or tag is read at search time, from the settings)
SAVED_FROM = "saved_from"
DATE_NUM = "date_num"  # YYYYMMDD as an int, for range filters (works on every Qdrant mode)
CHUNK_INDEX = "chunk_index"
CONTENT_HASH = "content_hash"  # of the whole note text the chunk was cut from
# where the text's lines stand in the file, in a chunk that leaves hidden lines out (line_map.py)
LINE_MAP = "line_map"
# the chunk is its note's title standing in for a note of headings or a query alone: never quoted
TITLE_ONLY = "title_only"

HEADING_SEPARATOR = " > "


def folders_of(note_path: str) -> list[str]:
    """`a/b/c.md` -> `["a", "a/b"]`."""
    parts = note_path.split("/")[:-1]
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def date_num(iso_day: str | None) -> int | None:
    if not iso_day:
        return None
    return int(iso_day[:10].replace("-", ""))


def chunk_payload(
    note: ParsedNote, chunk: Chunk, *, mtime: float, content_hash: str, language: str | None = None
) -> dict[str, Any]:
    """`language`: the one the note's words were stemmed in (a search reads the chunk's terms again in it to
    judge a hit, instead of detecting it anew for every hit)."""
    return {
        NOTE_PATH: note.path,
        "note_title": note.title,
        FOLDERS: folders_of(note.path),
        "heading_path": list(chunk.heading_path),
        "heading_context": HEADING_SEPARATOR.join(chunk.heading_path),
        CHUNK_INDEX: chunk.chunk_index,
        "start_line": chunk.start_line,
        "end_line": chunk.end_line,
        "content": chunk.text,
        **({LINE_MAP: stored(chunk.line_map)} if chunk.line_map else {}),
        **({TITLE_ONLY: True} if chunk.title_only else {}),
        TAGS: list(note.tags),
        "aliases": list(note.aliases),
        DATE: note.date,
        DATE_NUM: date_num(note.date),
        **_periods(note, chunk),
        REPLACED: says_replaced(note.metadata, note.tags),
        SAVED_FROM: source_url(note.metadata),
        LANGUAGE: language,
        "mtime": mtime,
        CONTENT_HASH: content_hash,
    }


def written_words(payload: dict[str, Any]) -> str:
    """What a chunk writes where a reader sees it: its note's path, title and aliases, headings, text."""
    names = (payload[NOTE_PATH], payload.get("note_title") or "", *(payload.get("aliases") or ()))
    return f"{' '.join(names)} {payload.get('heading_context') or ''}\n{payload.get('content') or ''}"


def _periods(note: ParsedNote, chunk: Chunk) -> dict[str, Any]:
    states = bool(note.stated_periods)
    periods, stated = chunk_periods(chunk.text, chunk.heading_path, note.periods, note_states=states)
    return {PERIODS: list(periods), PERIOD_STATED: stated, NOTE_STATES_TIME: note.own_time}
