"""The time a question names ("in 2024", "last March", "this week", "in May 2026") as a span of days.

Hand-written on purpose: the forms a person uses to ask about their notes are few, and a search pays for
this on every query. dateparser 1.5 (measured on this machine) costs 0.6 s to import, 0.8 s for its first
search and 2-14 ms per question afterwards (a hybrid search takes ~14 ms in all), reads the modal "may" as
the month, and returns instants, not spans: the span (day, week, month, year) would have to be read back
from the matched words anyway. These patterns run in microseconds and say exactly what they understood.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_FULL_MONTHS = "|".join(calendar.month_name[i].lower() for i in range(1, 13))
_ANY_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_ORD = r"(?:st|nd|rd|th)?"
_YEAR = r"((?:19|20)\d\d)"

_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+({_ANY_MONTH})\.?,?\s+{_YEAR}\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_ANY_MONTH})\.?\s+(\d{{1,2}}){_ORD},?\s+{_YEAR}\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_ANY_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)
_ISO_MONTH = re.compile(r"\b((?:19|20)\d\d)-(0[1-9]|1[0-2])\b(?!-\d)")
_RELATIVE = re.compile(
    r"\b(today|yesterday|(?:this|last|past|previous)\s+(?:week(?:end)?|month|year))\b", re.I
)
# a month without its year needs a word before it: "may" alone is usually the verb
_NAMED_MONTH = re.compile(rf"\b(in|during|last|this|early|late|mid|throughout)\s+({_FULL_MONTHS})\b", re.I)
_BARE_YEAR = re.compile(rf"(?:\b(?:in|during|of|throughout)\s+)?(?<![\d.,/-]){_YEAR}(?![\d.,/-]\d)", re.I)
# "goals for this year", "plans for 2026": the time is what the note is about, not when it was written
_PURPOSE = re.compile(r"\bfor\s+(?:the\s+)?$", re.I)


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """Days `start` to `end` (inclusive) that a question named, with the words that named them."""

    text: str
    start: dt.date
    end: dt.date
    granularity: str  # day, week, month or year

    def contains(self, day: str | None) -> bool:
        """True for an ISO day (a note's date) inside the span."""
        if not day:
            return False
        try:
            value = dt.date.fromisoformat(day[:10])
        except ValueError:
            return False
        return self.start <= value <= self.end


def _search(pattern: re.Pattern[str], query: str) -> re.Match[str] | None:
    """The first match not introduced by "for" (a purpose, not a time: "intentions for this year")."""
    for match in pattern.finditer(query):
        if not _PURPOSE.search(query, 0, match.start()):
            return match
    return None


def find_time_span(query: str, today: dt.date) -> TimeSpan | None:
    """The first, most precise time the query names, or None. `today` anchors "this week", "last March"."""
    for find in (_exact_day, _month_of_year, _relative, _named_month, _year):
        span = find(query, today)
        if span is not None:
            return span
    return None


def parse_day(text: str) -> dt.date | None:
    """A day written out in `text` ("1:56 pm on 8 May, 2023", "May 8th, 2023", "2023-05-08"), or None."""
    span = _exact_day(text, dt.date.today())
    return span.start if span is not None else None


def _exact_day(query: str, today: dt.date) -> TimeSpan | None:
    del today
    for pattern, order in ((_ISO_DAY, "ymd"), (_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        match = _search(pattern, query)
        if match is None:
            continue
        parts = dict(zip(order, match.groups(), strict=True))
        month = int(parts["m"]) if parts["m"].isdigit() else _MONTHS[parts["m"].lower()]
        try:
            day = dt.date(int(parts["y"]), month, int(parts["d"]))
        except ValueError:
            continue
        return TimeSpan(match.group(0), day, day, "day")
    return None


def _month_of_year(query: str, today: dt.date) -> TimeSpan | None:
    del today
    match = _search(_MONTH_YEAR, query)
    if match is not None:
        return _month_span(match.group(0), int(match.group(2)), _MONTHS[match.group(1).lower()])
    match = _search(_ISO_MONTH, query)
    if match is not None:
        return _month_span(match.group(0), int(match.group(1)), int(match.group(2)))
    return None


def _relative(query: str, today: dt.date) -> TimeSpan | None:
    match = _search(_RELATIVE, query)
    if match is None:
        return None
    text = match.group(1)
    words = text.lower().split()
    if words == ["today"]:
        return TimeSpan(text, today, today, "day")
    if words == ["yesterday"]:
        day = today - dt.timedelta(days=1)
        return TimeSpan(text, day, day, "day")
    back = words[0] != "this"
    unit = words[1]
    if unit in ("week", "weekend"):
        monday = today - dt.timedelta(days=today.weekday()) - dt.timedelta(weeks=int(back))
        if unit == "weekend":
            saturday = monday + dt.timedelta(days=5)
            return TimeSpan(text, saturday, saturday + dt.timedelta(days=1), "week")
        return TimeSpan(text, monday, monday + dt.timedelta(days=6), "week")
    if unit == "month":
        year, month = (today.year, today.month - 1) if back else (today.year, today.month)
        if month == 0:
            year, month = year - 1, 12
        return _month_span(text, year, month)
    year = today.year - int(back)
    return TimeSpan(text, dt.date(year, 1, 1), dt.date(year, 12, 31), "year")


def _named_month(query: str, today: dt.date) -> TimeSpan | None:
    """ "in March" / "last March": the latest March not after this month ("last": before this month)."""
    match = _search(_NAMED_MONTH, query)
    if match is None:
        return None
    month = _MONTHS[match.group(2).lower()]
    latest = month < today.month if match.group(1).lower() == "last" else month <= today.month
    return _month_span(match.group(0), today.year if latest else today.year - 1, month)


def _year(query: str, today: dt.date) -> TimeSpan | None:
    del today
    match = _search(_BARE_YEAR, query)
    if match is None:
        return None
    year = int(match.group(1))
    return TimeSpan(match.group(0), dt.date(year, 1, 1), dt.date(year, 12, 31), "year")


def _month_span(text: str, year: int, month: int) -> TimeSpan:
    last = calendar.monthrange(year, month)[1]
    return TimeSpan(text, dt.date(year, month, 1), dt.date(year, month, last), "month")
