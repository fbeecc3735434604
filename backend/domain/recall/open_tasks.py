"""A question about what happened, and a passage that only plans it.

People keep what they mean to do as unticked tasks (`- [ ] me: chem stock check with Bernie by 20 Sept`) and
tick them, or write up what came of them elsewhere. Asked what happened ("what did Bernie find in the chemical
stock check?"), a note whose lines naming the question's subject are all such tasks tells that it was planned,
never what came of it: on personal-dev last September's meeting, its action list naming the stock check and
Bernie, was quoted at 0.87 beside the March meeting that gives the findings. A ticked task (`- [x]`) is
something done and may answer; a question asking what is to be done ("what's left on the boat?") is answered
by the open ones, so only questions in the past are narrowed, and not those asking what was planned, agreed or
assigned ("what did I need to buy?", "what was on my to-do list?", "what did we agree at the meeting?", "who
was doing the stock check?"): the open tasks are their answer. English questions only, as the other readings
of what a question asks (sums.py, measures.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

# "what did …", "how was …", "what happened …", "when had …": a question about the past
_ASKS_PAST = re.compile(r"\b(?:did|didn't|was|wasn't|were|weren't|had|happened)\b", re.IGNORECASE)
# a question about what was meant to happen, agreed, asked or assigned (and who was to do it): plans,
# tasks and lists are what answer it
_ASKS_PLAN = re.compile(
    r"\b(?:plan(?:s|ned|ning)?|need(?:s|ed)?|want(?:s|ed)?|meant|mean|supposed|intend(?:ed)?|going\s+to"
    r"|should|remind(?:er|ers)?|to-?dos?|to\s+do|tasks?|lists?|actions?|left|agree(?:d|s)?|promise(?:d|s)?"
    r"|ask(?:ed|s)?|assign(?:ed|s)?|responsible|due|deadline|follow(?:ed)?\s+up|who)\b",
    re.IGNORECASE,
)
# a Markdown task not ticked: "- [ ] …", "* [ ] …", "1. [ ] …" (Obsidian's other marks, [x] [/] [-], are
# done, under way or dropped: each says something happened)
_OPEN_TASK = re.compile(r"\s*(?:[-*+]|\d+[.)])\s+\[ \]\s")


def asks_what_happened(question: str) -> bool:
    """Whether the question asks about the past, what was done, found, decided or said, and not about
    what was planned."""
    return _ASKS_PAST.search(question) is not None and _ASKS_PLAN.search(question) is None


def only_planned(text: str, terms_of: Callable[[str], frozenset[str]], weights: Mapping[str, float]) -> bool:
    """Whether the lines of `text` holding the most of the question's words (`terms_of` a line, each term
    weighing `weights[term]`) are all unticked tasks: the passage speaks to the question only as a plan."""
    best = 0.0
    planned = False
    for line in text.split("\n"):
        weight = sum(weights.get(term, 0.0) for term in terms_of(line))
        if weight <= 0.0 or weight < best:
            continue
        is_task = _OPEN_TASK.match(line) is not None
        # a tie with a line that is no task keeps the passage: something besides the plan speaks to it
        planned = is_task if weight > best else planned and is_task
        best = weight
    return planned
