"""The time a question names, as a span of days (a fixed `today`, so relative forms are checked exactly)."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.domain.periods.question_time import days_telling, find_time_span
from backend.domain.periods.time_intent import TimeSpan, name_span, names_its_year, parse_day

TODAY = dt.date(2026, 4, 15)  # a Wednesday


def _named(question: str) -> tuple[str, str, str, str] | None:
    """What the question names: the words, the first and last day, and the granularity."""
    span = find_time_span(question, TODAY)
    if span is None:
        return None
    return span.text, span.start.isoformat(), span.end.isoformat(), span.granularity


def _days(span: TimeSpan | None) -> tuple[str, str] | None:
    """A span's first and last day (None: none found)."""
    return None if span is None else (span.start.isoformat(), span.end.isoformat())


@pytest.mark.parametrize(
    ("question", "text", "start", "end", "granularity"),
    [
        ("what did I do in 2024?", "in 2024", "2024-01-01", "2024-12-31", "year"),
        ("what did I decide last March?", "last March", "2026-03-01", "2026-03-31", "month"),
        ("what did I decide last May?", "last May", "2025-05-01", "2025-05-31", "month"),
        ("what happened this week?", "this week", "2026-04-13", "2026-04-19", "week"),
        ("anything last week?", "last week", "2026-04-06", "2026-04-12", "week"),
        ("flights in May 2026", "May 2026", "2026-05-01", "2026-05-31", "month"),
        ("how was my sleep in March?", "in March", "2026-03-01", "2026-03-31", "month"),
        ("the trip in June", "in June", "2025-06-01", "2025-06-30", "month"),  # the latest June so far
        ("what did I write on 2026-03-21", "2026-03-21", "2026-03-21", "2026-03-21", "day"),
        ("the talk on 14 May 2026", "14 May 2026", "2026-05-14", "2026-05-14", "day"),
        ("before April 10, 2023", "April 10, 2023", "2023-04-10", "2023-04-10", "day"),
        ("yesterday's run", "yesterday", "2026-04-14", "2026-04-14", "day"),
        ("spending last month", "last month", "2026-03-01", "2026-03-31", "month"),
        ("notes from last year", "last year", "2025-01-01", "2025-12-31", "year"),
        ("habit tracker 2026-03", "2026-03", "2026-03-01", "2026-03-31", "month"),
        # periods: two months, seasons, halves and quarters, holidays
        ("what happened in May and June 2024", "May and June 2024", "2024-05-01", "2024-06-30", "months"),
        ("notes from May-June 2024", "May-June 2024", "2024-05-01", "2024-06-30", "months"),
        ("from December to February 2025", "December to February 2025", "2024-12-01", "2025-02-28", "months"),
        ("hives in spring 2024", "spring 2024", "2024-03-01", "2024-05-31", "season"),
        ("climbing in autumn 2024", "autumn 2024", "2024-09-01", "2024-11-30", "season"),
        ("the fall 2023 semester", "the fall 2023", "2023-09-01", "2023-11-30", "season"),
        ("bees over the summer of 2025", "the summer of 2025", "2025-06-01", "2025-08-31", "season"),
        ("how cold was winter 2024", "winter 2024", "2024-12-01", "2025-02-28", "season"),  # into 2025
        (
            "my shoulder in the first half of 2025",
            "the first half of 2025",
            "2025-01-01",
            "2025-06-30",
            "half",
        ),
        ("spending in H2 2024", "H2 2024", "2024-07-01", "2024-12-31", "half"),
        ("sales in Q3 2024", "Q3 2024", "2024-07-01", "2024-09-30", "quarter"),
        ("the 2024-Q1 review", "2024-Q1", "2024-01-01", "2024-03-31", "quarter"),
        (
            "the third quarter of last year",
            "the third quarter of last year",
            "2025-07-01",
            "2025-09-30",
            "quarter",
        ),
        ("what did we do at christmas 2024", "christmas 2024", "2024-12-20", "2025-01-01", "holiday"),
        ("what did we do over easter 2024", "easter 2024", "2024-03-23", "2024-04-07", "holiday"),  # 31 March
        ("easter 2025 plans", "easter 2025", "2025-04-12", "2025-04-27", "holiday"),  # 20 April
        ("the 2025 summer holidays", "2025 summer holidays", "2025-07-01", "2025-08-31", "holiday"),
        ("summer holidays 2025", "summer holidays 2025", "2025-07-01", "2025-08-31", "holiday"),
        ("what did I do last summer", "last summer", "2025-06-01", "2025-08-31", "season"),
        ("this spring", "this spring", "2026-03-01", "2026-05-31", "season"),  # the one around today
        ("last christmas", "last christmas", "2025-12-20", "2026-01-01", "holiday"),
        ("what we did this easter", "this easter", "2026-03-28", "2026-04-12", "holiday"),
        ("the chemistry budget 2024-25", "2024-25", "2024-01-01", "2025-12-31", "years"),
        ("the week of 2025-W12", "2025-W12", "2025-03-17", "2025-03-23", "week"),
        ("what did ABC do in the 1970s", "in the 1970s", "1970-01-01", "1979-12-31", "years"),  # ten years
        ("the play performed in the 1970's", "in the 1970's", "1970-01-01", "1979-12-31", "years"),
        # a year written against Chinese characters
        ("到1991年亚马逊森林消失了多少", "1991", "1991-01-01", "1991-12-31", "year"),
    ],
)
def test_the_span_a_question_names(question: str, text: str, start: str, end: str, granularity: str) -> None:
    assert _named(question) == (text, start, end, granularity)


