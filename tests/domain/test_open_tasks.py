"""A question about what happened is not answered by a passage that only plans it (open_tasks.py)."""

from __future__ import annotations

import re

import pytest

from backend.domain.recall.open_tasks import asks_what_happened, on_the_question

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
        "why didn’t Bernie order magnesium",  # the apostrophe phones type
        "why hadn't Bernie ordered magnesium",
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
        "what were the next steps from the meeting",
        "what were the follow-ups from the stock check",
        "what was on the checklist for the audit",
        "what was still outstanding after the audit",
        "what had to be done before the audit",
    ],
)
def test_questions_about_what_is_to_be_done_do_not(question: str) -> None:
    assert not asks_what_happened(question)


@pytest.mark.parametrize(
    "passage",
    [
        "**1. Budget**: check stock first.\n\nActions\n- [ ] me: stock check with Bernie\n- [ ] Oz",
        "1. [ ] Bernie: stock check",
        "* [ ] stock check with Bernie",
        "    + [ ] stock check with Bernie",  # indented, under another item
        "> [!todo] Actions\n> - [ ] stock check with Bernie",  # in a callout
        "- [<] stock check with Bernie on Friday",  # scheduled
    ],
)
def test_a_passage_naming_the_subject_only_in_open_tasks_only_plans_it(passage: str) -> None:
    assert on_the_question(passage, terms_of, WEIGHTS) is True


@pytest.mark.parametrize(
    "passage",
    [
        "- [x] stock check with Bernie",  # ticked: done
        "- [/] stock check with Bernie",  # under way
        "Bernie's stock check: magnesium low.\n- [ ] order magnesium",  # the finding names more
        "Bernie did the stock check.\n- [ ] stock check with Bernie",  # a tie with a line that is no task
        "- stock check with Bernie",  # a list item, no task
        "- [-] stock check with Bernie",  # cancelled: what became of it
    ],
)
def test_a_passage_saying_more_than_a_plan_tells_more(passage: str) -> None:
    assert on_the_question(passage, terms_of, WEIGHTS) is False


def test_a_passage_holding_none_of_the_questions_words_says_nothing_of_it() -> None:
    assert on_the_question("Nothing on the question here.\n- [ ] buy milk", terms_of, WEIGHTS) is None
