"""What a tag says in words, and the acronyms a note defines."""

from __future__ import annotations

import pytest

from backend.domain.text.tag_words import acronym_definitions, tag_segments, tag_text


@pytest.mark.parametrize(
    ("tag", "segments"),
    [
        ("MentalHealth", [["Mental", "Health"]]),
        ("mental-health", [["mental", "health"]]),
        ("mental_health", [["mental", "health"]]),
        ("health/mental", [["health"], ["mental"]]),
        ("GADTherapy", [["GAD", "Therapy"]]),
        ("mentalhealth", [["mentalhealth"]]),  # no boundary written, none made up
    ],
)
def test_a_tag_is_cut_where_its_writer_marked_a_word(tag: str, segments: list[list[str]]) -> None:
    assert tag_segments(tag) == segments


def test_tags_as_embedded_text_say_each_phrase_once() -> None:
    assert (
        tag_text(["MentalHealth", "mental-health", "health/sleep"])
        == "Mental Health, mental health, health sleep"
    )


def test_an_acronym_is_defined_either_way_round_by_the_initials_of_its_words() -> None:
    text = (
        "Dr Patel says generalised anxiety disorder (GAD).\n"
        "Then CBT (cognitive behavioural therapy, weekly).\n"
        "Met the NHS (again) and the head of Year (Y10). Theory of Mind (ToM) is not all capitals.\n"
        "The Department for Education (DfE) and Attention-Deficit/Hyperactivity Disorder (ADHD)."
    )
    assert dict(acronym_definitions(text)) == {
        "GAD": "generalised anxiety disorder",
        "CBT": "cognitive behavioural therapy",
        "ADHD": "Attention Deficit Hyperactivity Disorder",
    }


def test_an_expansion_is_read_from_its_own_line_outside_other_brackets_and_near_its_acronym() -> None:
    far = "word " * 40  # 200 characters: an expansion that far before its brackets is not one
    text = (
        "Seasonal affective disorder\n  (SAD) came back in November.\n"  # brackets on the next line
        "Rapid eye movement (REM) and non rapid eye movement (NREM) sleep, both in one line.\n"
        "Pulmonary embolism (ruled out) (PE) was said twice.\n"  # other brackets between: no expansion
        f"Obstructive sleep apnoea {far}(OSA)\n"
        "Obstructive sleep apnoea\n\n" + far + "(OSA)\n"  # another line: none either
    )
    assert dict(acronym_definitions(text)) == {
        "SAD": "Seasonal affective disorder",
        "REM": "Rapid eye movement",
        "NREM": "non rapid eye movement",
    }