@pytest.mark.parametrize(
    "question",
    [
        "what did I decide about the database migration?",
        "I may go to the store, what do I need?",  # the verb, not the month
        "MySQL 5.7 to PostgreSQL 16 with 3,214 rows",
        "what were my intentions for this year?",  # what the note is about, not when it was written
        "plans for 2026",
        "the 2026-02-30 entry",  # no such day
    ],
)
def test_questions_that_name_no_time(question: str) -> None:
    assert find_time_span(question, TODAY) is None


def test_the_span_holds_its_days_and_nothing_else() -> None:
    span = find_time_span("in March 2026", TODAY)
    assert span is not None
    assert span.contains("2026-03-01")
    assert span.contains("2026-03-31")
    assert not span.contains("2026-04-01")
    assert not span.contains(None)
    assert not span.contains("not a day")


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("1:56 pm on 8 May, 2023", "2023-05-08"),
        ("May 8th, 2023", "2023-05-08"),
        ("8th of May 2023", "2023-05-08"),
        ("soon", None),
        ("31 February 2023", None),
    ],
)
def test_days_written_out(text: str, day: str | None) -> None:
    found = parse_day(text)
    assert (found.isoformat() if found else None) == day


# --- periods: the southern seasons, windows up to today, what file names name ------------------------------


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("autumn 2024", "2024-03-01", "2024-05-31"),
        ("summer 2025", "2025-12-01", "2026-02-28"),
        ("the 2025 summer holidays", "2025-12-01", "2026-01-31"),
    ],
)
def test_the_southern_hemisphere_has_its_own_seasons(question: str, start: str, end: str) -> None:
    assert _days(find_time_span(question, TODAY, southern=True)) == (start, end)


