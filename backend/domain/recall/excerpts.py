"""The lines of a long chunk that answer: what a recall entry quotes when the whole chunk would crowd out the
entries after it.

A chunk is up to 200 words: a chat session's dozen messages, a journal day's entries, a project note's
paragraphs. A question is about one of them ("when did Caroline go to the support group?"), and the block
the agent receives is 1,500 characters: quoted whole, one such chunk leaves the next note as likely no room
(LoCoMo dev, the default model: the note holding the answer was left "over the budget" for 74 of 759
questions, behind a first entry that did not hold it). So when the entries the gate let through do not fit
whole, each gets an equal share of the block, and a chunk longer than its share quotes the run of its
blank-line separated blocks that holds the most of the question's words within it, each word weighing by
how few of the chunk's blocks hold it (the speaker's name on every message weighs nothing).

A heading alone is not a block to choose: the entry's title says it, and a question naming the note's
subject would pick its heading over the lines under it that answer. A chunk of one block, or one none of
whose blocks holds a word of the question that the others lack (a match in other words), has nothing to
choose by: it is cut from its start as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# a heading alone: the entry's title already says it, and its words would pick it over the lines under it
_HEADING = re.compile(r"#{1,6}[ \t][^\n]*")


@dataclass(frozen=True, slots=True)
class Block:
    """A blank-line separated block of a chunk: where it stands and the question's words it holds."""

    start: int  # offsets into the chunk's text
    end: int
    first_line: int  # lines from the chunk's first line
    terms: frozenset[str]


@dataclass(frozen=True, slots=True)
class Excerpt:
    start: int  # offsets into the chunk's text
    end: int
    first_line: int  # lines from the chunk's first line
    last_line: int


def blocks_of(text: str, terms_of: Callable[[str], frozenset[str]]) -> tuple[Block, ...]:
    """The chunk's blocks (runs of lines between blank lines; a fenced code block is one, blank lines and
    all), each with the question's words it holds (`terms_of` a block's text)."""
    found: list[Block] = []
    first: int | None = None  # the current block's first line
    fenced = False
    starts = [0]
    lines = text.split("\n")
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    for number, line in enumerate([*lines, ""]):
        if line.lstrip().startswith(("```", "~~~")) and number < len(lines):
            fenced = not fenced
        if line.strip() or (fenced and number < len(lines)):
            first = number if first is None else first
            continue
        if first is not None:
            start, end = starts[first], starts[number] - 1
            body = text[start:end]
            if not _HEADING.fullmatch(body.strip()):
                found.append(Block(start, start + len(body.rstrip()), first, terms_of(body)))
            first = None
    return tuple(found)


def excerpt(text: str, blocks: Sequence[Block], weights: Mapping[str, float], room: int) -> Excerpt | None:
    """The run of consecutive blocks of at most `room` characters holding the most of the question's words
    (each by `weights`, times how few blocks hold it), the longest such run, the first of those; None when
    the chunk has fewer than two blocks or no block holds a word the others lack."""
    if len(blocks) < 2:
        return None
    holding: dict[str, int] = {}
    for block in blocks:
        for term in block.terms:
            holding[term] = holding.get(term, 0) + 1
    rarity = {term: weights.get(term, 0.0) * math.log(len(blocks) / count) for term, count in holding.items()}
    best: tuple[float, int, int] | None = None  # (score, length, -first) of the best run
    chosen: tuple[int, int] | None = None
    for first in range(len(blocks)):
        terms: set[str] = set()
        for last in range(first, len(blocks)):
            length = blocks[last].end - blocks[first].start
            if length > room:
                break
            terms |= blocks[last].terms
            key = (round(sum(rarity[t] for t in terms), 9), length, -first)
            if best is None or key > best:
                best, chosen = key, (first, last)
    if best is None or chosen is None or best[0] <= 0.0:
        return None
    first, last = chosen
    end = blocks[last].end
    return Excerpt(blocks[first].start, end, blocks[first].first_line, text.count("\n", 0, end) if end else 0)
