"""Whether a question asks what happened (domain/recall/open_tasks.py) is read of English questions only, in
the language the search detects: German asks "Was …" of the present and the past alike."""

from __future__ import annotations

import pytest

from backend.application.search.question import Question
from backend.bootstrap import build_analyzer
from backend.config import load_settings
from backend.domain.text.text_analysis import TextAnalyzer


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return build_analyzer(load_settings(embedding_provider="none"), ("de",))  # a German vault


def test_an_english_question_about_the_past_is_read_so(analyzer: TextAnalyzer) -> None:
    assert Question.plain("What did Bernie find in the chemical stock check?", analyzer).happened


@pytest.mark.parametrize(
    "german",
    ["Was steht noch auf der Liste für die Inventur im Labor?", "Was hat Bernie bei der Inventur gefunden?"],
)
def test_a_german_question_is_not(analyzer: TextAnalyzer, german: str) -> None:
    assert not Question.plain(german, analyzer).happened
