"""Obsidian `%%comments%%`: text Obsidian hides in reading view, so it is not the user's prose.

A comment runs from one `%%` to the next, across lines and blank lines; an unclosed `%%` hides the
rest of the note (as Obsidian's editor shows it). `%%` inside a fenced code block or an inline code
span on the same line is literal text. Fences are honoured inside a comment too: Excalidraw keeps
its drawing JSON as a fence inside `%% ... %%`, and that JSON must not end the comment early.
Indented code blocks are not recognised (that needs a full Markdown parse).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_BACKTICKS = re.compile(r"`+")
MARKER = "%%"


def fence_opening(line: str) -> str | None:
    """The fence string ("```", "~~~~", ...) when `line` opens a fenced code block, else None."""
    opening = _FENCE.match(line)
    if opening is None or (opening.group(1)[0] == "`" and "`" in opening.group(2)):
        return None
    return opening.group(1)


def fence_closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.lstrip(fence[0])


@dataclass(frozen=True, slots=True)
class Comments:
    """Where the comments of one text are."""

    spans: tuple[tuple[int, int], ...]  # character ranges [start, end), the `%%` markers included
    hidden_lines: frozenset[int]  # 0-based lines with no visible text: only comment and whitespace

    @property
    def is_empty(self) -> bool:
        return not self.spans


NO_COMMENTS = Comments((), frozenset())


def find_comments(text: str) -> Comments:
    if MARKER not in text:
        return NO_COMMENTS
    spans: list[tuple[int, int]] = []
    lines = text.split("\n")
    open_at: int | None = None
    fence: str | None = None
    offset = 0
    for line in lines:
        if fence is not None:
            if fence_closes(line, fence):
                fence = None
        elif (opened := fence_opening(line)) is not None:
            fence = opened
        else:
            for position in _markers(line, inside=open_at is not None):
                if open_at is None:
                    open_at = offset + position
                else:
                    spans.append((open_at, offset + position + len(MARKER)))
                    open_at = None
        offset += len(line) + 1
    if open_at is not None:
        spans.append((open_at, len(text)))
    return Comments(tuple(spans), _hidden_lines(lines, spans))


def _markers(line: str, *, inside: bool) -> list[int]:
    """Positions of the `%%` markers of one line outside inline code spans, in order."""
    found: list[int] = []
    position = 0
    while True:
        marker = line.find(MARKER, position)
        if marker < 0:
            return found
        # Inside a comment everything is raw text; outside, a code span hides the marker.
        tick = -1 if inside else line.find("`", position, marker)
        if tick >= 0:
            run_end = tick
            while run_end < len(line) and line[run_end] == "`":
                run_end += 1
            closing = _closing_backticks(line, run_end, run_end - tick)
            position = closing if closing is not None else run_end
            continue
        found.append(marker)
        inside = not inside
        position = marker + len(MARKER)


def _closing_backticks(line: str, start: int, length: int) -> int | None:
    """End of the backtick run of exactly `length` that closes a code span, or None."""
    for run in _BACKTICKS.finditer(line, start):
        if len(run.group(0)) == length:
            return run.end()
    return None


def _hidden_lines(lines: list[str], spans: list[tuple[int, int]]) -> frozenset[int]:
    """Lines a comment touches and whose text outside every comment is only whitespace."""
    hidden: set[int] = set()
    span_index = 0
    line_start = 0
    for index, line in enumerate(lines):
        line_end = line_start + len(line)
        while span_index < len(spans) and spans[span_index][1] <= line_start:
            span_index += 1
        if span_index == len(spans):
            break
        # Slices, not a per-character walk: Excalidraw comments hold lines of tens of kilobytes.
        visible: list[str] = []
        column = line_start
        for start, end in spans[span_index:]:
            if start > line_end:
                break
            visible.append(line[column - line_start : max(start, column) - line_start])
            column = max(column, min(end, line_end))
        if visible:  # a comment touches this line
            visible.append(line[column - line_start :])
            if not "".join(visible).strip():
                hidden.add(index)
        line_start = line_end + 1
    return frozenset(hidden)
