"""A question that asks for the latest time of something ("last time I went climbing with Lyd", "when did
mum last come to stay", "the most recent budget"): its answer is the newest note that answers, not the one
that matches best. A journal keeps every climbing day; the best-matching one may be a year old.

Read only where the question names no period of its own ("the latest project in July 2023" is about July).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

# words after "last" that make it a period ("when did I last week..."), not "the latest time"
_PERIOD_WORDS = (
    r"week|weekend|month|year|night|time|summer|winter|spring|autumn|fall|christmas|easter|"
    r"january|february|march|april|may|june|july|august|september|october|november|december"
)
_LATEST = re.compile(
    r"\b(?:the\s+)?last\s+time\b"
    r"|\bmost\s+recent(?:ly)?\b"
    r"|(?<!at the )\blatest\b"  # not a deadline: "by Friday at the latest"
    rf"|\bwhen\s+(?:did|was|were|have|has|had)\s+(?:\w+\s+){{1,3}}?last\s+(?!(?:{_PERIOD_WORDS})\b)[a-z]",
    re.I,
)

T = TypeVar("T")


def asks_for_latest(question: str) -> bool:
    return _LATEST.search(question) is not None


def days_of(periods: Iterable[str], today: dt.date) -> tuple[str, str] | None:
    """The days up to today that periods ("2025-10-30", "2025-01-01/2025-12-31") are of: the first day of the
    latest begun, and the last day any reaches (ISO); None when none has begun (a renewal due in 2027 does not
    make a note the newest)."""
    firsts, lasts = [], []
    for period in periods:
        first, _, last = period.partition("/")
        try:
            start, end = dt.date.fromisoformat(first[:10]), dt.date.fromisoformat((last or first)[:10])
        except ValueError:
            continue
        if start <= today:
            firsts.append(start)
            lasts.append(min(end, today))
    return (max(firsts).isoformat(), max(lasts).isoformat()) if firsts else None


def newest_first(
    items: Sequence[T], days_of_item: Callable[[T], tuple[str, str] | None]
) -> tuple[list[T], list[T]]:
    """The items with the newest dated one first and the undated after it in their order, and apart the
    dated ones older than it: they tell of an earlier time than the one asked for. `days_of_item`: the days
    an item is of (`days_of`), None for an undated one. The newest is the one begun last (the day of the
    last climb, not the year note running up to today); an item reaching into its days is no older (the year
    note stays beside the day). Nothing dated: the items as they were."""
    dated = [(days, position) for position, item in enumerate(items) if (days := days_of_item(item))]
    if not dated:
        return list(items), []
    (first, _), newest = max(dated, key=lambda pair: (pair[0], -pair[1]))
    older = {position for (_, last), position in dated if last < first}
    kept = [items[newest], *(item for i, item in enumerate(items) if i != newest and i not in older)]
    return kept, [items[i] for i in sorted(older)]
