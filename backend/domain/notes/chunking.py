"""Split a parsed note into heading-aware chunks that point back at exact file lines.

Rules:

* A section is a heading line plus everything up to the next heading of any level; text before
  the first heading is a section with heading_path (). A section with nothing under its heading
  emits no chunk, but its heading stays in the heading_path of the sections below it.
* Inside a section, whole blocks (blank-line separated paragraphs; a fenced code block counts as
  one block even with blank lines inside; a table is a block) are packed up to `max_tokens`.
  A block over the cap is cut between lines, and a line over the cap between words.
* Every chunk after the first of a section starts with up to `overlap_tokens` words of the
  previous chunk's tail; the overlap is shortened so that no chunk ever exceeds `max_tokens`.
* Tokens are words: runs of non-whitespace, with a run longer than `MAX_WORD_CHARS` counted as one
  word per `MAX_WORD_CHARS` characters (so base64 blobs are still capped). Scripts written without
  spaces count by characters: two Chinese or Japanese characters are a word, four Thai, Lao, Khmer or
  Myanmar letters (with their marks) are a word — about what an English word costs a model's tokenizer,
  so a chunk of Chinese fits the multilingual model's 512 tokens as a chunk of English does.
  Simple, stable, and independent of any embedding model's tokenizer.
* `text` is an exact slice of the note: from the first word (or the start of its line when
  only indentation precedes it) to the end of the last word. start_line/end_line are the 1-based
  file lines of those two ends, so an overlap chunk starts on the line its overlap starts.
* Obsidian `%%comments%%` are not prose (Obsidian hides them when reading; Excalidraw keeps its
  drawing JSON in one): a line holding only comment is dropped like a blank line, its words are
  never counted or indexed, and a chunk that spans a comment block has those lines cut out of
  its text (with one blank line in their place). A comment inside a line of prose stays.
* What no one wrote to be read (`backend.domain.notes.not_text`: pasted data URIs and other encoded blobs,
  Templater commands, Dataview and other query blocks) is cut out of the text: its words are never counted or
  indexed, a line of nothing else is dropped like a comment line, and one inside a line of prose leaves the
  rest of the line. Nothing moves: the lines a chunk reports are still the file's.
* A note whose only words are headings yields one chunk holding its title (its lines: the whole note's), so it
  can be found by name (the recall never quotes it: its title says nothing), unless that is a placeholder
  ("Untitled 2"). A note with no words at all (nothing but frontmatter, whitespace, comments or the above)
  yields none: there is nothing to find it by, and an empty answer quoted is noise. It is still a note
  (listed, linked, looked up by name).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from backend.domain.models import Chunk, Heading, ParsedNote
from backend.domain.notes.comments import fence_closes, fence_opening, find_comments
from backend.domain.notes.line_map import LineMap, jumps
from backend.domain.notes.not_text import find_not_text, is_placeholder_title

MAX_WORD_CHARS = 40

# Han, kana and their marks; then the letters of Thai, Lao, Khmer and Myanmar, each with the marks after it
_CJK = "\u3005-\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f"
_SOUTHEAST = "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff"
# the vowel signs and tone marks of those scripts, kept with the letter before them (a word never starts
# with one)
_MARKS = "\u0e31\u0e34-\u0e3a\u0e47-\u0e4e\u0eb1\u0eb4-\u0ebc\u0ec8-\u0ecd\u102b-\u103e\u17b4-\u17d3"
_WORD = re.compile(
    rf"[{_CJK}]{{1,2}}|(?:[{_SOUTHEAST}][{_MARKS}]*){{1,4}}|[^\s{_CJK}{_SOUTHEAST}]{{1,{MAX_WORD_CHARS}}}"
)


# Stands in for each character of not-text: whitespace to the word pattern and to str.strip (so a line of
# nothing else is blank), and removed from every chunk's text. No note types it (a control character).
_CUT = "\x1f"


def _blanked(body: str, spans: Sequence[tuple[int, int]]) -> str:
    if not spans:
        return body
    parts: list[str] = []
    last = 0
    for start, end in spans:
        parts += [body[last:start], re.sub(r"[^\n]", _CUT, body[start:end])]
        last = end
    parts.append(body[last:])
    return "".join(parts)


def count_words(text: str) -> int:
    """Words as chunks count them (see the module docstring)."""
    return len(_WORD.findall(text))


_ATX_HEADING = re.compile(r"^ {0,3}#{1,6}(?:[ \t]|$)")
_SETEXT_UNDERLINE = re.compile(r"^ {0,3}(?:=+|-+)[ \t]*$")


@dataclass(frozen=True, slots=True)
class _Section:
    start: int  # body line index of the heading (or of the body start)
    end: int  # exclusive body line index
    content_start: int  # first body line after the heading
    heading_path: tuple[str, ...]


class _Text:
    """The body with word and line offsets, to turn word ranges into exact slices and lines.

    Words on hidden (comment-only) lines are left out of the word index, so word ranges count and
    pack visible words only."""

    def __init__(self, body: str) -> None:
        not_text = find_not_text(body)
        self.cut = not_text.spans
        # what is shown: the body with its not-text blanked, so no word is found there and no offset moves
        self.body = _blanked(body, self.cut)
        self.lines = self.body.split("\n")
        self.hidden = find_comments(body).hidden_lines | not_text.hidden_lines
        self.line_starts: list[int] = []
        offset = 0
        for line in self.lines:
            self.line_starts.append(offset)
            offset += len(line) + 1
        spans = [m.span() for m in _WORD.finditer(self.body)]
        if self.hidden:
            spans = [span for span in spans if self.line_of(span[0]) not in self.hidden]
        self.word_starts = [start for start, _ in spans]
        self.word_ends = [end for _, end in spans]

    def is_blank(self, index: int) -> bool:
        return index in self.hidden or not self.lines[index].strip()

    def line_of(self, offset: int) -> int:
        return bisect_right(self.line_starts, offset) - 1

    def words_in_lines(self, first: int, last: int) -> tuple[int, int]:
        """Word index range [a, b) of body lines first..last (inclusive)."""
        begin = self.line_starts[first]
        end = self.line_starts[last] + len(self.lines[last])
        return bisect_left(self.word_starts, begin), bisect_left(self.word_starts, end)

    def span(self, first_word: int, end_word: int) -> tuple[int, int]:
        """Character range of words [first_word, end_word), widened to the line start when only
        indentation precedes the first word."""
        start = self.word_starts[first_word]
        line_start = self.line_starts[self.line_of(start)]
        # Every non-space character belongs to a word and words never cross lines, so only indentation
        # precedes `start` when the previous word ends before this line. (Slicing the line up to `start`
        # instead cost a 5 MB one-line note time quadratic in its length.)
        if first_word == 0 or self.word_ends[first_word - 1] <= line_start:
            start = line_start
        return start, self.word_ends[end_word - 1]

    def visible(self, start: int, end: int) -> tuple[str, LineMap]:
        """body[start:end] without its hidden lines, each run of them (with the blank lines around it)
        becoming one blank line, and where the lines it keeps stand in the file (line_map.py)."""
        first, last = self.line_of(start), self.line_of(end - 1)
        if not any(index in self.hidden for index in range(first, last + 1)):
            return self._shown(self.body[start:end]), ()
        pieces: list[list[tuple[int, str]]] = [[]]  # runs of shown lines: (file line - first, its text)
        for index in range(first, last + 1):
            if index in self.hidden:
                if pieces[-1]:
                    pieces.append([])
                continue
            line_start = self.line_starts[index]
            begin = start - line_start if index == first else 0
            stop = end - line_start if index == last else len(self.lines[index])
            pieces[-1].append((index - first, self.lines[index][begin:stop]))
        kept: list[list[tuple[int, str]]] = []
        for piece in pieces:
            if not piece:
                continue
            # a run's blank lines next to the hidden ones are shown as the one blank line between runs
            head, tail = 0, len(piece)
            while head < tail and piece[head][1] == "":
                head += 1
            while tail > head and piece[tail - 1][1] == "":
                tail -= 1
            # a run of blank lines alone still shows as one (empty) line
            kept.append(piece[head:tail] or [(piece[0][0], "")])
        lines: list[tuple[int, str]] = []
        for piece in kept:
            if lines:  # the blank line standing for the hidden run: the run's first line
                lines.append((lines[-1][0] + 1, ""))
            lines.extend(piece)
        return self._shown("\n".join(text for _, text in lines)), jumps(line for line, _ in lines)

    def _shown(self, text: str) -> str:
        # a blob cut from a line of prose leaves nothing behind, not its blank
        return text.replace(_CUT, "") if self.cut else text


def chunk_note(note: ParsedNote, *, max_tokens: int = 200, overlap_tokens: int = 30) -> list[Chunk]:
    if max_tokens < 1:
        raise ValueError("max_tokens must be at least 1")
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError("overlap_tokens must be between 0 and max_tokens - 1")
    text = _Text(note.body)
    ranges: list[tuple[tuple[str, ...], int, int]] = []
    for section in _sections(text, note.headings, note.body_start_line):
        units = _units(text, section, max_tokens, overlap_tokens)
        for first, end in _pack(units, max_tokens, overlap_tokens):
            ranges.append((section.heading_path, first, end))
    if not ranges:
        # a note of headings alone is found by its name; one with no words at all, or only a placeholder
        # name, has nothing to find it by
        if not text.word_starts or is_placeholder_title(note.title):
            return []
        # its lines are the whole note's: no line holds the title (a file name, a `title:`), so a citation
        # of it reads back the note
        last = note.body_start_line + len(note.body.rstrip("\n").split("\n")) - 1
        return [Chunk(note.path, 0, note.title, (), 1, max(1, last), title_only=True)]
    chunks: list[Chunk] = []
    for index, (heading_path, first, end) in enumerate(ranges):
        start_offset, end_offset = text.span(first, end)
        shown, line_map = text.visible(start_offset, end_offset)
        chunks.append(
            Chunk(
                note_path=note.path,
                chunk_index=index,
                text=shown,
                heading_path=heading_path,
                start_line=note.body_start_line + text.line_of(start_offset),
                end_line=note.body_start_line + text.line_of(end_offset - 1),
                line_map=line_map,
            )
        )
    return chunks


def _sections(text: _Text, headings: Sequence[Heading], body_start_line: int) -> list[_Section]:
    lines = text.lines
    by_line: dict[int, Heading] = {}
    for heading in headings:
        index = heading.line - body_start_line
        if 0 <= index < len(lines):
            by_line.setdefault(index, heading)
    starts = sorted(by_line)
    sections: list[_Section] = []
    if not starts or starts[0] > 0:
        end = starts[0] if starts else len(lines)
        sections.append(_Section(0, end, 0, ()))
    stack: list[Heading] = []
    for position, start in enumerate(starts):
        heading = by_line[start]
        while stack and stack[-1].level >= heading.level:
            stack.pop()
        stack.append(heading)
        end = starts[position + 1] if position + 1 < len(starts) else len(lines)
        content_start = _heading_end(lines, start, end) + 1
        sections.append(_Section(start, end, content_start, tuple(h.text for h in stack)))
    return [s for s in sections if not all(text.is_blank(i) for i in range(s.content_start, s.end))]


def _heading_end(lines: list[str], start: int, end: int) -> int:
    """Last body line of the heading at `start`: itself for "# x", its underline for setext."""
    if _ATX_HEADING.match(lines[start]):
        return start
    for index in range(start + 1, end):
        if not lines[index].strip():
            break
        if _SETEXT_UNDERLINE.match(lines[index]):
            return index
    return start


def _blocks(text: _Text, start: int, end: int) -> list[tuple[int, int]]:
    """(first, last) body line pairs of blank-line separated blocks; fences never split, and a
    comment-only line separates blocks like a blank one."""
    lines = text.lines
    blocks: list[tuple[int, int]] = []
    first: int | None = None
    last = start
    fence: str | None = None
    for index in range(start, end):
        line = lines[index]
        if fence is not None:
            if line.strip():
                last = index
            if fence_closes(line, fence):
                fence = None
            continue
        if text.is_blank(index):
            if first is not None:
                blocks.append((first, last))
                first = None
            continue
        if first is None:
            first = index
        last = index
        fence = fence_opening(line)
    if first is not None:
        blocks.append((first, last))
    return blocks


def _units(text: _Text, section: _Section, max_tokens: int, overlap_tokens: int) -> list[tuple[int, int]]:
    """Contiguous word ranges that are never cut further: whole blocks that fit the cap, else
    pieces of a block small enough to leave room for the overlap."""
    piece_cap = max_tokens - overlap_tokens
    units: list[tuple[int, int]] = []
    for first, last in _blocks(text, section.start, section.end):
        begin, end = text.words_in_lines(first, last)
        if end - begin <= max_tokens:
            units.append((begin, end))
            continue
        piece_start = begin
        for index in range(first, last + 1):
            line_begin, line_end = text.words_in_lines(index, index)
            if line_end - piece_start > piece_cap and line_begin > piece_start:
                units.append((piece_start, line_begin))
                piece_start = line_begin
            while line_end - piece_start > piece_cap:
                units.append((piece_start, piece_start + piece_cap))
                piece_start += piece_cap
        if piece_start < end:
            units.append((piece_start, end))
    return units


def _pack(units: list[tuple[int, int]], max_tokens: int, overlap_tokens: int) -> list[tuple[int, int]]:
    """Greedy packing of contiguous units into word ranges, each later one reaching back into the
    previous range by the overlap (shortened when the first unit leaves less room)."""
    ranges: list[tuple[int, int]] = []
    start: int | None = None
    end = 0
    overlap = 0
    for unit_start, unit_end in units:
        if start is not None and (end - start) + (unit_end - unit_start) + overlap <= max_tokens:
            end = unit_end
            continue
        if start is not None:
            ranges.append((start - overlap, end))
            previous_length = end - start + overlap
            overlap = max(0, min(overlap_tokens, max_tokens - (unit_end - unit_start), previous_length))
        start, end = unit_start, unit_end
    if start is not None:
        ranges.append((start - overlap, end))
    return ranges
