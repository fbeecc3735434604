"""A question about what happened is not answered by a passage that only plans it (open_tasks.py)."""

from __future__ import annotations

import re

import pytest

from backend.domain.recall.open_tasks import asks_what_happened, only_planned

WEIGHTS = {"bernie": 1.0, "stock": 1.0, "check": 1.0, "find": 1.0}


def terms_of(line: str) -> frozenset[str]:
    return frozenset(word for word in re.findall(r"\w+", line.casefold()) if word in WEIGHTS)


@pytest.mark.parametrize(
    "question",
    [
        "what did Bernie find in the chemical stock check",
        "how was the stock check",
        "what happened at the stock check",
        "were the fume cupboards repaired",
        "why didn't Bernie order magnesium",
    ],
)
def test_questions_about_the_past_ask_what_happened(question: str) -> None:
    assert asks_what_happened(question)


@pytest.mark.parametrize(
    "question",
    [
        "what's left to do on the boat",
        "when is the stock check due",
        "who does the stock check",
        # the past, but asking what was planned: the open tasks answer it
        "what did I need to buy for the boat",
        "what was on my to-do list last week",
        "what did I plan to do about the stock check",
        "what were the actions from the September meeting",
        "what did I want to fix on the boat",
        "what did we agree at the September meeting",
        "what did Fiona ask me to do",
        "who was doing the stock check",
    ],
)
def test_questions_about_what_is_to_be_done_do_not(question: str) -> None:
    assert not asks_what_happened(question)


def test_a_passage_naming_the_subject_only_in_open_tasks_only_plans_it() -> None:
    meeting = "**1. Budget**: check stock first.\n\nActions\n- [ ] me: stock check with Bernie\n- [ ] Oz"
    assert only_planned(meeting, terms_of, WEIGHTS)
    assert only_planned("1. [ ] Bernie: stock check", terms_of, WEIGHTS)
    assert only_planned("* [ ] stock check with Bernie", terms_of, WEIGHTS)


@pytest.mark.parametrize(
    "passage",
    [
        "- [x] stock check with Bernie",  # ticked: done
        "- [/] stock check with Bernie",  # under way
        "Bernie's stock check: magnesium low.\n- [ ] order magnesium",  # the finding names more
        "Bernie did the stock check.\n- [ ] stock check with Bernie",  # a tie with a line that is no task
        "- stock check with Bernie",  # a list item, no task
        "Nothing on the question here.",
    ],
)
def test_a_passage_saying_more_than_a_plan_does_not(passage: str) -> None:
    assert not only_planned(passage, terms_of, WEIGHTS)
