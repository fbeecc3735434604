"""The codes a question names, and whether a passage writes one: a word where a letter comes before a
figure, as people name a thing of their own ("when do I teach 11C3", a room "B12", a car "RAV4", an exam
"A2", a form "P60").

A code names one thing exactly: the class 10C3 is another class than 11C3, whatever the words around them
share. Asked about one, a note that writes it answers, and a note on the same subject that writes none of
the question's codes (the notes on class 10C3 beside the timetable) reads as an answer only by its other
words. The recall leaves such a note out beside one that writes the code and is at least as likely to
answer (a preference among entries that answer, as a period's: never above a likelier one); when none
writes it, the rule says nothing.

A figure followed by letters is a quantity, an ordinal, a decade or an hour ("12oz", "£2k", "10k", "3rd",
"1er", "1990s", "3pm", "15h"), which people write many ways ("12 oz", "£2,000", "third", "15:00"): no
code. Nor are the words that name a period ("Q3", "H1", "W38", "KW38", "FY24", "15h30"), which a note
tells by its dates. A code is written with or without a space, hyphen or dot between its letters and
figures and in any case ("RAV4", "RAV-4", "rav 4"), and in the plural ("11C3s").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

_LETTER_THEN_FIGURE = re.compile(r"[^\W\d_]\d")
_PERIOD_WORD = re.compile(r"q[1-4]|h[12]|k?w\d{1,2}|wk\d{1,2}|fy\d{2,4}|\d{1,2}h\d{2}", re.IGNORECASE)
_RUNS = re.compile(r"\d+|[^\W\d_]+")


def codes_among(terms: Iterable[str]) -> frozenset[str]:
    """The terms (as the analyser made them of the question's words) that are codes."""
    return frozenset(
        term for term in terms if _LETTER_THEN_FIGURE.search(term) and not _PERIOD_WORD.fullmatch(term)
    )


def writes_code(text: str, codes: frozenset[str]) -> bool:
    """Whether `text` writes one of `codes`, however it joins the code's letters and figures."""
    return any(_written(code).search(text) for code in codes)


@lru_cache(maxsize=256)
def _written(code: str) -> re.Pattern[str]:
    if code.endswith("s") and _LETTER_THEN_FIGURE.search(code[:-1]):
        code = code[:-1]  # asked in the plural ("E2Fs"), written in the singular too
    joined = r"[\s.\-]?".join(re.escape(run) for run in _RUNS.findall(code))
    # not inside a longer word or figure ("b12" is not in "b123"), a plural "s" allowed
    return re.compile(rf"(?<![^\W_]){joined}s?(?![^\W_])", re.IGNORECASE)
