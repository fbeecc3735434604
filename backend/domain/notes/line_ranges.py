"""Line windows of a note's text, numbered as search results number them: 1-based, inclusive, file lines.

Lines end where editors and the indexer end them: at "\\n", "\\r\\n" or a bare "\\r" (an old Mac file, a
carriage return pasted into a line), and a final newline does not start another line, so a note of three
lines with a trailing newline has lines 1-3, as editors show it.
"""

from __future__ import annotations

from dataclasses import dataclass

from backend.domain.errors import InvalidRequestError


@dataclass(frozen=True, slots=True)
class LineWindow:
    text: str  # the lines start_line..end_line joined with "\n"
    start_line: int  # 0 for an empty note
    end_line: int  # 0 for an empty note
    total_lines: int


def as_indexed(text: str) -> str:
    """A file's text as the indexer reads it (markdown/parser.py), and so numbers its lines: every line break
    a "\\n", no byte-order mark."""
    return text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")


def split_lines(text: str) -> list[str]:
    lines = as_indexed(text).split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def line_window(text: str, start_line: int | None = None, end_line: int | None = None) -> LineWindow:
    """Lines `start_line`..`end_line` (the whole note when both are None). An end past the last line is cut
    to it; a start past the last line, or an end before the start, is an InvalidRequestError."""
    if (start_line is not None and start_line < 1) or (end_line is not None and end_line < 1):
        raise InvalidRequestError("start_line and end_line count from 1")
    if start_line is not None and end_line is not None and end_line < start_line:
        raise InvalidRequestError(f"end_line ({end_line}) is before start_line ({start_line})")
    lines = split_lines(text)
    total = len(lines)
    start = start_line or 1
    if total == 0:
        if start > 1:
            raise InvalidRequestError("the note is empty: it has no lines")
        return LineWindow("", 0, 0, 0)
    if start > total:
        raise InvalidRequestError(f"start_line ({start}) is past the end of the note ({total} lines)")
    end = min(end_line or total, total)
    return LineWindow("\n".join(lines[start - 1 : end]), start, end, total)
