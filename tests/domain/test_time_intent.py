"""The time a question names, as a span of days (a fixed `today`, so relative forms are checked exactly)."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.domain.time_intent import find_time_span, parse_day

TODAY = dt.date(2026, 4, 15)  # a Wednesday


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
    ],
)
def test_the_span_a_question_names(question: str, text: str, start: str, end: str, granularity: str) -> None:
    span = find_time_span(question, TODAY)
    assert span is not None
    assert (span.text, span.start.isoformat(), span.end.isoformat(), span.granularity) == (
        text,
        start,
        end,
        granularity,
    )


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
