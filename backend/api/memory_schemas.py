"""Bodies of POST/GET/DELETE /memory."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.api import examples
from backend.domain.notes.memory import MAX_KEY_CHARS, MAX_VALUE_CHARS

_FACT = examples.FACT
# What backend.domain.notes.memory checks (with a clearer message than a pattern's), said in the schema: some
# text, and none of / \ or a control character.
KEY_PATTERN = r"^[^/\\\x00-\x1f\x7f]*[^/\\\x00-\x1f\x7f\s][^/\\\x00-\x1f\x7f]*$"


class MemoryIn(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{k: _FACT[k] for k in ("key", "value", "source")}]},
    )

    key: str = Field(
        min_length=1,
        max_length=MAX_KEY_CHARS,
        json_schema_extra={"pattern": KEY_PATTERN},
        description="A name for the fact; storing the same key again replaces it. No '/', '\\\\' or control "
        "characters.",
    )
    value: str = Field(
        min_length=1,
        max_length=MAX_VALUE_CHARS,
        json_schema_extra={"pattern": r"\S"},
        description="The fact itself (some text).",
    )
    source: str = Field(
        description="The indexed note the fact comes from, named as a note read takes it: its vault-relative "
        "path (`.md` may be left out), or its title or alias when one note answers to it. The fact keeps "
        "the note's path."
    )
    vault: str | None = Field(
        None,
        max_length=48,
        description="The vault of `source` (VAULTS); needed only when several vaults hold that path. The "
        "fact is kept with that vault's memory.",
    )


class MemoryOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [_FACT]})

    key: str
    value: str = Field(description="The fact, secrets redacted.")
    source: str
    vault: str = Field("", description="The vault of the source note (its VAULTS name).")
    source_exists: bool = Field(description="False once the source note has left the vault (or the index).")
    created_at: datetime
    updated_at: datetime
    sensitive_categories: list[str]
    redactions: int = Field(description="Secrets replaced by [REDACTED:kind] in value.")
    score: float | None = Field(
        None, description="Relevance to the query (search results only; RRF or BM25)."
    )


class MemoryStored(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"fact": _FACT, "created": True}]})

    fact: MemoryOut
    created: bool = Field(
        description="True for a new key (201), False when an existing fact was replaced (200)."
    )


class MemoryListOut(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [{"facts": [_FACT], "total": 1, "limit": 100, "offset": 0, "next_offset": None}]
        }
    )

    facts: list[MemoryOut] = Field(description="By key.")
    total: int
    limit: int
    offset: int
    next_offset: int | None = None


class MemoryDeleted(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{"key": "sreenivas-balance", "deleted": True}]})

    key: str
    deleted: bool


class MemorySuggestionOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.MEMORY_SUGGESTION]})

    key: str = Field(
        description="A key for POST /memory (kb_remember): the note's name and the kind of fact."
    )
    value: str = Field(
        description="The fact as the note states it (one sentence, secrets never), with the note's title and "
        "the line's date when the sentence does not say them."
    )
    source: str = Field(description="Vault-relative path of the note: the `source` to remember it with.")
    vault: str = Field(
        "",
        description="The vault of the note (its VAULTS name; VAULT_NAME with one): the `vault` to remember "
        "it with, so that a path several vaults hold ties the fact to this vault's note.",
    )
    start_line: int = Field(description="The note's line the fact is on (as in search hits).")
    end_line: int
    kind: Literal["money_owed", "health", "commitment"] = Field(
        description="money_owed (who owes whom how much), health (a diagnosis, medication, allergy or dose) "
        "or commitment (promised, agreed, committed to)."
    )
    confidence: float = Field(description="The confidence of the search hit it comes from.")
