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
subject would pick its heading over the lines under it that answer. A block ending with a colon ("Decided at
the kickoff and confirmed at the go/no-go:", "Bernie's stock take:") introduces the block after it, which
says what was decided or found: an excerpt never ends on it, but goes on into that block's lines as far
as its room allows (the example vault's "what did I decide about the database migration?" quoted the
line introducing the decision and none of it). A chunk of one block, or one none of
whose blocks holds a word of the question that the others lack (a match in other words), has nothing to
choose by: it is cut from its start as before.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

# a heading alone: the entry's title already says it, and its words would pick it over the lines under it
# (written with #, or underlined with = or -: a setext heading)
_HEADING = re.compile(r"#{1,6}[ \t][^\n]*|[^\n]+\n[ \t]{0,3}(?:=+|-+)[ \t]*")
# a line cut short to end an excerpt keeps at least this much of itself: less is a fragment, not a statement
MIN_CUT_LINE = 40


@dataclass(frozen=True, slots=True)
class Excerpt:
    """Where a run of a chunk's blocks stands in it."""

    start: int  # offsets into the chunk's text
    end: int
    first_line: int  # lines from the chunk's first line
    last_line: int


@dataclass(frozen=True, slots=True)
class Block(Excerpt):
    """A blank-line separated block of a chunk (the shortest excerpt) and the question's words it holds."""

    terms: frozenset[str]
    leads_in: bool = False  # it ends with a colon: what it introduces is the block after it


def blocks_of(text: str, terms_of: Callable[[str], frozenset[str]]) -> tuple[Block, ...]:
    """The chunk's blocks (runs of lines between blank lines; a fenced code block is one, blank lines and
    all), each with the question's words it holds (`terms_of` a block's text)."""
    lines = text.split("\n")
    starts = [0]  # each line's offset, and one past the last
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    found: list[Block] = []

    def add(first: int, last: int) -> None:
        body = text[starts[first] : starts[last + 1] - 1].rstrip()  # an open fence's blank lines at the end
        if not _HEADING.fullmatch(body.strip()):
            start = starts[first]
            leads_in = body.rstrip("*_ \t").endswith(":")
            found.append(
                Block(start, start + len(body), first, first + body.count("\n"), terms_of(body), leads_in)
            )

    first: int | None = None  # the open block's first line
    fenced = False
    for number, line in enumerate(lines):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        if line.strip() or fenced:
            first = number if first is None else first
        elif first is not None:
            add(first, number - 1)
            first = None
    if first is not None:
        add(first, len(lines) - 1)
    return tuple(found)


def excerpt(text: str, blocks: Sequence[Block], weights: Mapping[str, float], room: int) -> Excerpt | None:
    """The run of consecutive blocks of `text` (`blocks_of` it) of at most `room` characters holding the most
    of the question's words (each by `weights`, times how few blocks hold it), the longest such run, the
    first of those, each with what its last block introduces (`_run`); None when the chunk has fewer than
    two blocks or no block holds a word the others lack."""
    if len(blocks) < 2:
        return None
    holding: dict[str, int] = {}
    for block in blocks:
        for term in block.terms:
            holding[term] = holding.get(term, 0) + 1
    rarity = {term: weights.get(term, 0.0) * math.log(len(blocks) / count) for term, count in holding.items()}
    best: tuple[float, int, int] | None = None  # (score, length, -first) of the best run
    chosen: Excerpt | None = None
    for first in range(len(blocks)):
        terms: set[str] = set()
        for last in range(first, len(blocks)):
            if blocks[last].end - blocks[first].start > room:
                break
            terms |= blocks[last].terms
            found = _run(text, blocks, first, last, room)
            if found is None:
                continue
            key = (round(sum(rarity[t] for t in terms), 9), found.end - found.start, -first)
            if best is None or key > best:
                best, chosen = key, found
    if best is None or best[0] <= 0.0:
        return None
    return chosen


def _run(text: str, blocks: Sequence[Block], first: int, last: int, room: int) -> Excerpt | None:
    """The run of `blocks[first:last + 1]`, and what its last block introduces as far as it fits in `room`
    (`_through`): None when that block leads in and nothing of what it introduces fits."""
    lead = blocks[last]
    # what it introduces is the block right after it: not one after a heading between them
    if lead.leads_in and last + 1 < len(blocks) and not text[lead.end : blocks[last + 1].start].strip():
        return _through(text, blocks[first], lead, blocks[last + 1], room)
    return Excerpt(blocks[first].start, blocks[last].end, blocks[first].first_line, blocks[last].last_line)


def _through(text: str, first: Block, lead: Block, following: Block, room: int) -> Excerpt | None:
    """From `first` through `lead` and the lines of `following` that fit in `room`, the last of them cut
    at a word when it does not fit whole and enough of it is left to say something; a fenced code block
    only whole. None when nothing of `following` fits."""
    if following.end - first.start <= room:
        return Excerpt(first.start, following.end, first.first_line, following.last_line)
    body = text[following.start : following.end]
    if body.lstrip().startswith(("```", "~~~")):
        return None
    end, last_line = lead.end, lead.last_line
    offset = following.start
    for number, line in enumerate(body.split("\n")):
        if offset + len(line) - first.start <= room:
            end, last_line = offset + len(line), following.first_line + number
            offset += len(line) + 1
            continue
        cut = text.rfind(" ", offset, first.start + room + 1)
        if cut - offset >= MIN_CUT_LINE:
            end, last_line = len(text[:cut].rstrip()), following.first_line + number
        break
    return Excerpt(first.start, end, first.first_line, last_line) if end > lead.end else None
