"""Sensitive categories (health, finance, relationships...) a text touches: an agent can ask before showing.

A category matches a piece of a note when any of these holds:

* `tags`: the note has the tag, or a nested one under it (`health` matches `#health` and `#health/sleep`),
  case-insensitively, with or without the "#";
* `words`: a word or phrase occurs in the text, compared the way the keyword index folds words (case and
  accents), with the word's own English inflections: "owe" matches "owes", "owed" and "owing", "therapy"
  "therapies"; a phrase matches its words in a row (stop words aside), its last word inflected. Not by stem:
  "dating" must not match every "date", nor "separation" "separately";
* `headings`: a section name occurs (as words, the same way) in one of the headings the text sits under.

Categories are configuration (SENSITIVE_CATEGORIES); the defaults below cover health, finance and
relationships.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from backend.domain.text.sparse import fold, tokenize


@dataclass(frozen=True, slots=True)
class SensitiveCategory:
    name: str
    tags: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    headings: tuple[str, ...] = ()


DEFAULT_CATEGORIES: tuple[SensitiveCategory, ...] = (
    SensitiveCategory(
        "health",
        tags=("health", "mentalhealth", "mental-health", "medical", "therapy", "physio", "medication"),
        words=(
            "therapy", "therapist", "diagnosis", "diagnoses", "diagnosed", "medication", "prescription",
            "symptom", "depression", "anxiety", "psychiatrist", "psychologist", "surgery", "mental health",
            "blood test", "antidepressant", "panic attack",
        ),
        headings=("health", "therapy", "medical", "medication", "symptoms", "diagnosis"),
    ),
    SensitiveCategory(
        "finance",
        tags=("finance", "money", "budget", "tax", "taxes", "debt", "ledger", "banking", "salary"),
        words=(
            "owe", "debt", "loan", "lent", "borrow", "salary", "mortgage", "bank account", "credit card",
            "iban", "tax return", "overdraft", "net worth",
        ),
        headings=("finance", "budget", "balance", "ledger", "salary", "debts", "loans"),
    ),
    SensitiveCategory(
        "relationships",
        tags=("relationships", "relationship", "dating", "family", "love"),
        words=(
            "divorce", "breakup", "affair", "dating", "girlfriend", "boyfriend", "couples therapy",
            "marriage counselling", "separation", "ex-wife", "ex-husband",
        ),
        headings=("relationship", "relationships", "dating", "marriage"),
    ),
)  # fmt: skip


def inflections(word: str) -> frozenset[str]:
    """A folded word and its regular English inflections (plural, past, -ing)."""
    forms = {word, f"{word}s", f"{word}es", f"{word}ed", f"{word}ing"}
    if word.endswith("e"):
        forms |= {f"{word}d", f"{word[:-1]}ing"}
    if word.endswith("y") and len(word) > 2:
        forms |= {f"{word[:-1]}ies", f"{word[:-1]}ied"}
    return frozenset(forms)


@lru_cache(maxsize=1024)
def _phrase(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """A configured word or phrase: its words but the last, and the forms of the last one."""
    words = tokenize(text)
    if not words:
        return (), frozenset()
    return tuple(words[:-1]), inflections(words[-1])


def _has_phrase(terms: Sequence[str], term_set: set[str], text: str) -> bool:
    head, last = _phrase(text)
    if not last or not last & term_set:
        return False
    if not head:
        return True
    width = len(head)
    return any(
        tuple(terms[i : i + width]) == head and terms[i + width] in last for i in range(len(terms) - width)
    )


def _tag_matches(note_tags: Iterable[str], wanted: Iterable[str]) -> bool:
    have = [t.lstrip("#").casefold() for t in note_tags]
    for tag in wanted:
        tag = tag.lstrip("#").casefold()
        if any(t == tag or t.startswith(tag + "/") for t in have):
            return True
    return False


def sensitive_categories(
    categories: Sequence[SensitiveCategory],
    text: str,
    *,
    tags: Iterable[str] = (),
    headings: Iterable[str] = (),
) -> list[str]:
    """Names of the categories `text` (with its note's `tags`, under `headings`) touches, in config order."""
    if not categories:
        return []
    tags = list(tags)
    folded = fold(text)
    terms: list[str] | None = None  # tokenized only when some configured word may occur: most text has none
    term_set: set[str] = set()
    heading_terms = [tokenize(h) for h in headings]
    found = []
    for category in categories:
        if _tag_matches(tags, category.tags) or any(
            _has_phrase(h, set(h), name) for h in heading_terms for name in category.headings
        ):
            found.append(category.name)
            continue
        if not any((stem := _stem_of(word)) is not None and stem in folded for word in category.words):
            continue
        if terms is None:
            terms = tokenize(text)
            term_set = set(terms)
        if any(_has_phrase(terms, term_set, word) for word in category.words):
            found.append(category.name)
    return found


@lru_cache(maxsize=1024)
def _stem_of(word: str) -> str | None:
    """What every inflection of a configured word's last word starts with: a text without it as a substring
    cannot match the word (a cheap test before tokenizing; may be empty, which rules nothing out). None for a
    word of stop words only, which matches nothing."""
    _, last = _phrase(word)
    if not last:
        return None
    # The common prefix of a set of strings is that of its smallest and largest in sorted order.
    first, final = min(last), max(last)
    size = 0
    while size < len(first) and first[size] == final[size]:
        size += 1
    return first[:size]
