"""What a code is among a question's terms (a letter before a figure, not a period's word) and when a text
writes one (however its letters and figures are joined, in any case, in the plural)."""

from __future__ import annotations

import pytest

from backend.domain.recall.codes import codes_among, writes_code


@pytest.mark.parametrize("term", ["11c3", "rav4", "a2", "b12", "9x2", "ks3", "p60", "covid19", "e2fs"])
def test_a_letter_before_a_figure_makes_a_code(term: str) -> None:
    assert codes_among(["when", term]) == {term}


@pytest.mark.parametrize(
    "term",
    # quantities, ordinals, decades, hours (a figure before letters), figures, words, a period's words
    ["12oz", "2k", "10k", "500mg", "3rd", "1er", "1990s", "3pm", "15h", "2024", "honey", "café"]
    + ["q3", "h1", "w38", "kw38", "wk38", "fy24", "15h30"],
)
def test_quantities_ordinals_hours_numbers_words_and_periods_are_not(term: str) -> None:
    assert codes_among([term]) == frozenset()


@pytest.mark.parametrize("text", ["RAV4", "my rav4's tires", "RAV-4", "rav 4", "Rav.4", "two RAV4s"])
def test_a_code_is_written_with_or_without_a_joint_in_any_case(text: str) -> None:
    assert writes_code(text, frozenset({"rav4"}))


@pytest.mark.parametrize("text", ["RAV40", "BRAV4", "RAV", "4 RAV", "the 10C3 notes"])
def test_a_longer_code_or_another_is_not_it(text: str) -> None:
    assert not writes_code(text, frozenset({"rav4", "11c3"}))


def test_asked_in_the_plural_the_singular_writes_it() -> None:
    assert writes_code("E2F1-3 and E2F4", frozenset({"e2fs"})) is False  # E2F1 is another code
    assert writes_code("the activator E2F family", frozenset({"e2fs"}))
