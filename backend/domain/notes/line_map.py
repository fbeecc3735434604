"""Where the lines of a chunk's text stand in its file.

A chunk's text leaves out what a reader never sees (comment lines, query blocks, templater commands:
chunking.py), each run of them with the blank lines around it shown as one blank line. After such a run
the text's n-th line is no longer the file's `start_line + n`, and a quote of some of its lines (an excerpt,
a cut, a remembered fact) would cite lines of the file that say something else. A chunk that spans such a run
keeps its map: the text lines where the count jumps, each with the file line it stands for.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

# (text line, file line - start_line) at each text line where the file's count jumps, ascending; () when
# every text line n is the file's start_line + n
LineMap = tuple[tuple[int, int], ...]


def jumps(file_lines: Iterable[int]) -> LineMap:
    """The map of a text whose lines stand at `file_lines` (each relative to the first, which is 0)."""
    found: list[tuple[int, int]] = []
    expected = 0
    for index, line in enumerate(file_lines):
        if line != expected:
            found.append((index, line))
        expected = line + 1
    return tuple(found)


def file_line(start_line: int, line_map: LineMap, text_line: int) -> int:
    """The file line of the text's line `text_line` (0-based) of a chunk starting at `start_line`."""
    base, offset = 0, 0
    for jump_at, jump_to in line_map:
        if jump_at > text_line:
            break
        base, offset = jump_at, jump_to
    return start_line + offset + text_line - base


def from_line(line_map: LineMap, text_line: int) -> LineMap:
    """The map of the text from its line `text_line` on (a quote of its lines that starts there)."""
    base = file_line(0, line_map, text_line)
    return tuple((at - text_line, to - base) for at, to in line_map if at > text_line)


def stored(line_map: LineMap) -> list[list[int]]:
    return [[at, to] for at, to in line_map]


def read(value: Any) -> LineMap:
    """A map as a payload stores it (absent in a chunk whose lines are the file's, and in an index built
    before maps were stored)."""
    if not value:
        return ()
    pairs: Sequence[Any] = value
    return tuple((int(at), int(to)) for at, to in pairs)
