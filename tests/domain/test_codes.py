"""What a code is among a question's terms (a letter before a figure, not a period's word) and when a text
writes one (however its letters and figures are joined, in any case, in the plural)."""

from __future__ import annotations

import pytest

from backend.domain.recall.codes import codes_among, writes_code


@pytest.mark.parametrize("term", ["11c3", "rav4", "a2", "b12", "ks3", "p60", "covid19", "e2fs", "co2"])
def test_a_letter_before_a_figure_makes_a_code(term: str) -> None:
    assert codes_among(["when", term]) == {term}


@pytest.mark.parametrize(
    "term",
    # quantities, ordinals, decades, hours (a figure before letters), figures, words, a period's words
    ["12oz", "2k", "10k", "500mg", "3rd", "1er", "1990s", "3pm", "15h", "2024", "honey", "café"]
    + ["2x4", "9x2", "1920x1080", "10x400m", "12m2", "m3", "1h30min", "1m30s", "65r17"]
    + ["q3", "h1", "w38", "kw38", "wk38", "cw38", "fy24", "15h30"],
)
def test_quantities_ordinals_hours_numbers_words_and_periods_are_not(term: str) -> None:
    assert codes_among([term]) == frozenset()


def test_a_code_written_with_a_joint_in_the_question_is_read_from_its_text() -> None:
    # the analyser splits "RAV-4" at its hyphen: its terms hold no code
    assert codes_among(["rav", "4"], "my RAV-4's tires, COVID-19 and B.12") == {"rav4", "covid19", "b12"}
    assert codes_among([], "我的ＲＡＶ－４轮胎") == {"rav4"}


@pytest.mark.parametrize(
    "text",
    ["2024-W38", "E2F-1", "a 2-week trip", "Jan-2024 budget", "JAN-2024", "CLASS-OF-2010", "2-IN-1", "row-3"]
    + ["LC-34-1"],
)
def test_a_year_a_word_or_a_longer_code_with_a_joint_is_no_code_of_the_question(text: str) -> None:
    assert codes_among([], text) == frozenset()


@pytest.mark.parametrize(
    "text",
    ["RAV4", "my rav4's tires", "RAV-4", "RAV‑4", "RAV\u22124", "rav 4", "Rav.4", "two RAV4s", "ＲＡＶ４"]
    + ["RAV4のタイヤ", "RAV4를 샀다", "RAV4ㅋㅋ", "RAV4.1"],
)
def test_a_code_is_written_with_or_without_a_joint_in_any_case(text: str) -> None:
    assert writes_code(text, frozenset({"rav4"}))


@pytest.mark.parametrize(
    "text",
    ["RAV40", "BRAV4", "RAV", "4 RAV", "the 10C3 notes", "RAV-4-2", "RAV\n4", "a 2 week", "11C3-2"],
)
def test_a_longer_code_or_another_is_not_it(text: str) -> None:
    assert not writes_code(text, frozenset({"rav4", "11c3", "a2"}))


def test_asked_in_the_plural_the_singular_writes_it() -> None:
    assert writes_code("E2F1-3 and E2F4", frozenset({"e2fs"})) is False  # E2F1 is another code
    assert writes_code("the activator E2F family", frozenset({"e2fs"}))


def test_a_lone_letter_joins_its_figure_by_a_dash_and_accents_fold() -> None:
    assert writes_code("the A\u20132 exam", frozenset({"a2"}))
    assert writes_code("Raum Ä3", frozenset({"a3"}))
