"""Pointer chunks and the line a question picks out of them (result_rules), on plain text."""

from __future__ import annotations

from backend.domain.ranking.result_rules import best_pointer_line, is_pointer
from backend.domain.text.text_analysis import TextAnalyzer

ANALYZER = TextAnalyzer()
MAP = (
    "## Health\n\n"
    "- [[GP 2025-02-11]] — talking to the doctor about not sleeping and feeling on edge\n"
    "- [Physio](Health/Physio%202024-11-19.md): what's actually wrong with my shoulder\n"
    "- [[Dentist 2024-05-21]] · [[Dentist 2025-06-03]] — teeth, sleeping badly before\n"
)


def picked(question: str, text: str = MAP) -> str | None:
    wanted = set(ANALYZER.query_terms(question))
    line = best_pointer_line(text, wanted, ANALYZER, ("en",))
    return line.target if line is not None else None


def test_a_list_of_links_is_a_pointer_and_a_day_that_mentions_people_is_not() -> None:
    assert is_pointer(MAP)
    assert is_pointer("See also:\n- [[Boiler service]]\n- [[Radiators]]")
    day = "- met [[Gaz]] at the allotment about the mites\n- rang [[Pete Sumner]] about the hull\n"
    assert not is_pointer(day)
    assert picked("mites at the allotment", day) is None


def test_the_line_whose_description_holds_the_question_s_words_is_picked() -> None:
    assert picked("when did I see the doctor about not sleeping") == "GP 2025-02-11"
    assert picked("what is wrong with my shoulder") == "Health/Physio 2024-11-19.md"  # a markdown link


def test_no_line_is_picked_on_one_shared_word_a_link_s_own_name_or_a_line_linking_several_notes() -> None:
    assert picked("sleeping pills") is None  # one word of the question in the line: chance
    assert picked("physio appointment") is None  # the link's own words: the note's title finds it
    assert picked("teeth sleeping badly") is None  # the line links to two notes: which one answers?
