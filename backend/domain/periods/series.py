"""Notes of one series, and a question about the present.

People keep a note a year (or a school year) of the same thing and name it so: "Budget 2024" and "Budget
2025", "Chemistry budget 2024-25" and "Chemistry budget 2025-26", "Honey sales 2024". Asked about the present
("how much is the chemistry budget this year", "what time is Rory's football now"), the one of today
answers; last year's copy tells of last year, and quoted beside it reads as a second answer (personal-dev's
"this year" question was given the 2024-25 budget beside the 2025-26 one; a school year's title spans two
calendar years, so the period asked cannot tell them apart).

A question asks about the present when it says so ("now", "currently", "these days") or names a period
as the one of today ("this year", "this month"). A note is of a series when its title is a name and a year
(`title_span`): a title that is only a date (a journal day) is of no series, nor one naming a day.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from typing import TypeVar

from backend.domain.periods.time_intent import TimeSpan
from backend.domain.periods.written_periods import title_span

T = TypeVar("T")

# a period read as one of today's when no span names it ("this term" is no calendar period)
_NOW = re.compile(
    r"\b(?:now|nowadays|currently|current|at\s+the\s+moment|these\s+days|this\s+(?:term|semester|season))\b",
    re.I,
)
_THIS = re.compile(r"(?:this|the\s+current)\b", re.I)
_LABEL_EDGES = " -_–—.,:;()[]#"


def asks_about_the_present(question: str, span: TimeSpan | None, today: dt.date) -> bool:
    """`span`: the period the question names. Named as the one of today ("this year"), it asks about the
    present; named by its own number ("in 2024-25", "in 2025"), about that period, which the period rule
    judges, even when today lies in it."""
    if span is not None:
        return _THIS.match(span.text) is not None and span.start <= today <= span.end
    return _NOW.search(question) is not None


def series_of(title: str) -> tuple[str, dt.date] | None:
    """The series a note's title names (the title without its year or school year, case aside) and when
    that year begins; None for a title naming no year, or nothing else. A title naming a day or a month
    ("2025-03-27 Chemistry team meeting") is of an event: each meeting tells of its own day, and a later
    one does not make an earlier one last year's copy."""
    span = title_span(title)
    if span is None or span.granularity not in ("year", "years"):
        return None
    at = title.find(span.text)
    name = f"{title[:at].strip(_LABEL_EDGES)} {title[at + len(span.text) :].strip(_LABEL_EDGES)}"
    name = " ".join(name.split()).casefold()
    start = span.start
    if span.granularity == "years" and span.end.year == span.start.year + 1:
        # a school or tax year ("2025-26") has begun by the autumn, not in January: counted from 1 September,
        # the year before is not left out while it still runs (a tax year from April counts late: until
        # September both are quoted, as without this rule)
        start = dt.date(span.start.year, 9, 1)
    return (name, start) if name else None


def earlier_of_their_series(items: Sequence[T], title_of: Callable[[T], str], today: dt.date) -> list[int]:
    """The positions of items whose series holds a later item among them already begun by `today`: the
    notes of an earlier year than the one of today."""
    of = [series_of(title_of(item)) for item in items]
    latest: dict[str, dt.date] = {}
    for found in of:
        if found is not None and found[1] <= today:
            name, start = found
            latest[name] = max(start, latest.get(name, start))
    return [i for i, found in enumerate(of) if found is not None and found[1] < latest.get(*found)]
