"""The names a question writes (domain/text/named_words.py): what tells, beside other vaults, the one that
can answer "when did Melanie go to the park?" from the ones that never mention her."""

from __future__ import annotations

import pytest

from backend.domain.text.named_words import named_words, names_held


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("how much does Lyd owe me", ("lyd",)),
        ("When did Melanie go to the park?", ("melanie",)),  # the sentence's own capital is no name
        ("what did Boatyard Pete quote for the blacking", ("boatyard", "pete")),
        ("what time is Rory's football now", ("rory",)),  # the possessive folded away
        ("When did Maria meet Jean?", ("maria", "jean")),  # half its words may be names
        ("Did I pay Lyd? I'd promised Oz", ("lyd", "oz")),  # "I" and "I'd" are no one's name
        ("Would Tim like books by C. S. Lewis or Dr. Seuss?", ("tim",)),  # initials, titles, after a "."
        ("what did Zoë say about Ünal", ("zoe", "unal")),  # folded as the keyword side folds
    ],
)
def test_the_names_a_question_writes(question: str, names: tuple[str, ...]) -> None:
    assert named_words(question) == names


@pytest.mark.parametrize(
    "question",
    [
        "books I finished in 2024",  # no capital but "I"
        "what did I write about databases",
        "What Did I Write About Databases",  # Title Case: capitals by habit
        "WHAT DID MELANIE SAY",  # shouting
        "",
    ],
)
def test_a_question_written_without_names_or_with_capitals_by_habit_names_nothing(question: str) -> None:
    assert named_words(question) == ()


def test_a_question_in_a_language_capitalising_every_noun_names_nothing_by_its_capitals() -> None:
    question = "Wie viele Punkte gab die Verteidigung der Panthers ab?"
    assert named_words(question, language="de") == ()
    assert named_words("Cuántos puntos concedió la defensa de los Panthers?", language="es") == ("panthers",)


def test_the_words_of_the_period_it_names_are_no_names() -> None:
    question = "what did Lyd and I do in May 2024"
    assert named_words(question) == ("lyd", "may")  # read alone, "May" could be a name
    assert named_words(question, period="in May 2024") == ("lyd",)


def test_names_held_counts_each_name_the_texts_write_together() -> None:
    texts = ["Climbing at the wall with Lyd.", "Rory's football moved to 5 pm."]
    assert names_held(texts, ("lyd", "rory")) == 2
    assert names_held(texts, ("lyd", "melanie")) == 1
    assert names_held(texts, ("melanie",)) == 0
    assert names_held(["Lydia came too."], ("lyd",)) == 0  # a word, not a part of one


def test_a_name_is_found_as_the_keyword_side_splits_words() -> None:
    assert names_held(["notes_of_Lyd.md", "Zoë's boat"], ("lyd", "zoe")) == 2  # "_" and "'" split words
    assert names_held(["ALL ABOUT RORY"], ("rory",)) == 1
