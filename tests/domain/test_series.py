"""Notes of one series ("Budget 2024", "Budget 2025") and a question about the present: asked about today,
last year's copy is not an answer beside this year's."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.domain.periods.question_time import find_time_span
from backend.domain.periods.series import asks_about_the_present, earlier_of_their_series, series_of

TODAY = dt.date(2025, 11, 15)


@pytest.mark.parametrize(
    ("title", "series"),
    [
        ("Chemistry budget 2024-25", ("chemistry budget", dt.date(2024, 9, 1))),  # a school year
        ("Budget 2025", ("budget", dt.date(2025, 1, 1))),
        ("Honey sales 2024", ("honey sales", dt.date(2024, 1, 1))),
        ("2025 Goals", ("goals", dt.date(2025, 1, 1))),
    ],
)
def test_a_title_of_a_name_and_a_year_is_of_a_series(title: str, series: tuple[str, dt.date]) -> None:
    assert series_of(title) == series


@pytest.mark.parametrize(
    "title",
    [
        "2025-03-08",
        "2025-W12",
        "2025-03-27 Chemistry team meeting",
        "Kids activities",
        "Fontainebleau Oct 2024",
    ],
)
def test_a_day_an_event_or_an_undated_title_is_of_none(title: str) -> None:
    assert series_of(title) is None


def test_the_earlier_years_of_a_series_are_those_with_a_later_one_already_begun() -> None:
    titles = ["Chemistry budget 2025-26", "Chemistry budget 2024-25", "Budget 2024", "Kids activities"]
    assert earlier_of_their_series(titles, str, TODAY) == [1]
    # next year's note, made ahead, does not make this year's an earlier one
    assert earlier_of_their_series(["Budget 2025", "Budget 2026"], str, TODAY) == []
    assert earlier_of_their_series(["Budget 2025", "Budget 2026"], str, dt.date(2026, 1, 2)) == [0]


def test_a_school_year_still_running_is_not_an_earlier_one() -> None:
    # in March 2025 the 2024-25 budget is the one being spent; next year's, drafted early, has not begun
    titles = ["Chemistry budget 2025-26", "Chemistry budget 2024-25"]
    assert earlier_of_their_series(titles, str, dt.date(2025, 3, 10)) == []
    assert earlier_of_their_series(titles, str, dt.date(2025, 9, 2)) == [1]


@pytest.mark.parametrize(
    ("question", "present"),
    [
        ("how much is the chemistry budget this year", True),
        ("what time is Rory's football now", True),
        ("what do I currently pay for the mooring", True),
        ("who is in my class this term", True),
        ("how much was the chemistry budget in 2024-25", False),  # names a school year by its number
        ("how much did I spend on the boat in 2025", False),
        ("how much is the chemistry budget", False),
        ("what did I decide last March", False),
    ],
)
def test_a_question_about_the_present_says_so(question: str, present: bool) -> None:
    assert asks_about_the_present(question, find_time_span(question, TODAY), TODAY) is present
