"""Remembered facts: what an agent asked the service to keep, each tied to the vault note it came from."""

from __future__ import annotations

import re
from dataclasses import dataclass

from backend.domain.errors import InvalidRequestError

MAX_KEY_CHARS = 128
MAX_VALUE_CHARS = 4000
# A key travels in a URL path (DELETE /memory/{key}): no slash, backslash or control character.
_BAD_KEY_CHAR = re.compile(r"[/\\\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class MemoryRecord:
    key: str
    value: str
    source: str  # vault-relative path of the note the fact comes from
    created_at: float  # epoch seconds
    updated_at: float
    dense_ready: bool = True  # False: stored without a dense vector (the embedder was down); found by words


def memory_key(key: str) -> str:
    """The key as stored (surrounding spaces dropped), or InvalidRequestError."""
    cleaned = _some_text("key", key, MAX_KEY_CHARS)
    if _BAD_KEY_CHAR.search(cleaned):
        raise InvalidRequestError("key: no slash, backslash or control character")
    return cleaned


def memory_value(value: str) -> str:
    return _some_text("value", value, MAX_VALUE_CHARS)


def _some_text(field: str, text: str, most: int) -> str:
    """`text` without surrounding spaces, holding 1 to `most` characters, or InvalidRequestError naming
    `field`."""
    cleaned = text.strip()
    if not cleaned:
        raise InvalidRequestError(f"{field}: must contain some text")
    if len(cleaned) > most:
        raise InvalidRequestError(f"{field}: at most {most} characters")
    return cleaned


def memory_text(record: MemoryRecord) -> str:
    """What is embedded for a fact: its key (words) and its value."""
    return f"{key_words(record.key)}: {record.value}"


def key_words(key: str) -> str:
    """`sreenivas_balance` / `sreenivas-balance` -> `sreenivas balance`, so a key's words can be searched."""
    return re.sub(r"[_\-.:]+", " ", key).strip()
