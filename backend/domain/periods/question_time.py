"""The time a question names, as a span of days: the absolute forms of time_intent.py ("in 2024", "autumn
2024") and those read from today ("last March", "this week", "this spring", "over the summer", "the last
couple of weeks", "the past month", "recently", "since March").

A period read from today is a preference like any other (search.ranking.time_factor): a note of it rises,
one that says it is of another time is lowered, an undated one keeps its score. The rolling windows say
what people mean by the words when they ask about their own notes: "the past month" is the thirty days
before today, not the calendar month before this one ("last month" is that); "recently" and "lately" are
the last two months, as far back as a person still calls a journal day recent.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re

from backend.domain.periods import period_words
from backend.domain.periods.month_words import (
    NAMED_MONTHS,
    RELATIVE_YEARS,
    YEAR_WORD,
    month_number,
    names_a_month,
)
from backend.domain.periods.time_intent import (
    _ABSOLUTE,
    _FULL_MONTHS,
    _HOLIDAY_NAMES,
    _MONTHS,
    _SEASON_NAMES,
    _SEASON_START,
    TimeSpan,
    _Finder,
    _holiday_span,
    _matches,
    _month_span,
    _search,
    _season_span,
    named_time,
    read_word,
)

# not a part of another time ("the last week of March") nor someone's ("my last year at school")
_NOT_A_SPAN = r"(?<!my )(?<!her )(?<!his )(?<!our )(?<!their )(?<!your )"
_NOT_A_PART = r"(?!\s+of\b)"
_RELATIVE = re.compile(
    rf"\b{_NOT_A_SPAN}(today|yesterday|(?:this|last|previous)\s+(?:week(?:end)?|month|year))\b{_NOT_A_PART}",
    re.I,
)
# a month without its year needs a word before it: "may" alone is usually the verb
_NAMED_MONTH = re.compile(rf"\b(in|during|last|this|early|late|mid|throughout)\s+({_FULL_MONTHS})\b", re.I)
# "last summer", "this christmas", "over the summer": the latest one before (last) or around (this, over
# the) today
_RELATIVE_PERIOD = re.compile(
    rf"\b(this|last|past|previous|(?:over|during|in|through(?:out)?)\s+the)\s+({_HOLIDAY_NAMES}|{_SEASON_NAMES})\b",
    re.I,
)
_COUNTS = {"a": 1, "one": 1, "two": 2, "couple": 2, "three": 3, "few": 3, "several": 3, "four": 4, "six": 6}
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14, "month": 30, "year": 365}
# "the last couple of weeks", "the past 3 months", "the past month", "the last fortnight"
_ROLLING = re.compile(
    rf"\b{_NOT_A_SPAN}(?:the\s+)?(?:last|past)\s+(?:(\d{{1,3}}|a|one|two|three|four|six|couple|few|several)\s+"
    rf"(?:of\s+)?)?(days?|weeks?|fortnights?|months?|years?)\b{_NOT_A_PART}",
    re.I,
)
_RECENTLY = re.compile(r"\b(recently|lately|of late)\b", re.I)
RECENT_DAYS = 61
# "since March", "since 2024", "since last summer": from the start of that time to today
_SINCE = re.compile(r"\bsince\s+(.{1,40})", re.I)


# "the week before August 3", "won by July 10", "after March 2024": the period bounds the time asked about
_BOUND = re.compile(
    rf"\b(?:before|after|by|until|till|prior\s+to|up\s+to|ahead\s+of|{period_words.BOUND})\s*$", re.I
)
# a plan is written before the time it is for
_PLAN = re.compile(
    rf"\b(?:plan(?:s|ned|ning)?|intend(?:s|ed)?|going\s+to|meant\s+to|hop(?:e|es|ed|ing)\s+to"
    rf"|{period_words.PLAN})\b",
    re.I,
)


def days_telling(query: str, span: TimeSpan) -> TimeSpan | None:
    """The days whose notes can tell what `query` asks of `span`: None when it names the span as a bound of
    the time it asks about, not as that time (what a person did "the week before August 3" is told in notes
    of other days than the 3rd); from any earlier day when it asks about a plan for it; else the span."""
    if _said_before(query, span, _BOUND):
        return None
    if _PLAN.search(query):
        return dataclasses.replace(span, start=dt.date.min)
    return span


def find_time_span(query: str, today: dt.date, *, southern: bool = False) -> TimeSpan | None:
    """The first, most precise time the query names, or None. `today` anchors "this week", "last March";
    `southern`: seasons (and the summer holidays) of the southern hemisphere. A time the question compares
    against is none (`compared_against`)."""
    for find in _FINDERS:
        span = find(query, today, southern)
        if span is not None:
            return None if compared_against(query, span) else span
    return None


# "compare with last year", "compared to 2023", "colder than last winter", "versus 2023": the measure of it
_COMPARED = re.compile(
    r"(?:\bcompar(?:e|es|ed|ing)\s+(?:\w+\s+){0,3}?(?:with|to|against)|\b(?:than|versus|vs\.?))"
    rf"\s+(?:in\s+|the\s+|during\s+)?$|\b{period_words.COMPARED}\s*$",
    re.I,
)


def compared_against(query: str, span: TimeSpan) -> bool:
    """Whether the question names `span` as what it compares against ("how did the year 11 mocks compare with
    last year", "a drought more extreme than in 2005"). A comparison asks of two times, its own (often now)
    and this one, and the notes of both tell it: a preference for this one alone would lift half an answer
    and lower the other half, and a note of this time would look like an answer for being of it (a meeting
    of last November naming the mock timetable, for the mocks compared with last year's). English
    questions."""
    return _said_before(query, span, _COMPARED)


def _said_before(query: str, span: TimeSpan, words: re.Pattern[str]) -> bool:
    """Whether the question's words just before `span` are `words` (each pattern ends at the span)."""
    at = query.find(span.text)
    return at >= 0 and words.search(query[:at]) is not None


def _since(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "since March": from the latest 1 March not after today to today; "since 2024", "since last summer":
    from the start of that time; so "seit März", "depuis mars 2025", "desde 2024" (period_words.SINCE)."""
    match = _search(_SINCE, query)
    if match is None:
        return _since_abroad(query, today, southern)
    rest = match.group(1)
    # "since March" of the latest March; "since March 2024" of that one (the finders below)
    month = re.match(rf"({_FULL_MONTHS})\b(?!,?\s+(?:of\s+)?(?:19|20)\d\d)", rest, re.I)
    number = None if month is None else read_word(_MONTHS, month.group(1))
    if month is not None and number is not None:
        return _since_month(f"since {month.group(1)}", number, today)
    for find in _FINDERS[1:]:
        span = find(rest, today, southern)
        if span is not None and rest.lower().startswith(span.text.lower()) and span.start <= today:
            return TimeSpan(f"since {span.text}", span.start, today, "since")
    return _since_abroad(query, today, southern)


def _since_month(text: str, number: int, today: dt.date) -> TimeSpan:
    start = _month_span("", today.year if number <= today.month else today.year - 1, number).start
    return TimeSpan(text, start, today, "since")


def _since_abroad(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "seit März 2025", "depuis mars", "desde 2024", "с марта 2025 года", as "since": the first of those
    words a time follows. Its words are read from the word on ("depuis Mars 2025": the French word makes
    "Mars" a month), and the start of a range is none ("desde marzo hasta mayo de 2026", "с 2000 по 2005
    год": from one to the other)."""
    for match in _matches(period_words.SINCE, query):
        if _COMPARED.search(query, 0, match.end(1)):  # "по сравнению с 2024 годом": "compared with"
            continue
        rest, scope = match.group(2), query[match.start() : match.end()]
        for find in _FINDERS[1:]:
            span = find(scope, today, southern)
            if span is None or not rest.startswith(span.text) or span.start > today:
                continue
            if span.granularity == "months" or period_words.RANGE_GOES_ON.match(rest, len(span.text)):
                return None
            words = query[match.start() : match.start(2) + len(span.text)]
            return TimeSpan(words, span.start, today, "since")
        month = period_words.month_alone(rest)
        number = None if month is None else month_number(month)
        if month is not None and number is not None:
            return _since_month(query[match.start() : match.start(2) + len(month)], number, today)
    return None


def _rolling(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "the last couple of weeks": the fourteen days up to today; "the past month": thirty."""
    del southern
    match = _search(_ROLLING, query)
    if match is not None:
        count, unit = match.group(1), match.group(2).casefold().rstrip("s")
        said_last = "last" in match.group(0).casefold().split()
        if count is None and said_last and unit != "fortnight":
            return None  # "last week" is the calendar one (_relative); "the last day of term" is no time
        number = 1 if count is None else int(count) if count.isdigit() else read_word(_COUNTS, count) or 0
        days = number * (read_word(_UNIT_DAYS, unit) or 0)
        if 0 < days <= 100 * 365:
            return TimeSpan(match.group(0).strip(), today - dt.timedelta(days=days - 1), today, "days")
    return None


def _recently(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "recently", "lately": the vaguest time a question names, so any other it names comes first
    ("the charity event he organised recently in 2024" is of 2024)."""
    del southern
    match = _search(_RECENTLY, query)
    if match is None:
        return None
    return TimeSpan(match.group(0), today - dt.timedelta(days=RECENT_DAYS - 1), today, "days")


def _relative_period(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "this summer" is the one around today or, when none is, the nearer of the one just over and the one to
    come ("this winter" asked in March is the one that just ended); "last christmas" the latest
    one over before today; "over the summer" the one around today or, when none is, the latest one over."""
    match = _search(_RELATIVE_PERIOD, query)
    if match is None:
        return None
    text, which, name = match.group(0), match.group(1).casefold(), match.group(2).casefold()
    if not named_time(name):
        return None
    season = name in _SEASON_START

    def of(year: int) -> TimeSpan:
        if season:
            return _season_span(text, name, year, southern)
        return _holiday_span(text, name, year, southern)

    around = [span for span in (of(today.year - 1), of(today.year)) if span.start <= today <= span.end]
    if which == "this":
        if around:
            return around[0]
        # between two: the nearer, the one just over ("this winter" asked in March) or the one to come
        over, coming = of(today.year - 1), of(today.year)
        if over.end >= today:  # last year's ends after today only when this year's is the one over
            over, coming = of(today.year), of(today.year + 1)
        return over if (today - over.end) < (coming.start - today) else coming
    if around and which.endswith("the"):
        return around[0]
    year = today.year
    while of(year).end >= today:
        year -= 1
    return of(year)


def _relative(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del southern
    match = _search(_RELATIVE, query)
    if match is None:
        return _relative_year_abroad(query, today)
    text = match.group(1)
    words = text.casefold().split()
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


def _relative_year_abroad(query: str, today: dt.date) -> TimeSpan | None:
    """ "letztes Jahr", "l'année dernière", "去年": "last year"; "dieses Jahr", "cette année", "今年": "this
    year"."""
    if YEAR_WORD.search(query) is None:
        return None
    for pattern, back in RELATIVE_YEARS:
        match = _search(pattern, query)
        if match is not None:
            year = today.year - int(back)
            return TimeSpan(match.group(0), dt.date(year, 1, 1), dt.date(year, 12, 31), "year")
    return None


def _named_month(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "in March" / "last March": the latest March not after this month ("last": before this month); so
    "im März", "en mars" and "letzten März", "en mars dernier" (month_words.NAMED_MONTHS)."""
    del southern
    match = _search(_NAMED_MONTH, query)
    month = None if match is None else read_word(_MONTHS, match.group(2))
    if match is not None and month is not None:
        return _latest_month(match.group(0), month, match.group(1).casefold() == "last", today)
    for pattern, last in NAMED_MONTHS if names_a_month(query) else ():
        match = _search(pattern, query)
        month = None if match is None else month_number(match.group(1))
        if match is not None and month is not None:
            return _latest_month(match.group(0), month, last, today)
    return None


def _latest_month(text: str, month: int, last: bool, today: dt.date) -> TimeSpan:
    latest = month < today.month if last else month <= today.month
    return _month_span(text, today.year if latest else today.year - 1, month)


# "since" first (it holds the time it starts from); the absolute forms before those read from today, a bare
# year next to last, "recently" last; a season or holiday before a window ("the past summer" is the summer)
_FINDERS: tuple[_Finder, ...] = (
    _since,
    *_ABSOLUTE[:-1],
    _relative_period,
    _rolling,
    _relative,
    _named_month,
    _ABSOLUTE[-1],
    _recently,
)
