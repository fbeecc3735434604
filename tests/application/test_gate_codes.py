"""The recall gate on a question naming a code (a class "11C3", a car "RAV4", an exam "A2"): an entry whose
note writes none of the question's codes stays out beside one whose note writes one and is at least as
likely, read in its text, title, heading and aliases; an entry likelier than every note writing it stays,
as does every entry when none writes it; it comes after the rules on what an entry tells."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from backend.application.recall.gate import NO_CODE, ONLY_PLANNED, Gate
from backend.application.search.presenting import ResultView
from backend.application.search.question import Question
from backend.bootstrap import build_analyzer
from backend.config import load_settings
from backend.domain.ranking.result_rules import WordTerms
from backend.domain.text.text_analysis import TextAnalyzer
from tests.application.result_views import result_view

TIMETABLE = "Areas/Teaching/Timetable 2025-26.md"
OTHER_CLASS = "Areas/Teaching/10C3 notes.md"
JOURNAL = "Journal/2025-09-03.md"


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return build_analyzer(load_settings(embedding_provider="none"), ("en",))


def _picked(analyzer: TextAnalyzer, asked: str, views: list[ResultView]) -> tuple[list[str], dict[str, str]]:
    question = Question.plain(asked, analyzer)
    words = WordTerms(analyzer)
    gate = Gate.asked_by(question, words, by_odds=False, latest=False, today=dt.date(2025, 11, 15))
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


def test_the_code_is_read_in_the_heading_and_the_aliases_however_it_is_joined(analyzer: TextAnalyzer) -> None:
    element = "Cars/Honda Element.md"
    toyota = result_view(
        "Cars/Toyota.md", "Tires: 225/65R17, rotated every 5,000 miles.", 0.8, aliases=("RAV-4",)
    )
    timetable = replace(
        result_view(TIMETABLE, "| P4 | free |", 0.8), heading_context="Timetable > 11C3 (Year 11)"
    )
    views = [result_view(element, "Tires 225/70R16, 35 psi front and back.", 0.7), toyota]
    assert _picked(analyzer, "what size tires does my rav4 take?", views) == (
        ["Cars/Toyota.md"],
        {element: NO_CODE},
    )
    views = [timetable, result_view(OTHER_CLASS, "Seating plan v4.", 0.6)]
    assert _picked(analyzer, "when do I teach 11C3", views) == ([TIMETABLE], {OTHER_CLASS: NO_CODE})


def test_the_code_is_read_in_the_notes_title_and_tags(analyzer: TextAnalyzer) -> None:
    element = "Cars/Honda Element.md"
    titled = result_view("Cars/RAV4.md", "Tires: 225/65R17, rotated every 5,000 miles.", 0.8)
    tagged = replace(result_view("Cars/Toyota.md", "Tires: 225/65R17.", 0.8), tags=["cars/rav4"])
    for view in (titled, tagged):
        views = [view, result_view(element, "Tires 225/70R16, 35 psi front and back.", 0.7)]
        assert _picked(analyzer, "what size tires does my RAV-4 take?", views) == (
            [view.chunk_id],
            {element: NO_CODE},
        )


def test_a_section_of_the_note_that_writes_the_code_stays(analyzer: TextAnalyzer) -> None:
    exam = "Projects/Portuguese exam.md"
    named = result_view(exam, "CIPLE = the A2 certificate. Sessions in May and November.", 0.99)
    decision = replace(named, chunk_id=f"{exam}#Decision", content="Feb 2025: not sitting it in May.")
    views = [named, decision, result_view("Areas/Portuguese log.md", "Lesson with Inês on the exam.", 0.5)]
    kept, left_out = _picked(analyzer, "did I decide to sit the Portuguese A2 exam", views)
    assert kept == [exam, f"{exam}#Decision"]
    assert left_out == {"Areas/Portuguese log.md": NO_CODE}


@pytest.mark.parametrize(
    ("other", "kept"), [(0.9, [JOURNAL, TIMETABLE]), (0.7, [TIMETABLE])], ids=["likelier", "as likely"]
)
def test_an_entry_likelier_than_every_note_writing_the_code_stays(
    analyzer: TextAnalyzer, other: float, kept: list[str]
) -> None:
    # a preference among entries that answer, as the period's: the code never overrules a likelier entry
    views = [
        result_view(JOURNAL, "My Year 11 chemistry class moved to Tuesday afternoons.", other),
        result_view(TIMETABLE, "| P4 | 9X2 | 11C3 | 13A chem |", 0.7),
    ]
    views.sort(key=lambda v: -v.confidence)
    assert _picked(analyzer, "when do I teach 11C3 this year", views)[0] == kept


@pytest.mark.parametrize(
    ("asked", "written"),
    [
        ("when do I teach 11C3 this year", "11C2"),
        ("what did we do on the 3rd", "the 3rd"),
        ("what do I charge for a 12oz jar", "12oz jar £9"),
        ("how much did I spend on the £2k deposit", "about £2k"),
        ("what did I finish in Q3", "Q3 goals"),
        ("how big is the living room in m2", "12 m2 of wall"),
        ("did I sit the A2 exam", "a 2 week holiday"),  # a word and a figure, not the code
        ("which E2Fs did the lab test", "E2F-1 binding"),  # another code
    ],
)
def test_no_entry_is_left_out_when_none_writes_a_code_the_question_names(
    analyzer: TextAnalyzer, asked: str, written: str
) -> None:
    # "3rd", "12oz", "£2k", "m2", "Q3": an ordinal, quantities and a period, written many ways ("third",
    # "12 oz", "£2,000", "m²", a date in August): no codes; "a 2 week" and "E2F-1" write no "A2" nor "E2Fs"
    views = [
        result_view("Areas/Notes.md", f"Noted: {written}.", 0.8),
        result_view(
            JOURNAL, "The third time: a jar of 12 oz at £9, the deposit £2,000, goals done 14 August.", 0.7
        ),
    ]
    assert _picked(analyzer, asked, views) == (["Areas/Notes.md", JOURNAL], {})


def test_the_plan_naming_the_code_does_not_keep_the_journal_of_what_happened_out(
    analyzer: TextAnalyzer,
) -> None:
    # the rules on what an entry tells come first: the plan leaves, and no entry left writes the code
    plan = "Meetings/Parents evening plan.md"
    views = [
        result_view(plan, "- [ ] 11C3 parents evening: print the reports", 0.7),
        result_view(JOURNAL, "Parents evening: Jayden's mum came, reports went down well.", 0.65),
    ]
    kept, left_out = _picked(analyzer, "what happened at the 11C3 parents evening?", views)
    assert (kept, left_out) == ([JOURNAL], {plan: ONLY_PLANNED})


@pytest.mark.parametrize(
    ("asked", "codes"),
    [
        ("what happened in 2025W38", set()),
        ("when did I teach 11C3 in 2025W38", {"11c3"}),
        ("my RAV4s", {"rav4s"}),
    ],
)
def test_the_words_naming_the_questions_period_are_no_codes(
    analyzer: TextAnalyzer, asked: str, codes: set[str]
) -> None:
    # "2025W38" is the week asked, which a note tells by its dates, not a code it must write
    assert Question.plain(asked, analyzer).codes == codes


def test_a_code_among_chinese_words_is_read(analyzer: TextAnalyzer) -> None:
    seating = "Teaching/座位表.md"
    views = [
        result_view("Teaching/课表.md", "周二第四节教11C3班化学", 0.7),
        result_view(seating, "10C3班座位表", 0.65),
    ]
    assert _picked(analyzer, "11C3班什么时候上课", views) == (["Teaching/课表.md"], {seating: NO_CODE})
