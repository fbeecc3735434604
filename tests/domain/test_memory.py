"""What a remembered fact's key and value may hold (the API answers 422 with these messages)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from backend.domain.errors import InvalidRequestError
from backend.domain.notes.memory import MAX_KEY_CHARS, MAX_VALUE_CHARS, key_words, memory_key, memory_value

Check = Callable[[str], str]


@pytest.mark.parametrize(
    ("check", "given", "kept"),
    [
        (memory_key, "  sreenivas-balance ", "sreenivas-balance"),
        (memory_key, "k" * MAX_KEY_CHARS, "k" * MAX_KEY_CHARS),
        (memory_value, "\tI owe Sreenivas €79.50.\n", "I owe Sreenivas €79.50."),
        (memory_value, "v" * MAX_VALUE_CHARS, "v" * MAX_VALUE_CHARS),
    ],
)
def test_surrounding_spaces_are_dropped_up_to_the_length_cap(check: Check, given: str, kept: str) -> None:
    assert check(given) == kept


@pytest.mark.parametrize(
    ("check", "given", "message"),
    [
        (memory_key, "", "key: must contain some text"),
        (memory_key, "   ", "key: must contain some text"),
        (memory_key, "k" * (MAX_KEY_CHARS + 1), f"key: at most {MAX_KEY_CHARS} characters"),
        (memory_key, "a/b", "key: no slash, backslash or control character"),
        (memory_key, "a\\b", "key: no slash, backslash or control character"),
        (memory_key, "a\x00b", "key: no slash, backslash or control character"),
        (memory_value, " \n ", "value: must contain some text"),
        (memory_value, "v" * (MAX_VALUE_CHARS + 1), f"value: at most {MAX_VALUE_CHARS} characters"),
    ],
)
def test_a_bad_key_or_value_is_refused_naming_the_field(check: Check, given: str, message: str) -> None:
    with pytest.raises(InvalidRequestError) as refused:
        check(given)
    assert refused.value.detail == message


def test_a_key_s_words_can_be_searched() -> None:
    assert key_words("sreenivas_balance") == key_words("sreenivas-balance") == "sreenivas balance"
