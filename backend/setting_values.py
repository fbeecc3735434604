"""What single settings accept beyond a plain type: an entry of SENSITIVE_CATEGORIES, a share between 0 and
1, a comma-separated list, an API key a header can carry, a browser origin, an empty value that means unset.
Used by the settings class (config.py), which stays one list of the settings.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from backend.domain.text.sensitivity import DEFAULT_CATEGORIES

# optional settings where an empty value (`QDRANT_URL=` in .env or compose) means unset
BLANK_IS_UNSET = (
    "qdrant_url", "qdrant_api_key", "api_key", "embedding_model", "embedding_dimension", "embedding_api_key",
    "qdrant_shard_number", "qdrant_replication_factor", "qdrant_write_consistency_factor", "onnx_model_dir",
    "model_cache_dir", "onnx_threads", "onnx_query_threads",
)  # fmt: skip
_HEADER_TOKEN = re.compile(r"[\x21-\x7e]+")
_ORIGIN = re.compile(r"https?://[^/\s?#]+")


class SensitiveCategorySetting(BaseModel):
    """One entry of SENSITIVE_CATEGORIES (see backend/domain/text/sensitivity.py for the matching rules)."""

    model_config = ConfigDict(extra="forbid")  # a misspelt "word" must not silently match nothing

    tags: list[str] = Field(default_factory=list, description="Note tags, nested ones included.")
    words: list[str] = Field(default_factory=list, description="Words or phrases in the text.")
    headings: list[str] = Field(default_factory=list, description="Section names the text sits under.")


def default_categories() -> dict[str, SensitiveCategorySetting]:
    return {
        c.name: SensitiveCategorySetting(tags=list(c.tags), words=list(c.words), headings=list(c.headings))
        for c in DEFAULT_CATEGORIES
    }


def share(default: float, description: str) -> Any:
    """A setting that is a weight between 0 and 1."""
    return Field(default, ge=0.0, le=1.0, description=description)


def split_list(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


def header_token(value: str | None) -> str | None:
    # a header carries visible ASCII: a key with spaces or accents could never be sent back as set
    if value is not None and not _HEADER_TOKEN.fullmatch(value):
        raise ValueError("must be visible ASCII characters without spaces")
    return value


def browser_origins(value: list[str]) -> list[str]:
    # browsers send `scheme://host[:port]`: a path or a trailing slash would never match any of them
    for origin in value:
        if origin != "*" and not _ORIGIN.fullmatch(origin):
            raise ValueError(f"{origin!r} is not an origin like http://localhost:3000 (no path)")
    return value


def named_folder(value: object) -> object:
    """An empty folder setting refused: read as a path it is the working folder, where `VAULT_PATH=` left
    blank in a .env indexed whatever folder the service started in, and `DATA_DIR=` wrote the index there."""
    if isinstance(value, str) and not value.strip():
        raise ValueError("empty: name a folder, or leave the setting out for its default")
    return value


def absolute_path(value: Path) -> Path:
    """One spelling per vault (~, .., symlinks): it names its data dir and is recorded in its index."""
    return value.expanduser().resolve()


def upper_text(value: object) -> object:
    return value.upper() if isinstance(value, str) else value
