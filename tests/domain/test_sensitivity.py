from __future__ import annotations

import pytest

from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.sensitivity import DEFAULT_CATEGORIES, SensitiveCategory, sensitive_categories


@pytest.mark.parametrize(
    ("text", "tags", "headings", "expected"),
    [
        ("As of March: I owe Sreenivas €79.50.", (), (), ["finance"]),
        ("He owed me money", (), (), ["finance"]),  # stemmed: owe / owed / owing
        ("Therapy continues privately at €85 a session.", (), (), ["health", "finance"][:1]),
        ("Pay the rent", ("Finance/Ledger",), (), ["finance"]),  # nested tag, any case
        ("Slept badly", ("#mentalhealth",), (), ["health"]),
        ("Slept badly", ("health/sleep",), (), ["health"]),
        ("Slept badly", ("healthy-recipes",), (), []),  # a tag is a whole name
        ("Call on Sunday", (), ("Family", "Dating"), ["relationships"]),  # a section name
        ("Talked about the divorce and my salary", (), (), ["finance", "relationships"]),
        ("We booked a credit card for the trip", (), (), ["finance"]),  # a phrase
        ("The card was credited", (), (), []),  # not the phrase: words not in a row
        ("Tomato rasam with tamarind", ("recipe",), ("Method",), []),
        ("Cutover date: Saturday 18 April", (), (), []),  # "dating" is not "date"
        ("We keep the services separately deployed", (), (), []),  # "separation" is not "separately"
        ("She is owing me, he owes me, they owed me", (), (), ["finance"]),
        ("Two therapies were tried; symptoms eased", (), (), ["health"]),
        ("I borrowed €50 from Tomasz", (), (), ["finance"]),
        ("Our credit cards are maxed", (), (), ["finance"]),  # a phrase, its last word inflected
    ],
)
def test_default_categories(text: str, tags: tuple, headings: tuple, expected: list[str]) -> None:
    assert sensitive_categories(DEFAULT_CATEGORIES, text, tags=tags, headings=headings) == expected


def test_categories_are_configuration() -> None:
    custom = (SensitiveCategory("legal", words=("lawsuit", "court date"), headings=("Case notes",)),)
    assert sensitive_categories(custom, "The court date is set") == ["legal"]
    assert sensitive_categories(custom, "x", headings=["Work > Case notes"]) == ["legal"]
    assert sensitive_categories(custom, "I owe money") == []
    assert sensitive_categories((), "I owe money", tags=["finance"]) == []


def test_the_policy_can_leave_secrets_in_place() -> None:
    assert ContentPolicy(redact=False).clean("password: hunter2").text == "password: hunter2"
    assert ContentPolicy().clean("password: hunter2").text == "password: [REDACTED:password]"


def test_a_word_whose_forms_share_no_prefix_still_matches() -> None:
    # "x" -> x, xs, xed, ... but "e" -> e, ed, ..., "ing": nothing every form starts with to look for first
    custom = (SensitiveCategory("grades", words=("e",)), SensitiveCategory("vitamins", words=("vitamin e",)))
    assert sensitive_categories(custom, "Got an E in chemistry") == ["grades"]
    assert sensitive_categories(custom, "Took vitamin E daily") == ["grades", "vitamins"]
    assert sensitive_categories(custom, "Took vitamin D daily") == []
