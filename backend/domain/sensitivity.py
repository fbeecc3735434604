"""Sensitive categories (health, finance, relationships...) a text touches: an agent can ask before showing.

A category matches a piece of a note when any of these holds:

* `tags`: the note has the tag, or a nested one under it (`health` matches `#health` and `#health/sleep`),
  case-insensitively, with or without the "#";
* `words`: a word or phrase occurs in the text, compared the way the keyword index compares words (case and
  accents folded, English stemming: "owe" matches "owed" and "owing"; a phrase matches its words in a row,
  stop words aside);
* `headings`: a section name occurs (as words, the same way) in one of the headings the text sits under.

Categories are configuration (SENSITIVE_CATEGORIES); the defaults below cover health, finance and
relationships.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from backend.domain.sparse import analyze


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
            "symptoms", "depression", "anxiety", "psychiatrist", "psychologist", "surgery", "mental health",
            "blood test", "antidepressant", "panic attack",
        ),
        headings=("health", "therapy", "medical", "medication", "symptoms", "diagnosis"),
    ),
    SensitiveCategory(
        "finance",
        tags=("finance", "money", "budget", "tax", "taxes", "debt", "ledger", "banking", "salary"),
        words=(
            "owe", "debt", "loan", "lent", "borrowed", "salary", "mortgage", "bank account", "credit card",
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


@lru_cache(maxsize=1024)
def _phrase(text: str) -> tuple[str, ...]:
    return tuple(analyze(text))


def _contains(terms: Sequence[str], phrase: tuple[str, ...]) -> bool:
    if not phrase:
        return False
    if len(phrase) == 1:
        return phrase[0] in terms
    width = len(phrase)
    return any(tuple(terms[i : i + width]) == phrase for i in range(len(terms) - width + 1))


def _has_phrase(terms: Sequence[str], term_set: set[str], phrase: tuple[str, ...]) -> bool:
    if len(phrase) == 1:
        return phrase[0] in term_set
    return _contains(terms, phrase)


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
    terms = analyze(text)
    term_set = set(terms)
    heading_terms = [analyze(h) for h in headings]
    found = []
    for category in categories:
        if (
            _tag_matches(tags, category.tags)
            or any(_has_phrase(terms, term_set, _phrase(word)) for word in category.words)
            or any(_contains(h, _phrase(name)) for h in heading_terms for name in category.headings)
        ):
            found.append(category.name)
    return found
