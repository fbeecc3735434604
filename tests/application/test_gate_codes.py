"""The recall gate on a question naming a code (a class "11C3", a jar "12oz", an exam "A2"): an entry whose
note writes none of the question's codes stays out beside one whose note writes one and that is at least as
likely; when no entry's note writes it, the rule leaves every entry in."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from backend.application.recall.gate import NO_CODE, Gate
from backend.application.search.presenting import ResultView
from backend.application.search.question import Question
from backend.bootstrap import build_analyzer
from backend.config import load_settings
from backend.domain.ranking.result_rules import WordTerms
from backend.domain.text.text_analysis import TextAnalyzer
from tests.application.result_views import result_view

TIMETABLE = "Areas/Teaching/Timetable 2025-26.md"
OTHER_CLASS = "Areas/Teaching/10C3 notes.md"


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return build_analyzer(load_settings(embedding_provider="none"), ("en",))


def _picked(analyzer: TextAnalyzer, asked: str, views: list[ResultView]) -> tuple[list[str], dict[str, str]]:
    question = Question.plain(asked, analyzer)
    gate = Gate.asked_by(
        question, WordTerms(analyzer), by_odds=False, latest=False, today=dt.date(2025, 11, 15)
    )
    left_out: dict[str, str] = {}
    return [v.chunk_id for v in gate.picked(views, left_out)], left_out


def test_beside_the_timetable_naming_the_class_the_notes_on_another_class_stay_out(
    analyzer: TextAnalyzer,
) -> None:
    views = [
        result_view(TIMETABLE, "| P4 | 9X2 | 11C3 | 13A chem |", 0.7),
        result_view(OTHER_CLASS, "Seating plan v4: split Jayden and Tyler. Meet them at the door.", 0.6),
    ]
    assert _picked(analyzer, "when do I teach 11C3 this year", views) == ([TIMETABLE], {OTHER_CLASS: NO_CODE})


def test_the_code_is_read_whatever_its_case_and_in_the_notes_title(analyzer: TextAnalyzer) -> None:
    tires = "Cars/RAV4.md"
    views = [
        result_view("Cars/Honda Element.md", "Tires 225/70R16, 35 psi front and back.", 0.7),
        result_view(tires, "Tires: 225/65R17, rotated every 5,000 miles.", 0.8),
    ]
    kept, left_out = _picked(analyzer, "what size tires does my rav4 take?", views)
    assert (kept, left_out) == ([tires], {"Cars/Honda Element.md": NO_CODE})


def test_a_section_of_the_note_that_writes_the_code_stays(analyzer: TextAnalyzer) -> None:
    exam = "Projects/Portuguese exam.md"
    named = result_view(exam, "CIPLE = the A2 certificate. Sessions in May and November.", 0.99)
    decision = replace(named, chunk_id=f"{exam}#Decision", content="Feb 2025: not sitting it in May.")
    views = [named, decision, result_view("Areas/Portuguese log.md", "Lesson with Inês on the exam.", 0.5)]
    kept, left_out = _picked(analyzer, "did I decide to sit the Portuguese A2 exam", views)
    assert kept == [exam, f"{exam}#Decision"]
    assert left_out == {"Areas/Portuguese log.md": NO_CODE}


def test_an_entry_likelier_than_every_note_writing_the_code_stays(analyzer: TextAnalyzer) -> None:
    # a preference among entries that answer, as the period's: the code never overrules a likelier entry
    views = [
        result_view("Journal/2025-09-03.md", "My Year 11 chemistry class moved to Tuesday afternoons.", 0.9),
        result_view(TIMETABLE, "| P4 | 9X2 | 11C3 | 13A chem |", 0.7),
        result_view(OTHER_CLASS, "Seating plan v4: split Jayden and Tyler.", 0.6),
    ]
    kept, left_out = _picked(analyzer, "when do I teach 11C3 this year", views)
    assert (kept, left_out) == (["Journal/2025-09-03.md", TIMETABLE], {OTHER_CLASS: NO_CODE})


@pytest.mark.parametrize(
    "asked",
    [
        "when do I teach 11C3 this year",
        "what did we do on the 3rd",
        "what did I read in the 1990s",
        "was it at 3pm",
    ],
)
def test_when_no_entry_writes_a_code_every_entry_stays(analyzer: TextAnalyzer, asked: str) -> None:
    views = [
        result_view("Journal/2025-09-03.md", "Year 11 chemistry classes start third period.", 0.8),
        result_view("Areas/Teaching/Classes.md", "The classes of the year and their rooms.", 0.7),
    ]
    assert _picked(analyzer, asked, views) == (["Journal/2025-09-03.md", "Areas/Teaching/Classes.md"], {})
