"""The names a question is read with (application/search/question.py over domain/text/named_words.py), in
the language the search detects it is written in."""

from __future__ import annotations

from backend.application.search.question import Question
from backend.bootstrap import build_analyzer
from backend.config import load_settings


def test_a_search_reads_the_names_in_the_language_it_detects() -> None:
    analyzer = build_analyzer(load_settings(embedding_provider="none"))  # with the language detector
    german = "Wie viele Punkte gab die Verteidigung der Carolina Panthers in dieser Saison ab?"
    assert Question.plain(german, analyzer).names == ()
    english = "How many points did the defence of the Carolina Panthers give up this season?"
    assert Question.plain(english, analyzer).names == ("carolina", "panthers")
