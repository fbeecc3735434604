"""The codes a question names, and whether a passage writes one: a word where a letter comes before a
figure, as people name a thing of their own ("when do I teach 11C3", a room "B12", a car "RAV4" or
"RAV-4", an exam "A2", a form "P60").

A code names one thing exactly: the class 10C3 is another class than 11C3, whatever the words around them
share. Asked about one, a note that writes it answers, and a note on the same subject that writes none of
the question's codes (the notes on class 10C3 beside the timetable) reads as an answer only by its other
words. The recall leaves such a note out beside one that writes the code and is at least as likely to
answer (a preference among entries that answer, as a period's: never above a likelier one); when none
writes it, the rule says nothing.

Quantities are no codes, whatever their letters: a figure followed by letters ("12oz", "£2k", "10k",
"3rd", "1er", "1990s", "3pm", "15h"), a dimension or a set ("2x4", "3x10", "1920x1080"), an area or a
volume ("12m2", "m3"), a duration ("1h30", "1m30s"), a tire size ("65R17"): people write them many ways
("12 oz", "£2,000", "3 × 10", "12 m²"). Nor are the words that name a period ("Q3", "H1", "W38", "KW38",
"FY24", "15h30"), which a note tells by its dates. A code is written in any case, in compatibility forms
("１１Ｃ３"), with a hyphen, dot or dash between its letters and figures ("RAV-4", "B.12"), with a space
too where its letters are a word's ("rav 4", not "a 2 week holiday" for "A2"), and in the plural ("11C3s").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from backend.domain.text.sparse import fold
from backend.domain.text.text_analysis import strip_marks

_LETTER_THEN_FIGURE = re.compile(r"[^\W\d_]\d")
_PERIOD_WORD = r"q[1-4]|h[12]|k?w\d{1,2}|wk\d{1,2}|cw\d{1,2}|fy\d{2,4}|\d{1,2}h\d{2}"
_QUANTITY = r"\d+(?:[x×]\d+)+[^\W\d_]*|(?:\d+)?(?:[ckm]?m|ft|in)[23]|\d+h\d+(?:min)?|\d+m\d+s?|\d{2}r\d{2}"
_NOT_A_CODE = re.compile(rf"{_PERIOD_WORD}|{_QUANTITY}", re.IGNORECASE)
# Han, kana and Hangul (its jamo too: "ㅋㅋ") are letters to a regular expression, but no word of theirs
# runs on into a code: a code stands among them as among spaces ("教11C3班")
_CJK = r"\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u3400-\u9fff\ua960-\ua97f\uac00-\ud7ff" r"\uf900-\ufaff"
_LETTER = rf"[^\W\d_{_CJK}]"
_WORD_CHAR = rf"[^\W_{_CJK}]"
_DASHES = r"\u2010-\u2015\u2212"
_JOINT = rf"[.\-{_DASHES}]"
_WORD_JOINT = rf"[ \t.\-{_DASHES}]"
# a code the analyser splits at its joint ("RAV-4", "COVID-19", "LC-34"), read from the question's text:
# never a year ("Jan-2024", "class-of-2010"), nor letters after a figure's joint ("2-in-1")
_JOINED = re.compile(
    rf"(?<!{_WORD_CHAR})(?<!\d{_JOINT})({_LETTER}+){_JOINT}(?!(?:19|20)\d\d(?!\d))(\d+)(?!{_WORD_CHAR}|{_JOINT}\d)"
)
_RUNS = re.compile(r"\d+|[^\W\d_]+")


def codes_among(terms: Iterable[str], text: str = "") -> frozenset[str]:
    """The codes among the terms the analyser made of a question's words, and those `text` (the question)
    writes with a joint the analyser splits at, in capitals as codes are written ("row-3", "week-12" are
    words)."""
    joined = (
        f"{letters}{figures}".casefold()
        for letters, figures in _JOINED.findall(text if text.isascii() else strip_marks(text))
        if letters.isupper()
    )
    return frozenset(
        code
        for code in (*terms, *joined)
        if _LETTER_THEN_FIGURE.search(code) and not _NOT_A_CODE.fullmatch(code)
    )


def writes_code(text: str, codes: frozenset[str]) -> bool:
    """Whether `text` writes one of `codes`, however it joins the code's letters and figures: read folded as
    the analyser reads codes (compatibility forms, "１１Ｃ３", "m²"; accents; case), Hangul as its jamo."""
    folded = fold(text)
    return any(_written(code).search(folded) for code in codes)


@lru_cache(maxsize=256)
def _written(code: str) -> re.Pattern[str]:
    if code.endswith("s") and _LETTER_THEN_FIGURE.search(code[:-1]):
        code = code[:-1]  # asked in the plural ("E2Fs"), written in the singular too
    runs = _RUNS.findall(code)
    pattern = re.escape(runs[0])
    for before, after in zip(runs, runs[1:], strict=False):
        # a lone letter joined by a space is a word of a sentence ("a 2 week holiday"), no code
        lone = any(len(run) == 1 and not run.isdigit() for run in (before, after))
        pattern += f"{_JOINT if lone else _WORD_JOINT}?{re.escape(after)}"
    # not inside a longer word or code: "b12" is not in "b123", nor "e2f" in "E2F-1"; "v2.1" writes "v2"
    return re.compile(rf"(?<!{_WORD_CHAR}){pattern}s?(?!{_WORD_CHAR}|[\-{_DASHES}]\d)", re.IGNORECASE)
