"""A question asking for the last time of something, and the newest dated entry first with older dated ones
apart (they tell of an earlier time); undated entries keep their places after it."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.domain.periods.recency import asks_for_latest, days_of, newest_first

TODAY = dt.date(2025, 11, 15)


@pytest.mark.parametrize(
    "question",
    [
        "last time I went climbing with Lyd",
        "when did mum last come to stay",
        "when did I last see Oz outside school",
        "the most recent chemistry budget",
        "what's the latest on the boat survey",
    ],
)
def test_questions_asking_for_the_latest(question: str) -> None:
    assert asks_for_latest(question)


@pytest.mark.parametrize(
    "question",
    [
        "what did I do last week",
        "when did I go climbing last summer",
        "what did we decide last March",
        "the last day of term",
        "climbing with Lyd",
        "I need it done by Friday at the latest: what's left on the kitchen refit?",  # a deadline
    ],
)
def test_questions_that_do_not(question: str) -> None:
    assert not asks_for_latest(question)


def test_the_newest_dated_entry_first_and_the_older_ones_apart() -> None:
    entries = [
        ("log", ()),
        ("june", ("2025-06-28",)),
        ("october", ("2025-10-30",)),
        ("2024", ("2024-10-29",)),
    ]
    kept, older = newest_first(entries, lambda e: days_of(e[1], TODAY))

    assert [name for name, _ in kept] == ["october", "log"]
    assert [name for name, _ in older] == ["june", "2024"]


def test_nothing_dated_leaves_the_order_as_it_was() -> None:
    entries = ["a", "b", "c"]
    assert newest_first(entries, lambda _: None) == (entries, [])


def test_a_period_still_to_come_does_not_make_an_entry_the_newest() -> None:
    # a note of this year counts up to today; a renewal due in 2027 has not begun
    assert days_of(["2025-01-01/2025-12-31"], TODAY) == ("2025-01-01", "2025-11-15")
    assert days_of(["2027-09-01/2027-09-30"], TODAY) is None
    assert days_of(["2023-10-12", "2027-09-01/2027-09-30"], TODAY) == ("2023-10-12", "2023-10-12")


def test_the_last_time_is_the_day_it_happened_not_a_year_note_running_up_to_today() -> None:
    # "when did I last go climbing with Lyd?": the day of the climb first; this year's goals, of the whole
    # year up to today, stay beside it (not older); last year's climb is older
    entries = [
        ("goals 2025", ("2025-01-01/2025-12-31",)),
        ("climb", ("2025-10-12",)),
        ("climb 2024", ("2024-10-29",)),
    ]
    kept, older = newest_first(entries, lambda e: days_of(e[1], TODAY))

    assert [name for name, _ in kept] == ["climb", "goals 2025"]
    assert [name for name, _ in older] == ["climb 2024"]
