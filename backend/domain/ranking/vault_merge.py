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
0.766 and 0.824, merged in each vault's order 0.755 and 0.834, weighed by the vault 0.778 and 0.835 (recall@10
0.802 against 0.847, and 0.930 as alone). personal-dev's loss is its period and tag questions ("what was
stressing me out in may 2025", "mental health"), where LoCoMo's chats on the topic are surer than the person's
own dated or tagged notes; the recall block recalls 55 of 64 as alone.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")


def merged_by_confidence(ranked: Sequence[Sequence[T]], confidence: Callable[[T], float]) -> list[T]:
    """One list from several ranked lists: at each step the head surest of being relevant, weighed by its
    list's surest entry against the surest of all, is taken (ties: the earlier list). Within one list the
    order never changes; a list that is alone is returned as it is."""
    surest = [max((confidence(item) for item in items), default=0.0) for items in ranked]
    top = max(surest, default=0.0)
    weights = [best / top if top > 0 else 1.0 for best in surest]
    return list(_merge(ranked, lambda index, item: confidence(item) * weights[index]))


def _merge(ranked: Sequence[Sequence[T]], key: Callable[[int, T], float]) -> Iterator[T]:
    heads = [(-key(index, items[0]), index, 0) for index, items in enumerate(ranked) if items]
    heapq.heapify(heads)
    while heads:
        _, index, position = heapq.heappop(heads)
        items = ranked[index]
        yield items[position]
        if position + 1 < len(items):
            heapq.heappush(heads, (-key(index, items[position + 1]), index, position + 1))
