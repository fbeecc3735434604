"""Several vaults' answers as one list (issue 46): each vault's list keeps its own order, and the lists are
merged by calibrated confidence, the one scale every vault shares, each weighed by how likely its vault is
to hold an answer at all.

Why not one sort by confidence: a vault ranks by more than confidence (the fused score, a map line that
leads to the note it describes, the period asked, the newest entry for "the last time ..."), and a sort
undoes that order within every vault. Why the weight: a confidence is calibrated on questions asked of the
vault that answers them; beside another vault, an entry is only as likely as its vault is to hold the
answer, which its surest entry says (against the surest entry of any vault: the vault surest of an answer
keeps its confidences as they are). Measured with scripts/measure/evaluation/vaults.py, personal-dev beside
LoCoMo dev, nDCG@10 of the merged list against each vault alone (0.823 and 0.835): one sort by confidence
0.766 and 0.824, merged in each vault's order 0.755 and 0.834, weighed by the vault 0.778 and 0.835.

A question naming a note by its name, someone, a tag or a period narrows the vaults
(application/search/narrowing.py): the vault holding more of it answers first, a note the question is the name
of counted before the people it names, and those before its tags and its period. The person's
May 2025 journal answers "what was stressing me out in may 2025" before the chats on stress of a vault
written in 2023, which were surer of the topic; the chats naming Melanie answer "when did Melanie go to the
park?" before the person's park day. Measured as above: periods with their year and multi-word tags 0.805 and
0.834 (first result of the other vault: 2 and 2 questions); names, and tags named by one word (#kids for "the
kids", #book), counted, 0.820 and 0.835 (0 and 0). A period that does not write its year ("recently", "last
summer", "in June") is read against today, which a vault written in another time does not share: with it,
LoCoMo's first result was of the other vault for 20 questions. Tags named by one word name every vault's
topics: without the names before them, "What books has Melanie read?" went to the person's #book notes
(LoCoMo: 121 questions first elsewhere). Figures: docs/measurements.md.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def merged_by_confidence(
    ranked: Sequence[Sequence[T]],
    confidence: Callable[[T], float],
    narrowed: Sequence[tuple[int, ...]] | None = None,
) -> list[T]:
    """One list from several ranked lists: at each step the head surest of being relevant, weighed by its
    list's surest entry against the surest of all, is taken (ties: the earlier list). Within one list the
    order never changes; a list that is alone is returned as it is.

    `narrowed`, one per list: how much its vault holds of what the question narrows to (the people it
    names, the tags it means, a note of the period it names that speaks to it), compared as values are
    (more is more). The lists of the vaults holding more come before those holding less: a question naming
    someone, a tag or a period asks for the notes that hold them, which the vaults holding fewer of them
    cannot give however sure they are of their topic."""
    surest = [max((confidence(item) for item in items), default=0.0) for items in ranked]
    top = max(surest, default=0.0)
    weights = [best / top if top > 0 else 1.0 for best in surest]
    tier = [0] * len(ranked)
    if narrowed is not None:  # how many hold more than it does
        tier = [len({other for other in narrowed if other > holds}) for holds in narrowed]
    return list(_merge(ranked, lambda index, item: (tier[index], -confidence(item) * weights[index])))


def _merge(ranked: Sequence[Sequence[T]], key: Callable[[int, T], tuple[int, float]]) -> Iterator[T]:
    """The heads in the order of `key` (smallest first)."""
    heads = [(key(index, items[0]), index, 0) for index, items in enumerate(ranked) if items]
    heapq.heapify(heads)
    while heads:
        _, index, position = heapq.heappop(heads)
        items = ranked[index]
        yield items[position]
        if position + 1 < len(items):
            heapq.heappush(heads, (key(index, items[position + 1]), index, position + 1))
