"""The times written out in full ("2024", "May and June 2024", "autumn 2024", "Q3 2024", "christmas 2024",
"2025-W12") as spans of days, and how much of a note's own period lies in one: what a note's name, its
properties and its text say, and the absolute forms a question uses (question_time.py adds those read from
today: "last March", "this week", "the last couple of weeks").

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
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from backend.domain.periods import month_words, period_words
from backend.domain.periods.period_words import MONTH_PAIR, pair_of_months

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
_ISO_WEEK = re.compile(r"\b((?:19|20)\d\d)-?W(\d{2})\b", re.I)
_MONTH_PAIR = re.compile(
    rf"\b({_ANY_MONTH})\.?\s*(?:and|to|through|until|till|&|-|\u2013|\u2014)\s*({_ANY_MONTH})\.?,?\s+"
    rf"(?:of\s+)?{_YEAR}\b",
    re.I,
)
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}){_ORD}(?:\s+of)?\s+({_ANY_MONTH})\.?,?\s+{_YEAR}\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b({_ANY_MONTH})\.?\s+(\d{{1,2}}){_ORD},?\s+{_YEAR}\b", re.I)
_MONTH_YEAR = re.compile(rf"\b({_ANY_MONTH})\.?,?\s+(?:of\s+)?{_YEAR}\b", re.I)
_ISO_MONTH = re.compile(r"\b((?:19|20)\d\d)-(0[1-9]|1[0-2])\b(?!-\d)")
# not a decade ("the 1990s"), a code or a sum ("flight BA2025", "£2025"), a size ("1920x1080"); a year
# written against Chinese or Japanese characters ("到1991年") is one
_BARE_YEAR = re.compile(
    rf"(?:\b(?:in|during|of|throughout)\s+)?(?<![\d.,/$£€¥A-Za-z-]){_YEAR}(?![\d.,/-]\d)"
    r"(?!['’]?s\b)(?![x×]\d)",
    re.I,
)
# a school or financial year: "2025-26", "2024/2025" (of both years: where it turns differs by country)
_YEAR_PAIR = re.compile(r"(?<![\d.,/-])((?:19|20)\d\d)\s*[-/\u2013]\s*(\d\d(?:\d\d)?)(?![\d.,/-]?\d)")
_SEASON_NAMES = "spring|summer|autumn|fall|winter"
_SEASON_YEAR = re.compile(
    rf"\b(?:the\s+)?({_SEASON_NAMES})\s+(?:of\s+)?{_YEAR}\b|\b{_YEAR}\s+({_SEASON_NAMES})\b"
    r"(?!\s+(?:holiday|holidays|vacation|break|term))",
    re.I,
)
_HOLIDAY_NAMES = r"christmas|xmas|easter|summer\s+(?:holidays?|vacation|break)"
_HOLIDAY_YEAR = re.compile(
    rf"\b({_HOLIDAY_NAMES})\s+(?:of\s+)?{_YEAR}\b|\b{_YEAR}\s+({_HOLIDAY_NAMES})\b", re.I
)
_ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_YEAR_OR_NOW = r"((?:19|20)\d\d|this\s+year|last\s+year)"
_PART_OF_YEAR = re.compile(
    rf"\b(?:the\s+)?({'|'.join(_ORDINALS)})\s+(half|quarter)\s+of\s+(?:the\s+year\s+)?{_YEAR_OR_NOW}\b"
    rf"|\b([HQ])([1-4])\s*,?\s*{_YEAR_OR_NOW}\b|\b((?:19|20)\d\d)[\s-]?([HQ])([1-4])\b",
    re.I,
)
# "goals for this year", "plans for 2026": the time is what the note is about, not when it was written
_PURPOSE = re.compile(r"\bfor\s+(?:the\s+)?$", re.I)


@dataclass(frozen=True, slots=True)
class TimeSpan:
    """Days `start` to `end` (inclusive) that a question named, with the words that named them."""

    text: str
    start: dt.date
    end: dt.date
    granularity: str  # day, week, month, months, season, holiday, quarter, half, year or years

    def contains(self, day: str | None) -> bool:
        """True for an ISO day (a note's date) inside the span."""
        if not day:
            return False
        try:
            value = dt.date.fromisoformat(day[:10])
        except ValueError:
            return False
        return self.start <= value <= self.end

    def share_of(self, periods: Iterable[str]) -> float:
        """How much of a note lies in the span, 0 to 1: for each of the note's periods (an ISO day, or
        "start/end" days inclusive) the part of its days inside the span, the largest. A note of a day in
        the span is wholly of it; a note of 2024 is a quarter of "spring 2024"."""
        best = 0.0
        for period in periods:
            bounds = _period_bounds(period)
            if bounds is None:
                continue
            start, end = bounds
            inside = (min(end, self.end) - max(start, self.start)).days + 1
            if inside > 0:
                best = max(best, inside / ((end - start).days + 1))
        return best

    def outside(self, periods: Iterable[str]) -> bool:
        """Whether a note of `periods` is dated and wholly of another time: none of its days in the span
        (undated: False, it may be of any time)."""
        dated = [period for period in periods if _period_bounds(period) is not None]
        return bool(dated) and self.share_of(dated) == 0.0


def names_its_year(span: TimeSpan) -> bool:
    """Whether the words that named `span` write its year ("in 2024", "May 2025", "2024-03-12"): a period
    that means the same whenever it is read, unlike "recently", "last summer" or "in June", which today
    resolves."""
    return _YEAR_WRITTEN.search(span.text) is not None


_YEAR_WRITTEN = re.compile(r"(?<!\d)(?:1[89]|2\d)\d\d(?!\d)")


def _period_bounds(period: str) -> tuple[dt.date, dt.date] | None:
    first, _, last = period.partition("/")
    try:
        start = dt.date.fromisoformat(first[:10])
        end = dt.date.fromisoformat(last[:10]) if last else start
    except ValueError:
        return None
    return (start, end) if start <= end else (end, start)


def _search(pattern: re.Pattern[str], query: str) -> re.Match[str] | None:
    """The first match not introduced by "for" (a purpose, not a time: "intentions for this year")."""
    return next(_matches(pattern, query), None)


def _matches(pattern: re.Pattern[str], query: str) -> Iterator[re.Match[str]]:
    """The matches not introduced by "for" ("für", "pour": period_words.for_a_purpose), in order."""
    for match in pattern.finditer(query):
        if not (_PURPOSE.search(query, 0, match.start()) or period_words.for_a_purpose(query, match.start())):
            yield match


# a Zettelkasten ID opening a name: the day and time the note was written ("20201009143049-nic")
_ZETTEL_ID = re.compile(r"^((?:19|20)\d\d)(\d\d)(\d\d)(?:\d{4}|\d{6})(?!\d)")


def name_span(name: str, *, southern: bool = False) -> TimeSpan | None:
    """The period a note's file name names ("2025-03-14", "2025-W12", "2025-03", "Trip Oct 2024",
    "Hive records 2024", the day of a Zettelkasten ID "20201009143049-nic"), or None: only the forms that
    need no today."""
    zettel = _ZETTEL_ID.match(name)
    if zettel is not None:
        try:
            day = dt.date(int(zettel.group(1)), int(zettel.group(2)), int(zettel.group(3)))
        except ValueError:  # "20211709141709": no 17th month
            day = None
        if day is not None:
            return TimeSpan(zettel.group(0), day, day, "day")
    for find in _ABSOLUTE:
        span = find(name, dt.date.min, southern)  # no today: "this year" in a name is no period
        if span is not None:
            return span
    return None


def parse_day(text: str) -> dt.date | None:
    """A day written out in `text` ("1:56 pm on 8 May, 2023", "May 8th, 2023", "2023-05-08"), or None."""
    span = _exact_day(text, dt.date.today(), False)
    return span.start if span is not None else None


# the ways a day is written, with the order of their groups: ISO, "12 March 2026", "March 12, 2026", then
# the other languages' (month_words.py): "12. März 2026", "12.03.2026", "2026年3月12日"
DAY_FORMS = (
    (_ISO_DAY, "ymd"),
    (_DAY_MONTH_YEAR, "dmy"),
    (_MONTH_DAY_YEAR, "mdy"),
    (month_words.WRITTEN_DAY, "dmy"),
    (month_words.DOTTED_DAY, "dmy"),
    (month_words.CJK_DAY, "ymd"),
)
# the ways a month of a year is written: "March 2026", "2026-03", "März 2026", "2026年3月"
MONTH_FORMS = (
    (_MONTH_YEAR, "my"),
    (_ISO_MONTH, "ym"),
    (month_words.WRITTEN_MONTH, "wy"),  # a word that may be a month (month_words.month_before_year)
    (month_words.CJK_MONTH, "ym"),
)


def read_word(table: dict[str, int], word: str) -> int | None:
    """What `table` says of a word a case-blind pattern matched, or None: casefolded, as the pattern matched
    it ("Auguſt 1905": the long s is an s), and None for a spelling it lacks, never an exception (re.I also
    takes the dotless "ı" for "i", which no casing turns into one)."""
    return table.get(word.casefold())


def month_of(word: str) -> int | None:
    """The month a number, an English name or another language's (month_words) is, or None."""
    if word.isdigit():
        return int(word)
    return read_word(_MONTHS, word) or month_words.month_number(word)


def day_written(match: re.Match[str], order: str) -> TimeSpan | None:
    """The day a match of one of DAY_FORMS writes, or None for one that does not exist (2026-02-30)."""
    parts = dict(zip(order, match.groups(), strict=True))
    month = month_of(parts["m"])
    try:
        day = dt.date(int(parts["y"]), month or 0, int(parts["d"]))
    except ValueError:  # no such day, or no month
        return None
    return TimeSpan(match.group(0), day, day, "day")


def month_written(match: re.Match[str], order: str) -> TimeSpan | None:
    """The month a match of one of MONTH_FORMS writes, or None for one there is not ("2026年13月", "Leute
    2026")."""
    parts = dict(zip(order, match.groups(), strict=True))
    month = month_words.month_before_year(match) if "w" in parts else month_of(parts["m"])
    if month is None or not 1 <= month <= 12:
        return None
    return _month_span(match.group(0), int(parts["y"]), month)


def _exact_day(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today, southern
    for pattern, order in DAY_FORMS:
        match = _search(pattern, query)
        span = day_written(match, order) if match is not None else None
        if span is not None:
            return span
    return None


def _iso_week(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today, southern
    match = _search(_ISO_WEEK, query)
    if match is None:
        return None
    try:
        monday = dt.date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:  # week 00, or 53 of a year with 52
        return None
    return TimeSpan(match.group(0), monday, monday + dt.timedelta(days=6), "week")


def _month_pair(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "May and June 2024", "May-June 2024"; "December to February 2025" starts the year before; so "März bis
    Mai 2026", "de mars à mai 2026" (MONTH_PAIR: not tried on a question writing no year, as most)."""
    del today, southern
    match = _search(_MONTH_PAIR, query)
    if match is not None:
        paired = match.group(0), month_of(match.group(1)), month_of(match.group(2)), int(match.group(3))
    elif not _YEAR_WRITTEN.search(query) or not (paired := pair_of_months(_matches(MONTH_PAIR, query))):
        return None
    text, first, last, year = paired
    if first is None or last is None:
        return None
    if first == last:
        return _month_span(text, year, first)
    start = _month_span("", year - 1 if first > last else year, first).start
    return TimeSpan(text, start, _month_span("", year, last).end, "months")


def _month_of_year(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today, southern
    for pattern, order in MONTH_FORMS:
        for match in _matches(pattern, query):  # "war 2025 und im März 2026": not its first word and year
            span = month_written(match, order)
            if span is not None:
                return span
    return None


def _holiday(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today
    return _named_of_year(query, _HOLIDAY_YEAR, _holiday_span, southern)


def _named_of_year(
    query: str, pattern: re.Pattern[str], span_of: Callable[[str, str, int, bool], TimeSpan], southern: bool
) -> TimeSpan | None:
    """A season or holiday with its year, written either way round ("autumn 2024", "2024 autumn"): the
    pattern's groups are name and year, or year and name."""
    match = _search(pattern, query)
    if match is None:
        return None
    name, year = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
    return span_of(match.group(0), name, int(year), southern) if named_time(name) else None


def named_time(name: str) -> bool:
    """Whether a season or holiday a case-blind pattern matched is one ("ſpring" is; "wınter" is none)."""
    return name.casefold().split()[0] in (*_SEASON_START, "christmas", "xmas", "easter")


def _holiday_span(text: str, name: str, year: int, southern: bool) -> TimeSpan:
    """The holidays a person names, as the days people mean by them: Christmas, 20 December to 1 January;
    Easter, the two weeks of school holidays around Easter Sunday; the summer holidays, July and August
    (December and January in the southern hemisphere)."""
    name = name.casefold()
    if name in ("christmas", "xmas"):
        return TimeSpan(text, dt.date(year, 12, 20), dt.date(year + 1, 1, 1), "holiday")
    if name == "easter":
        sunday = easter_sunday(year)
        return TimeSpan(text, sunday - dt.timedelta(days=8), sunday + dt.timedelta(days=7), "holiday")
    if southern:
        return TimeSpan(text, dt.date(year, 12, 1), dt.date(year + 1, 1, 31), "holiday")
    return TimeSpan(text, dt.date(year, 7, 1), dt.date(year, 8, 31), "holiday")


def easter_sunday(year: int) -> dt.date:
    """Western (Gregorian) Easter Sunday: the anonymous Gregorian algorithm (Meeus/Jones/Butcher)."""
    a, b, c = year % 19, year // 100, year % 100
    d, e = divmod(b, 4)
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    l = (32 + 2 * e + 2 * i - h - k) % 7  # noqa: E741 (the algorithm's own name)
    m = (a + 11 * h + 22 * l) // 451
    month, day = divmod(h + l - 7 * m + 114, 31)
    return dt.date(year, month, day + 1)


def _season(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today
    return _named_of_year(query, _SEASON_YEAR, _season_span, southern)


# meteorological seasons: the first month of each in the northern hemisphere; the southern's is six on
_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season_span(text: str, name: str, year: int, southern: bool) -> TimeSpan:
    """Three whole months; a winter (a southern summer) runs into the next year: "winter 2024" is December
    2024 to February 2025."""
    first = _SEASON_START[name.casefold()]
    if southern:
        first = (first + 6 - 1) % 12 + 1
    start = dt.date(year, first, 1)
    end_year, end_month = (year + 1, first - 10) if first > 10 else (year, first + 2)
    return TimeSpan(text, start, _month_span("", end_year, end_month).end, "season")


def _part_of_year(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    """ "the first half of 2025", "H1 2025", "Q3 2024", "2024-Q3", "the third quarter of last year"."""
    del southern
    match = _search(_PART_OF_YEAR, query)
    if match is None:
        return None
    g = match.groups()
    if g[0]:
        number, kind, year = read_word(_ORDINALS, g[0]) or 0, g[1].casefold(), _year_of(g[2], today)
    elif g[3]:
        number, kind, year = int(g[4]), "half" if g[3].upper() == "H" else "quarter", _year_of(g[5], today)
    else:
        number, kind, year = int(g[8]), "half" if g[7].upper() == "H" else "quarter", int(g[6])
    months = 6 if kind == "half" else 3
    if year is None or not 0 < number * months <= 12:  # "third half", "H3"; no ordinal
        return None
    first = (number - 1) * months + 1
    start = dt.date(year, first, 1)
    return TimeSpan(match.group(0), start, _month_span("", year, first + months - 1).end, kind)


def _year_of(text: str, today: dt.date) -> int | None:
    """A year written out, or "this year" / "last year" from `today` (None without one: a note's name)."""
    words = text.casefold().split()
    if words[0].isdigit():
        return int(words[0])
    if today == dt.date.min:
        return None
    return today.year - (words[0] == "last")


def _year_pair(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today, southern
    for match in _matches(_YEAR_PAIR, query):
        first, second = int(match.group(1)), match.group(2)
        if int(second) in ((first + 1) % 100, first + 1):
            return TimeSpan(match.group(0), dt.date(first, 1, 1), dt.date(first + 1, 12, 31), "years")
    return None


def _year(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today, southern
    match = _search(_BARE_YEAR, query)
    if match is None:
        return None
    year = int(match.group(1))
    return TimeSpan(match.group(0), dt.date(year, 1, 1), dt.date(year, 12, 31), "year")


# "the 1990s", "the 1970's": the ten years
_DECADE = re.compile(r"\b(?:(?:in|during|of|throughout)\s+)?(?:the\s+)?((?:19|20)\d0)['’]?s\b", re.I)


def _decade(query: str, today: dt.date, southern: bool) -> TimeSpan | None:
    del today, southern
    match = _search(_DECADE, query)
    if match is None:
        return None
    year = int(match.group(1))
    return TimeSpan(match.group(0), dt.date(year, 1, 1), dt.date(year + 9, 12, 31), "years")


def _month_span(text: str, year: int, month: int) -> TimeSpan:
    last = calendar.monthrange(year, month)[1]
    return TimeSpan(text, dt.date(year, month, 1), dt.date(year, month, last), "month")


_Finder = Callable[[str, dt.date, bool], TimeSpan | None]
# most precise first; a holiday before a season ("the 2025 summer holidays" is not the summer), both before
# the bare year they hold
_ABSOLUTE: tuple[_Finder, ...] = (
    _exact_day,
    _iso_week,
    _month_pair,
    _month_of_year,
    _holiday,
    _season,
    _part_of_year,
    _year_pair,
    _decade,
    _year,  # last: question_time reads the periods relative to today before a bare year
)
