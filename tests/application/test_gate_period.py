"""The recall gate's period rule on entries as a search presents them: an entry dated wholly at another
time than the period asked stays out only beside an entry of the period at least as likely to answer."""

from __future__ import annotations

import datetime as dt

from backend.application.recall.gate import OTHER_TIME, Gate
from backend.application.search.presenting import ResultView
from backend.domain.periods.question_time import find_time_span
from tests.application.result_views import result_view

TODAY = dt.date(2025, 11, 15)


def _view(path: str, confidence: float, *periods: str) -> ResultView:
    return result_view(path, "Shoulder recovery.", confidence, periods=periods)


def _picked(question: str, views: list[ResultView]) -> tuple[list[str], dict[str, str]]:
    left_out: dict[str, str] = {}
    kept = Gate(by_odds=False, span=find_time_span(question, TODAY)).picked(views, left_out)
    return [v.note_path for v in kept], left_out


def test_beside_a_surer_entry_of_the_period_one_of_another_time_stays_out() -> None:
    views = [
        _view("Physio 2025-04-08.md", 0.91, "2025-04-08"),
        _view("Physio 2024-11-19.md", 0.67, "2024-11-19"),
        _view("Shoulder exercises.md", 0.6),  # undated: of any time
        _view("Budget 2024-25.md", 0.5, "2024-01-01/2025-12-31"),  # in part of it
    ]
    kept, left_out = _picked("shoulder recovery in the first half of 2025", views)

    assert kept == ["Physio 2025-04-08.md", "Shoulder exercises.md", "Budget 2024-25.md"]
    assert left_out == {"Physio 2024-11-19.md": OTHER_TIME}


def test_an_entry_of_another_time_surer_than_any_of_the_period_stays() -> None:
    views = [_view("Session 01.md", 0.77, "2023-05-08"), _view("Session 23.md", 0.41, "2023-12-02")]

    kept, left_out = _picked("what class did Maria start in December 2023", views)

    assert kept == ["Session 01.md", "Session 23.md"]
    assert not left_out


def test_without_an_entry_of_the_period_nothing_is_left_out_for_its_time() -> None:
    views = [_view("Physio 2024-11-19.md", 0.67, "2024-11-19"), _view("Shoulder exercises.md", 0.6)]

    kept, _ = _picked("shoulder recovery in the first half of 2025", views)

    assert kept == ["Physio 2024-11-19.md", "Shoulder exercises.md"]
