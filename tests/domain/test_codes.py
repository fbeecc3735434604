"""What a code is among a question's terms: a word joining letters and figures, and not an ordinal, a
decade or an hour, which people write in other ways too."""

from __future__ import annotations

import pytest

from backend.domain.recall.codes import codes_among


@pytest.mark.parametrize("term", ["11c3", "rav4", "12oz", "a2", "b12", "w38", "9x2", "ks3", "6mp"])
def test_a_word_of_letters_and_figures_is_a_code(term: str) -> None:
    assert codes_among(["when", term]) == {term}


@pytest.mark.parametrize("term", ["3rd", "21st", "2nd", "1990s", "3pm", "10am", "2024", "honey", "café"])
def test_ordinals_decades_hours_numbers_and_words_are_not(term: str) -> None:
    assert codes_among([term]) == frozenset()