@pytest.mark.parametrize(
    ("question", "asked", "text", "start", "end"),
    [
        # a window up to today (TODAY is Wednesday 15 April 2026), not calendar weeks or months
        (
            "what have I been up to over the last couple of weeks?",
            TODAY,
            "the last couple of weeks",
            "2026-04-02",
            "2026-04-15",
        ),
        ("what did I spend in the past month", TODAY, "the past month", "2026-03-17", "2026-04-15"),
        ("runs in the past 10 days", TODAY, "the past 10 days", "2026-04-06", "2026-04-15"),
        ("the last few months at work", TODAY, "the last few months", "2026-01-16", "2026-04-15"),
        ("the last fortnight", TODAY, "the last fortnight", "2026-04-02", "2026-04-15"),
        ("what have I been reading recently?", TODAY, "recently", "2026-02-14", "2026-04-15"),
        ("how has my sleep been lately", TODAY, "lately", "2026-02-14", "2026-04-15"),
        # the vaguest time gives way to any other the question names
        ("the charity event he organised recently in 2024", TODAY, "in 2024", "2024-01-01", "2024-12-31"),
        # from the start of a time to today
        ("what changed since March", TODAY, "since March", "2026-03-01", "2026-04-15"),
        ("every run since June", TODAY, "since June", "2025-06-01", "2026-04-15"),  # the latest June so far
        ("what I learned since 2024", TODAY, "since 2024", "2024-01-01", "2026-04-15"),
        ("since last summer", TODAY, "since last summer", "2025-06-01", "2026-04-15"),
        # a season without its year: the one around today, else the latest one over
        ("the allotment over the summer", TODAY, "over the summer", "2025-06-01", "2025-08-31"),
        ("what we did during the winter", TODAY, "during the winter", "2025-12-01", "2026-02-28"),
        ("in the spring", TODAY, "in the spring", "2026-03-01", "2026-05-31"),
        # between two, "this" is the nearer: the one just over, or the one to come
        ("how cold was it this winter", dt.date(2026, 3, 5), "this winter", "2025-12-01", "2026-02-28"),
        ("what did we do this Christmas", dt.date(2026, 1, 2), "this Christmas", "2025-12-20", "2026-01-01"),
        ("where are we going this summer", dt.date(2026, 3, 5), "this summer", "2026-06-01", "2026-08-31"),
        # a month with its year is that one, whenever it is asked
        (
            "what have I done since March 2024",
            dt.date(2025, 11, 15),
            "since March 2024",
            "2024-03-01",
            "2025-11-15",
        ),
        ("what have I done since March", dt.date(2025, 11, 15), "since March", "2025-03-01", "2025-11-15"),
    ],
)
def test_a_period_read_from_the_day_it_is_asked(
    question: str, asked: dt.date, text: str, start: str, end: str
) -> None:
    span = find_time_span(question, asked)
    assert span is not None
    assert (span.text, span.start.isoformat(), span.end.isoformat()) == (text, start, end)


@pytest.mark.parametrize(
    ("question", "dated"),
    [
        ("what did we decide in April 2024", True),
        ("books I finished in 2024", True),
        ("the kickoff on 2026-03-12", True),
        ("spring 2025", True),
        ("what have I been up to recently", False),
        ("the camping trip last year", False),
        ("when did she go camping in June", False),
        ("the chemistry budget this year", False),
    ],
)
def test_a_period_that_writes_its_year_means_the_same_whenever_it_is_read(question: str, dated: bool) -> None:
    # beside a vault written in another era, only such a period can tell the vaults apart (vault_merge.py)
    span = find_time_span(question, TODAY)
    assert span is not None
    assert names_its_year(span) is dated


@pytest.mark.parametrize(
    "question",
    [
        "the last day of term",
        "my last run",
        "the past tense of go",
        # a part of another time, or someone's: not the window ending today
        "the last week of March",
        "the last two weeks of August",
        "the last month of pregnancy",
        "my last year at school",
        "her last week in Lisbon",
    ],
)
def test_a_last_or_past_that_is_no_window(question: str) -> None:
    assert find_time_span(question, TODAY) is None


def test_last_week_and_last_month_stay_the_calendar_ones() -> None:
    assert _named("anything from the last week?") == ("last week", "2026-04-06", "2026-04-12", "week")
    assert _named("in the last month") == ("last month", "2026-03-01", "2026-03-31", "month")


@pytest.mark.parametrize("question", ["flight BA2025 to Lisbon", "I spent £2025 on it", "a 1920x1080 screen"])
def test_a_number_glued_to_a_code_a_sum_or_a_size_is_no_year(question: str) -> None:
    assert find_time_span(question, TODAY) is None


def test_this_year_and_last_month_count_from_the_day_given() -> None:
    pinned = dt.date(2025, 11, 15)
    this_year = find_time_span("the chemistry budget this year", pinned)
    last_month = find_time_span("spending last month", pinned)
    assert this_year is not None
    assert last_month is not None
    assert (this_year.start, this_year.end) == (dt.date(2025, 1, 1), dt.date(2025, 12, 31))
    assert (last_month.start, last_month.end) == (dt.date(2025, 10, 1), dt.date(2025, 10, 31))


@pytest.mark.parametrize(
    "question",
    ["the fourth half of 2024", "Q5 2024", "2010-2012", "version 2024-25.1", "2025-W54"],
)
def test_what_is_no_period(question: str) -> None:
    span = find_time_span(question, TODAY)
    assert span is None or span.granularity == "year"  # at most the year it names


