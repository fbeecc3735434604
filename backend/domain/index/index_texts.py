"""What is embedded and keyword-encoded for a chunk: pure functions of the parsed note, shared by indexing,
the dense pass, the memory store (file stems) and the embedding benchmark."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from backend.domain.index.payload import HEADING_SEPARATOR
from backend.domain.models import Chunk, ParsedNote
from backend.domain.notes.dense_windows import chunk_windows
from backend.domain.notes.not_text import is_placeholder_title, readable
from backend.domain.notes.note_properties import property_texts
from backend.domain.text.languages import language_code
from backend.domain.text.secrets import unsearchable
from backend.domain.text.sparse import DocumentFields
from backend.domain.text.tag_words import tag_text
from backend.domain.text.text_analysis import TextAnalyzer


def embedding_text(note: ParsedNote, chunk: Chunk) -> str:
    """What is embedded: the chunk under its note title and heading path, so a chunk about "Risks" in
    "Database migration" is found by either, and the tags its note writes in its text, as words
    (#MentalHealth as "Mental Health"): such a tag says what the note is about, wherever in it it is
    written. Frontmatter tags are left to the keyword side: they mostly file a note (meeting, project,
    people), and said in every chunk they drew type-alike notes together. Measured with MiniLM, hybrid
    nDCG@10 on personal-dev 0.697 without tags / 0.701 inline tags / 0.693 all tags / 0.697 tags the chunk
    does not write; on the example vault's questions 0.918 / 0.918 / 0.919 / 0.919, dense 0.962 / 0.969 /
    0.939 / 0.941."""
    return _under(_context(note, chunk), unsearchable(chunk.text))


def window_texts(note: ParsedNote, chunk: Chunk, max_words: int) -> list[str]:
    """What is embedded for each window of a chunk (none for a one-block chunk, or with windows off): the
    window under the same title and heading path as the chunk.

    The writer gives `max_words` 0 for a note saved from elsewhere (a web clipping: long prose, half of a
    real vault's chunks; dense_order.saved_from_elsewhere): its windows more than doubled what a first index
    embeds (SciFact's abstracts in paragraphs: 1,672 chunks gained 1,329 windows) for +0.006 hybrid nDCG@10
    and no dense gain there, while the person's own notes need them (without windows personal-dev loses
    0.009 and 3 recalled questions, LoCoMo's chats far more; docs/measurements.md, issue 44)."""
    if max_words <= 0:
        return []
    context = _context(note, chunk)
    return [_under(context, window) for window in chunk_windows(unsearchable(chunk.text), max_words)]


def declared_language(note: ParsedNote) -> str | None:
    """The language the note's frontmatter names (`lang` or `language`), as an ISO code."""
    return language_code(note.metadata.get("lang") or note.metadata.get("language"))


def note_language(analyzer: TextAnalyzer, note: ParsedNote) -> str:
    """The language a note's words are stemmed in: declared, else detected from its text, else the default."""
    return declared_language(note) or analyzer.note_language(None, readable(note.body) or note.title)


def keyword_fields(note: ParsedNote, chunk: Chunk, language: str | None = None) -> DocumentFields:
    """What is keyword-encoded, by field: the note's names weigh more than its text (BM25F). `language`:
    the note's (`note_language`), worked out once for all its chunks."""
    return DocumentFields(
        # a secret written in a note is never a term: a guessed password typed as a query finds nothing
        body=unsearchable(chunk.text),
        file_name=_named(file_stem(note.path)),
        title=_named(note.title),
        aliases=note.aliases,
        tags=note.tags,
        headings=chunk.heading_path,
        # nor a secret property (`db_password: …`, `api_key: …`)
        properties=property_texts(note.metadata, keep=_not_secret),
        language=language,
    )


def _named(name: str) -> str:
    """`name`, or "" for a placeholder ("Untitled 2", "Invalid date"): it says nothing the note is about, and
    every such note would share it."""
    return "" if is_placeholder_title(name) else name


def file_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def reuse_key(heading_path: Iterable[str], text: str) -> tuple[tuple[str, ...], str]:
    """What a moved note's stored dense vector is matched by. Without the title: a note renamed without a
    frontmatter title gets a new title (its file name), and its vectors are still the right ones for its
    unchanged text. They keep the old name until it is edited."""
    return tuple(heading_path), text


def embedded_text(title: str, heading_path: Sequence[str], inline_tags: Sequence[str], text: str) -> str:
    """`embedding_text` from a chunk's parts, as a stored chunk holds them (the look-inside page)."""
    return _under(_heading_context(title, heading_path, inline_tags), text)


def _under(context: str, text: str) -> str:
    return f"{context}\n\n{text}" if context else text


def _context(note: ParsedNote, chunk: Chunk) -> str:
    return _heading_context(note.title, chunk.heading_path, note.inline_tags)


def _heading_context(title: str, heading_path: Sequence[str], inline_tags: Sequence[str]) -> str:
    path = HEADING_SEPARATOR.join((title, *heading_path) if _named(title) else heading_path)
    tags = tag_text(inline_tags)
    return f"{path}\n{tags}" if tags else path


def _not_secret(name: str, value: str) -> bool:
    said = f"{name}: {value}"
    return unsearchable(said) == said
