"""Compound words cut into their parts where a hyphenation dictionary allows: "steuererklärung" also
yields "steuer" and "erklärung", so a search for either finds the compound.

Compounds join whole words, and a join is always a syllable break, so the breaks of a hyphenation dictionary
(`pyphen`, maintained, shipping LibreOffice's dictionaries: nothing is downloaded) are where a compound can
part. No dictionary of words says which breaks are real joins, so every head and tail of at least
`MIN_PART` letters is offered; those that are not words ("steuerer", "rung") simply match nothing a person
types, and the index weighs every part at half a word (`text_analysis.PART_WEIGHT`).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from importlib.metadata import version

from backend.domain.text.text_analysis import COMPOUND_MIN

MIN_WORD = COMPOUND_MIN  # shorter words are rarely compounds, and their parts too short to mean anything
MIN_PART = 4

# ISO code -> pyphen dictionary, for the languages that write compounds as one word and have a stemmer
DICTIONARIES = {
    "de": "de_DE",
    "nl": "nl_NL",
    "sv": "sv",
    "da": "da_DK",
    "no": "nb_NO",
    "nb": "nb_NO",
    "nn": "nn_NO",
    "hu": "hu_HU",
    "et": "et_EE",
}

_lock = threading.Lock()


def name() -> str:
    """What cuts compounds, with its version: part of the keyword index's identity."""
    return f"pyphen-{version('pyphen')}"


def compound_parts(language: str, word: str) -> Sequence[str]:
    """The heads and tails of `word` (case-folded) at its hyphenation breaks, each at least `MIN_PART` long;
    none for a short word or a language that does not compound."""
    if len(word) < MIN_WORD or language not in DICTIONARIES or not word.isalpha():
        return ()
    return _parts(DICTIONARIES[language], word)


@lru_cache(maxsize=1 << 17)
def _parts(dictionary: str, word: str) -> tuple[str, ...]:
    breaks = _hyphenator(dictionary).positions(word)
    heads = [word[:at] for at in breaks if at >= MIN_PART]
    tails = [word[at:] for at in breaks if len(word) - at >= MIN_PART]
    return tuple(dict.fromkeys(heads + tails))


@lru_cache(maxsize=16)
def _hyphenator(dictionary: str) -> object:
    import pyphen

    with _lock:  # pyphen reads and compiles its dictionary on first use
        return pyphen.Pyphen(lang=dictionary, left=1, right=1)
