"""What a note holds that no one wrote to be read: never chunked, embedded or quoted.

* Encoded blobs: `data:...;base64,` URIs (images pasted into a note become megabytes of them), and any other
  run of base64 or hex long enough that no word is that long (PEM and MIME bodies, wrapped at 64 or 76
  characters a line, count line by line).
* Plugin code that renders into the note in reading view: Templater commands (`<% ... %>`, `<%* ... %>`,
  across lines), Dataview queries (```` ```dataview ````, ```` ```dataviewjs ```` blocks, and the inline
  `` `= this.file.name` `` / `` `$= dv.current()` ``), and the query blocks of Tasks, Obsidian search and
  Bases. What they show is computed from other notes, which are indexed where they are.

Code blocks and inline code are literal otherwise (a note that explains Templater in a ```` ```js ```` block
keeps it), as `%%comments%%` treat them. The spans are character ranges of the body: cutting them out of a
chunk's text leaves every other character on its line, so the lines a chunk reports stay the file's.

Placeholder titles ("Untitled 3", "Invalid date", a Templater command as `title:`) name no subject: a note
keeps showing its name, but the name is neither embedded nor keyword-indexed.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from backend.domain.notes.comments import fence_closes, fence_opening

# Fenced blocks whose body is a query for a plugin to run, not text (the fence's first word, lower case)
QUERY_FENCES = frozenset({"dataview", "dataviewjs", "tasks", "query", "base", "bases"})
_URI = r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=%]+"
# the image around a pasted data URI goes with it: `![](...)` or `<img src=...>` alone is no text either
_DATA_URI = re.compile(
    rf"!\[[^\]\n]{{0,200}}\]\(\s*<?{_URI}>?\s*\)|<img\b[^>]{{0,500}}?{_URI}[^>]{{0,500}}>|{_URI}",
    re.IGNORECASE,
)
# Far longer than any word, and an identifier or URL has other characters. Base64 needs digits or "+/" among
# mixed-case letters (a long CamelCase name has neither). Hex longer than a SHA-512 digest (128), which a note
# may keep to be looked up.
_BASE64_RUN = re.compile(r"(?<![\w+/=.:-])[A-Za-z0-9+/]{100,}={0,2}(?![\w+/=.-])")
_HEX_RUN = re.compile(r"(?<![\w])[0-9a-fA-F]{129,}(?![\w])")
# A line of PEM, MIME or uuencoded base64: nothing else on it, wrapped at 60-76 characters.
_BASE64_LINE = re.compile(r"^[ \t>]*([A-Za-z0-9+/]{48,}={0,2})[ \t]*$")
# `= expression` is also how code and proofs are written, so only what names Dataview's own objects counts
_INLINE_QUERY = re.compile(
    r"(?<!`)`(?:\$=|=[ \t]*(?:(?:this|file|dv|date|dur|choice|link)\b|\[\[))[^`\n]*`(?!`)"
)
_BACKTICKS = re.compile(r"`+")
_NEWLINE = re.compile(r"\n")
_FAR = 1 << 62  # past any offset: (position, _FAR) sorts after every range starting at position

# Obsidian's "Untitled" in its own languages, its numbered copies ("Untitled 2"), and moment.js's "Invalid
# date" (a Templater date format applied to nothing); a Zettelkasten or date prefix before them is the stamp
# of when the note was made, not a subject either.
_PLACEHOLDER = re.compile(
    r"^(?:[\d_.:T -]*[-_ ])?(?:untitled|unbenannt|sans titre|sin t[ií]tulo|senza titolo|sem t[ií]tulo|"
    r"naamloos|без названия|无标题|未命名|無題|invalid date)(?:[ _-]*\d+)?$",
    re.IGNORECASE,
)


def is_placeholder_title(title: str) -> bool:
    """Whether `title` (a note's title or file name) is a placeholder or template code rather than a name."""
    text = title.strip()
    return not text or "<%" in text or _PLACEHOLDER.match(text) is not None


@dataclass(frozen=True, slots=True)
class NotText:
    """Where the not-text of one body is."""

    spans: tuple[tuple[int, int], ...]  # character ranges [start, end), sorted, not overlapping
    hidden_lines: frozenset[int]  # 0-based lines with nothing else on them but whitespace

    @property
    def is_empty(self) -> bool:
        return not self.spans


NO_NOT_TEXT = NotText((), frozenset())


def find_not_text(body: str) -> NotText:
    spans = _merged([*_query_blocks(body), *_outside_code(body)])
    if not spans:
        return NO_NOT_TEXT
    return NotText(tuple(spans), _covered_lines(body, spans))


def readable(body: str) -> str:
    """`body` without its not-text: what a language is detected from (a note that opens with a pasted image
    would otherwise be read as base64, in no language)."""
    spans = find_not_text(body).spans
    if not spans:
        return body
    kept = [
        body[end:start]
        for (_, end), (start, _) in zip(((0, 0), *spans), (*spans, (len(body), 0)), strict=True)
    ]
    return " ".join(kept)


def _query_blocks(body: str) -> list[tuple[int, int]]:
    """Fenced query blocks, fences included (an unclosed one runs to the end, as Markdown reads it)."""
    if "```" not in body and "~~~" not in body:
        return []
    spans: list[tuple[int, int]] = []
    fence: str | None = None
    query_start: int | None = None
    offset = 0
    for line in body.split("\n"):
        end = offset + len(line)
        if fence is None:
            opened = fence_opening(line)
            if opened is not None:
                fence = opened
                info = line.strip()[len(opened) :].strip().split(maxsplit=1)
                query_start = offset if info and info[0].lower() in QUERY_FENCES else None
        elif fence_closes(line, fence):
            if query_start is not None:
                spans.append((query_start, end))
            fence, query_start = None, None
        offset = end + 1
    if query_start is not None:
        spans.append((query_start, len(body)))
    return spans


def _outside_code(body: str) -> list[tuple[int, int]]:
    """Blobs and Templater commands outside code, and inline Dataview queries (which are code spans)."""
    fences, code = _code_ranges(body)
    spans: list[tuple[int, int]] = []
    for pattern in (_DATA_URI, _BASE64_RUN, _HEX_RUN):
        for match in pattern.finditer(body):
            run = pattern is not _DATA_URI
            if run and (_in_url(body, match.start()) or not _looks_encoded(match.group(0), pattern)):
                continue
            if not _inside(code, match.start()):
                spans.append(match.span())
    spans += [span for span in _templater(body) if not _inside(code, span[0])]
    spans += [m.span() for m in _INLINE_QUERY.finditer(body) if not _inside(fences, m.start())]
    spans += _base64_lines(body, fences)
    return spans


def _in_url(body: str, position: int) -> bool:
    # a signed URL's signature is part of a link that still works: the link is kept whole
    window = max(0, position - 2000)  # a bound: a megabyte line holds many runs
    token_start = max(body.rfind(c, window, position) for c in " \n(<")
    token = body[max(token_start + 1, window) : position]
    return "://" in token or token.startswith("www.")


def _templater(body: str) -> list[tuple[int, int]]:
    """Each `<%` up to the first `%>` after it. A scan, not a lazy regex: many unclosed `<%` in a large note
    would cost a regex time quadratic in its length."""
    spans: list[tuple[int, int]] = []
    start = body.find("<%")
    while start >= 0:
        end = body.find("%>", start + 2)
        if end < 0:
            break  # no later "<%" can close either
        spans.append((start, end + 2))
        start = body.find("<%", end + 2)
    return spans


def _looks_encoded(run: str, pattern: re.Pattern[str] = _BASE64_RUN) -> bool:
    if pattern is _HEX_RUN:
        return True
    # base64 of anything mixes digits or "+/" into letters of both cases; an all-letter run does not
    return any(c.isdigit() or c in "+/" for c in run) and run.lower() != run and run.upper() != run


def _base64_lines(body: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of two or more lines that are each nothing but base64 (a pasted key, a MIME part)."""
    spans: list[tuple[int, int]] = []
    run: list[tuple[int, int]] = []
    offset = 0
    for line in [*body.split("\n"), ""]:
        match = _BASE64_LINE.match(line)
        if match is not None and _looks_encoded(match.group(1)) and not _inside(fences, offset):
            run.append((offset + match.start(1), offset + match.end(1)))
        else:
            if len(run) >= 2:
                spans += run
            run = []
        offset += len(line) + 1
    return spans


def _code_ranges(body: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(fenced code blocks, fences included; those and the inline code spans outside them)."""
    fences: list[tuple[int, int]] = []
    fence: str | None = None
    start = 0
    offset = 0
    for line in body.split("\n"):
        if fence is None:
            opened = fence_opening(line)
            if opened is not None:
                fence, start = opened, offset
        elif fence_closes(line, fence):
            fences.append((start, offset + len(line)))
            fence = None
        offset += len(line) + 1
    if fence is not None:
        fences.append((start, len(body)))
    if "`" not in body:
        return fences, fences
    return fences, _merged([*fences, *_code_spans(body, fences)])


def _code_spans(body: str, fences: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inline code outside fences: a run of backticks up to the next run of as many on the same line (as
    `%%comments%%` read them). Each run's closer is looked up, so stray backticks cost no rescans."""
    runs = [m.span() for m in _BACKTICKS.finditer(body) if not _inside(fences, m.start())]
    by_length: dict[int, list[int]] = {}
    for index, (start, end) in enumerate(runs):
        by_length.setdefault(end - start, []).append(index)
    newlines = [m.start() for m in _NEWLINE.finditer(body)]
    spans: list[tuple[int, int]] = []
    index = 0
    while index < len(runs):
        start, end = runs[index]
        same = by_length[end - start]
        later = bisect_right(same, index)
        closer = same[later] if later < len(same) else None
        if closer is not None and bisect_right(newlines, start) == bisect_right(newlines, runs[closer][0]):
            spans.append((start, runs[closer][1]))
            index = closer + 1
        else:
            index += 1
    return spans


def _inside(ranges: list[tuple[int, int]], position: int) -> bool:
    """Whether `position` is in one of `ranges` (sorted, not overlapping)."""
    at = bisect_right(ranges, (position, _FAR)) - 1
    return at >= 0 and position < ranges[at][1]


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _covered_lines(body: str, spans: list[tuple[int, int]]) -> frozenset[int]:
    """Lines with text that a span touches, and nothing but whitespace outside the spans."""
    hidden: set[int] = set()
    first = 0  # the first span that may still touch this line or a later one
    line_start = 0
    for number, line in enumerate(body.split("\n")):
        line_end = line_start + len(line)
        while first < len(spans) and spans[first][1] <= line_start:
            first += 1
        if line.strip() and first < len(spans) and spans[first][0] < line_end:
            column = line_start
            left: list[str] = []
            for start, end in spans[first:]:
                if start >= line_end:
                    break
                left.append(body[column : max(start, column)])
                column = max(column, min(end, line_end))
            left.append(body[column:line_end])
            if not "".join(left).strip():
                hidden.add(number)
        line_start = line_end + 1
    return frozenset(hidden)
