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

A question naming a period with its year, or a tag of one vault, narrows the vaults: one holding notes of that
period that speak to it, or so tagged, answers before one holding neither (`narrowed`): 0.805 and 0.834, the
first result of another vault 2 and 2 questions (4 and 1 before). The person's May 2025 journal answers "what
was stressing me out in may 2025" before the chats on stress of a vault written in 2023, which were surer of
the topic. A period that does not write its year ("recently", "last summer", "in June") is read against
today, which a vault written in another time does not share: with it, LoCoMo's first result was of the other
vault for 20 questions. A tag named by one word of the question (#kids for "the kids", #book) narrows nothing:
such words name every vault's topics (LoCoMo 121 questions first elsewhere).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def merged_by_confidence(
    ranked: Sequence[Sequence[T]],
    confidence: Callable[[T], float],
    narrowed: Sequence[bool] | None = None,
) -> list[T]:
    """One list from several ranked lists: at each step the head surest of being relevant, weighed by its
    list's surest entry against the surest of all, is taken (ties: the earlier list). Within one list the
    order never changes; a list that is alone is returned as it is.

    `narrowed`, one per list: whether its vault holds what the question narrows to (the tags it means, a
    note of the period it names that speaks to it). When some vaults do and others do not, the lists of
    those that do come first: a question naming a tag or a period asks for the notes so tagged or dated,
    which the vaults holding none cannot give however sure they are of their topic."""
    surest = [max((confidence(item) for item in items), default=0.0) for items in ranked]
    top = max(surest, default=0.0)
    weights = [best / top if top > 0 else 1.0 for best in surest]
    tier = [0] * len(ranked)
    if narrowed is not None and any(narrowed) and not all(narrowed):
        tier = [0 if holds else 1 for holds in narrowed]
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
