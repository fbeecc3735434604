"""The codes a question names: a word joining letters and figures, as people name a thing of their own by
a code ("when do I teach 11C3", a room "B12", a car "RAV4", an exam "A2", a jar "12oz").

A code names one thing exactly: the class 10C3 is another class than 11C3, whatever the words around them
share. Asked about one, a note that writes it answers, and a note on the same subject that writes none of
the question's codes (the notes on class 10C3, the label rules of a honey jar beside the price list of the
12oz one) reads as an answer only by its other words. The recall leaves such a note out beside one that
writes the code and is at least as likely to answer (a preference among entries that answer, as a period's:
never above a likelier one); when none writes it, the rule says nothing. Ordinals, decades and hours are
not codes: "the 3rd", "the 1990s", "3pm" are written many ways ("third", "the nineties", "15:00"), nor are
the words naming the question's period ("2024-W38", "Q3 2025"), which a note tells by its dates.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

_LETTER = re.compile(r"[^\W\d_]")
_FIGURE = re.compile(r"\d")
_NOT_A_CODE = re.compile(r"\d+(?:st|nd|rd|th|s|am|pm)", re.IGNORECASE)


def codes_among(terms: Iterable[str]) -> frozenset[str]:
    """The terms (as the analyser made them of the question's words) that are codes."""
    return frozenset(
        term
        for term in terms
        if _LETTER.search(term) and _FIGURE.search(term) and not _NOT_A_CODE.fullmatch(term)
    )
