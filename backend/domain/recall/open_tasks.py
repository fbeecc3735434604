"""A question about what happened, and a passage that only plans it.

People keep what they mean to do as unticked tasks (`- [ ] me: chem stock check with Bernie by 20 Sept`) and
tick them, or write up what came of them elsewhere. Asked what happened ("what did Bernie find in the chemical
stock check?"), a note whose lines naming the question's subject are all such tasks tells that it was planned,
never what came of it: on personal-dev last September's meeting, its action list naming the stock check and
Bernie, was quoted at 0.87 beside the March meeting that gives the findings. A ticked task (`- [x]`) is
something done and may answer; a question asking what is to be done ("what's left on the boat?") is answered
by the open ones, so only questions in the past are narrowed, and not those asking what was planned, agreed or
assigned ("what did I need to buy?", "what was on my to-do list?", "what did we agree at the meeting?", "who
was doing the stock check?"): the open tasks are their answer. Beside an entry that tells more, that is:
alone, the plan is what the notes know of it and is quoted. English questions only (detected so, or unsure in
a vault read in English alone): German asks "Was …" of the present and the past alike.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

# "what did …", "how was …", "what happened …", "why hadn't …": a question about the past (contractions with
# either apostrophe: phones and Macs type ’)
_ASKS_PAST = re.compile(r"\b(?:(?:did|was|were|had)(?:n['’]t)?|happened)\b", re.IGNORECASE)
# a question about what was meant to happen, agreed, asked or assigned (and who was to do it): plans,
# tasks and lists are what answer it
_ASKS_PLAN = re.compile(
    r"\b(?:plan(?:s|ned|ning)?|need(?:s|ed)?|want(?:s|ed)?|meant|mean|supposed|intend(?:ed)?|going\s+to|gonna"
    r"|should|remind(?:s|ed|ers?)?|to-?dos?|to\s+do|tasks?|\w*lists?|actions?|left|agree(?:d|s)?"
    r"|promise(?:d|s)?|commit(?:ted|s)?|ask(?:ed|s)?|assign(?:ed|s)?|responsible|due|deadline"
    r"|follow(?:ed)?[-\s]?ups?|next\s+steps?|outstanding|pending|open\s+items?|agenda|ha(?:ve|d)\s+to"
    r"|(?:I'd|I’d|I\s+would)\s+do|who)\b",
    re.IGNORECASE,
)
# a Markdown task not ticked, in a list, a quote or a callout: "- [ ] …", "+ [ ] …", "1. [ ] …", "> - [ ] …";
# "[>]" and "[<]" (deferred, scheduled) are plans too. Ticked, under way or cancelled ([x] [/] [-]) each
# says what became of it.
_OPEN_TASK = re.compile(r"[ \t]*(?:>[ \t]*)*(?:[-*+]|\d+[.)])[ \t]+\[[ <>]\](?:[ \t]|$)")


def asks_what_happened(question: str) -> bool:
    """Whether the question asks about the past, what was done, found, decided or said, and not about
    what was planned. Questions it misses ("what came of …", "how'd it go") are left as they are: the
    rule only ever leaves a plan out."""
    return _ASKS_PAST.search(question) is not None and _ASKS_PLAN.search(question) is None


def on_the_question(
    text: str, terms_of: Callable[[str], frozenset[str]], weights: Mapping[str, float]
) -> bool | None:
    """How `text` speaks to the question, by its lines holding the most of the question's words (`terms_of`
    a line, each term weighing `weights[term]`): True when they are all unticked tasks (only as a plan),
    False when one is not (it tells more), None when no line holds any of them."""
    best = 0.0
    planned: bool | None = None
    for line in text.split("\n"):
        weight = sum(weights.get(term, 0.0) for term in terms_of(line))
        if weight <= 0.0 or weight < best:
            continue
        is_task = _OPEN_TASK.match(line) is not None
        # a tie with a line that is no task keeps the passage: something besides the plan speaks to it
        planned = is_task if weight > best else bool(planned) and is_task
        best = weight
    return planned
