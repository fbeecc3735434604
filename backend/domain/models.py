"""Pure values that flow through every layer: notes, chunks, vectors, hits; and one value made of another's
fields of the same names (`from_same_fields`)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields, is_dataclass
from enum import StrEnum
from typing import Any, TypeVar

from backend.domain.index.chunk_rules import CHUNK_RULES
from backend.domain.links import Link
from backend.domain.notes.line_map import LineMap


class SearchMode(StrEnum):
    HYBRID = "hybrid"
    DENSE = "dense"
    KEYWORD = "keyword"


@dataclass(frozen=True, slots=True)
class Heading:
    level: int
    text: str
    line: int  # 1-based line of the heading in the file


@dataclass(frozen=True, slots=True)
class ParsedNote:
    """A Markdown note as the indexer understands it."""

    path: str  # vault-relative, forward slashes, e.g. "journal/2026-01-03.md"
    title: str
    body: str  # text after the frontmatter
    body_start_line: int  # 1-based file line where `body` begins
    tags: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    date: str | None = None  # ISO YYYY-MM-DD
    # the periods the note is of, each an ISO day or "start/end" days inclusive (its date, its file name's
    # month or week, its properties' days and ranges, else its folder's year): what a question's time meets
    periods: tuple[str, ...] = ()
    # those of `periods` the note states (its `date:`, its name's label, properties, folder): not a year its
    # name only mentions
    stated_periods: tuple[str, ...] = ()
    # its `date:`, a day or label in its name, or its folder says the time it is of (not a property's day:
    # a person's `birthday:`, a clipping's `published:`; never `created:`): every chunk is of that time
    own_time: bool = False
    headings: tuple[Heading, ...] = ()
    inline_tags: tuple[str, ...] = ()  # those of `tags` written in the text ("#sleep"), not the frontmatter
    metadata: dict[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()  # e.g. invalid frontmatter; the note is still indexed
    links: tuple[Link, ...] = ()  # in order of appearance; none from code or %%comments%%
    block_ids: tuple[str, ...] = ()  # "^id" markers, without the caret


@dataclass(frozen=True, slots=True)
class Chunk:
    """A heading-aware slice of one note."""

    note_path: str
    chunk_index: int
    text: str  # the note text itself (what the agent reads)
    heading_path: tuple[str, ...]
    start_line: int  # 1-based, inclusive, in the file
    end_line: int  # 1-based, inclusive
    # where the text's lines stand in the file, when it leaves hidden lines out (line_map.py)
    line_map: LineMap = ()
    # its text is its note's title, standing in for a note of headings or a query alone (chunking.py): found
    # by name, it has nothing of its own to quote
    title_only: bool = False


@dataclass(frozen=True, slots=True)
class ChunkEntry:
    """What the index holds about one chunk point, without its text or vectors (for consistency checks)."""

    id: str
    note_path: str
    chunk_index: int
    content_hash: str  # of the note text the chunk was cut from
    has_dense: bool  # it has a dense vector, or the index keeps none (keyword-only)


@dataclass(frozen=True, slots=True)
class SparseVector:
    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError("sparse vector indices and values differ in length")

    @property
    def is_empty(self) -> bool:
        return not self.indices


@dataclass(frozen=True, slots=True)
class PointRecord:
    """One point to write: a chunk's vectors and its payload."""

    id: str  # UUID string
    sparse: SparseVector
    payload: dict[str, Any]
    dense: tuple[float, ...] | None = None
    # the chunk's window vectors, compared with the chunk's own by MAX_SIM (an index with dense_windows)
    windows: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class DenseVectors:
    """A written point's dense vectors, added once they are embedded (its payload and keyword vector stay)."""

    id: str  # UUID string of a point that exists
    dense: tuple[float, ...]
    windows: tuple[tuple[float, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class ScoredPoint:
    id: str
    score: float
    payload: dict[str, Any]
    # how likely the hit is relevant at all (0..1, domain/ranking/confidence.py); None until the search sets
    # it
    confidence: float | None = None
    # the pointer (a hub chunk whose line describes this hit's note) that led here; None for most hits
    via: ScoredPoint | None = None


@dataclass(frozen=True, slots=True)
class PointFilter:
    """Conditions every returned point must meet (all given fields AND-ed).

    `note_paths` and `tags` match any of their values; `folders` matches notes under any of the given
    folder prefixes; dates are inclusive ISO days compared against the note date.
    """

    note_paths: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    date_from: str | None = None
    date_to: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (self.note_paths or self.folders or self.tags or self.date_from or self.date_to)


@dataclass(frozen=True, slots=True)
class IndexIdentity:
    """What the index was built with; a different embedder or keyword encoding must never write into it."""

    embedding_model: str  # "none" when keyword-only
    dimension: int | None
    keyword_encoding: str = ""  # SparseEncoder.fingerprint; "" for indexes built before it was recorded
    # words in a dense window of a chunk (backend.domain.notes.dense_windows); 0: one dense vector per chunk
    dense_windows: int = 0
    # what a model served over HTTP got before each document and query
    # (domain/index/embedding_instructions.py); "" for none, for the in-process models (they add their own)
    # and for indexes built before they were recorded, which is what those were embedded with
    document_instruction: str = ""
    query_instruction: str = ""
    # the rules its chunks were cut and described by (domain/index/chunk_rules.py); 0 for indexes built
    # before they were recorded. Not part of `matches`: an older index answers as it is while it is rebuilt
    chunk_rules: int = CHUNK_RULES

    @property
    def chunks_outdated(self) -> bool:
        """Whether this code cuts or describes chunks otherwise than the index was built (CHUNK_RULES)."""
        return self.chunk_rules < CHUNK_RULES

    def matches(self, other: IndexIdentity) -> bool:
        """The same vectors: another document instruction made other document vectors, so it needs a
        rebuild as another model does. The query instruction is left out: a query is embedded when it is
        asked, so a new one applies from the next search on and no stored vector changes."""
        return (
            self.embedding_model == other.embedding_model
            and self.dimension == other.dimension
            and self.keyword_encoding == other.keyword_encoding
            and self.dense_windows == other.dense_windows
            and self.document_instruction == other.document_instruction
        )


@dataclass(frozen=True, slots=True)
class NoteFile:
    """A Markdown file found in the vault."""

    rel_path: str  # vault-relative, forward slashes
    size: int
    mtime: float


def shown_name(path: str) -> str:
    """`path` as it can be shown and sent as JSON: bytes of a file name that are not UTF-8 (which Python
    keeps as lone surrogates, `\\udce9`) as `\\xe9`. Any other name is returned unchanged."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A file that could not be indexed (or only partly), and why. The path is `shown_name`'s: status and
    verify answer it as JSON, which cannot carry a name that is not UTF-8."""

    rel_path: str
    reason: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "rel_path", shown_name(self.rel_path))


T = TypeVar("T")


@functools.cache
def _declared(kind: type) -> frozenset[str]:
    # declared fields only, never methods or properties: a method named like a field of the other side
    # (SearchRequest.point_filter) is never taken for its value
    if is_dataclass(kind):
        return frozenset(f.name for f in fields(kind))
    return frozenset(kind.model_fields)  # type: ignore[attr-defined]  # a pydantic model: the API's schemas


@functools.cache
def _shared(kind: type, source: type) -> frozenset[str]:
    return _declared(kind) & _declared(source)


def from_same_fields(kind: type[T], source: object, /, **given: Any) -> T:
    """A `kind` of `given` and of the fields `source` declares under the names `kind` declares, as they are:
    how a layer translates a value of another into its own (a request into its query, a link into its
    record, a view into the API's schema) instead of copying each field by hand. A name both sides declare
    means the same on both, so a field added to both needs no line at each translation."""
    carried = {name: getattr(source, name) for name in _shared(kind, type(source)) if name not in given}
    return kind(**carried, **given)