@pytest.mark.parametrize(
    ("name", "start", "end"),
    [
        ("2025-03-14", "2025-03-14", "2025-03-14"),
        ("2025-W12", "2025-03-17", "2025-03-23"),
        ("2025-03", "2025-03-01", "2025-03-31"),
        ("Fontainebleau Oct 2024", "2024-10-01", "2024-10-31"),
        ("Pembrokeshire Easter 2024", "2024-03-23", "2024-04-07"),
        ("Hive records 2024", "2024-01-01", "2024-12-31"),
        ("Timetable 2025-26", "2025-01-01", "2026-12-31"),
    ],
)
def test_the_period_a_file_name_names(name: str, start: str, end: str) -> None:
    assert _days(name_span(name)) == (start, end)


@pytest.mark.parametrize("name", ["Goals for this year", "Q1 last year", "Shopping list", "Plans for 2026"])
def test_a_file_name_without_a_period_of_its_own(name: str) -> None:
    assert name_span(name) is None


@pytest.mark.parametrize(
    ("periods", "share"),
    [
        (["2024-04-02"], 1.0),  # a day inside
        (["2024-06-01"], 0.0),  # a day outside
        (["2024-05-20/2024-06-08"], 12 / 20),  # a trip half in
        (["2024-01-01/2024-12-31"], 92 / 366),  # a note of the whole year: its spring is a quarter of it
        (["2023-05-01", "2024-03-01/2024-03-31"], 1.0),  # the best of a note's periods
        ([], 0.0),
        (["not a day"], 0.0),
    ],
)
def test_how_much_of_a_note_lies_in_the_span(periods: list[str], share: float) -> None:
    span = find_time_span("spring 2024", TODAY)
    assert span is not None
    assert span.share_of(periods) == pytest.approx(share)


@pytest.mark.parametrize(
    ("periods", "outside"),
    [
        (["2024-06-01"], True),  # dated, after it
        (["2023-12-31", "2024-06-01/2024-07-01"], True),  # every period of it elsewhere
        (["2024-05-31/2024-06-08"], False),  # a trip begun in it
        (["2024-01-01/2024-12-31"], False),  # a note of the whole year
        ([], False),  # undated: of any time
        (["not a day"], False),
    ],
)
def test_a_note_wholly_of_another_time(periods: list[str], outside: bool) -> None:
    span = find_time_span("spring 2024", TODAY)
    assert span is not None
    assert span.outside(periods) is outside


def test_the_days_that_tell_of_a_period_asked() -> None:
    def told(question: str) -> tuple[str, str] | None:
        span = find_time_span(question, TODAY)
        assert span is not None
        days = days_telling(question, span)
        return None if days is None else (days.start.isoformat(), days.end.isoformat())

    assert told("shoulder recovery in the first half of 2024") == ("2024-01-01", "2024-06-30")
    # a bound of the time asked, not that time: the days before or after it tell
    assert told("what did John do the week before August 3, 2023 with his kids") is None
    assert told("how many tournaments had Nate won by July 10, 2022") is None
    assert told("what did I do after March 2024") is None
    # a plan is written before the time it is for
    assert told("what did I plan to do in the summer of 2024") == ("0001-01-01", "2024-08-31")
    assert told("where was Tim going to be in September 2023") == ("0001-01-01", "2023-09-30")


@pytest.mark.parametrize(
    "question",
    [
        "how did the year 11 mocks compare with last year",
        "how does the harvest compare to 2024?",
        "was it colder than last winter",
        "a drought more extreme than in 2005",
        "compared with 2023, what changed",
        "sales versus last March",
    ],
)
def test_a_period_compared_against_is_not_the_period_asked(question: str) -> None:
    assert find_time_span(question, TODAY) is None


@pytest.mark.parametrize(
    ("question", "text"),
    [
        (
            "what changed in 2024 compared with 2023",
            "in 2024",
        ),  # its own period first, the other measured against
        ("how does my spending this year compare to last year", "this year"),
        ("how did the year 11 mocks go last year", "last year"),
        ("did I spend more than £50 in March", "in March"),  # "than" a sum, not a time
    ],
)
def test_a_question_naming_its_own_period_keeps_it(question: str, text: str) -> None:
    span = find_time_span(question, TODAY)
    assert span is not None
    assert span.text == text
