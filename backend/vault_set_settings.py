"""VAULTS: the vaults one service serves, by short name (issue 46). Its own module so config.py, the one list
of settings, stays within its size; Settings inherits this class as it inherits the embedding server's.

Unset, the service serves the one vault of VAULT_PATH and VAULT_NAME, exactly as before VAULTS existed.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

from pydantic import Field, PrivateAttr, field_validator
from pydantic_settings import BaseSettings, NoDecode

VAULT_KEY = re.compile(r"[a-z0-9_-]+")  # a short name: in URLs, answers and data dir names as it is
# the same limit VAULT_NAME has, which each vault's short name becomes (its index's name)
MAX_KEY_CHARS = 48


def parse_vaults(value: object) -> object:
    """`work=/home/a/Work,personal=/home/a/Notes` (or a list of such pairs) as an ordered {name: path}.
    A name given twice is an error here: a dict would keep the last one silently."""
    if isinstance(value, str):
        value = [part for part in value.split(",") if part.strip()]
    if not isinstance(value, list | tuple):
        return value
    pairs: dict[str, str] = {}
    for entry in value:
        name, sep, path = str(entry).partition("=")
        name, path = name.strip(), path.strip()
        if not sep or not name or not path:
            raise ValueError(f"{str(entry).strip()!r} is not name=path (e.g. work=/home/me/Work)")
        if name in pairs:
            raise ValueError(f"the name {name!r} is given twice")
        pairs[name] = path
    return pairs


def check_vaults(vaults: dict[str, Path]) -> dict[str, Path]:
    """Names `[a-z0-9_-]+`; paths absolute (after `~`), distinct, and none inside another: a note in two
    vaults at once would be indexed twice and its changes watched twice."""
    checked: dict[str, Path] = {}
    for name, path in vaults.items():
        if not VAULT_KEY.fullmatch(name) or len(name) > MAX_KEY_CHARS:
            raise ValueError(
                f"the name {name!r} must be lowercase letters, digits, '_' or '-' (at most {MAX_KEY_CHARS})"
            )
        expanded = Path(path).expanduser()
        if not expanded.is_absolute():
            raise ValueError(f"the path of {name!r} must be absolute (got {str(path)!r})")
        checked[name] = expanded
    resolved = {name: path.resolve() for name, path in checked.items()}
    names = list(resolved)
    for i, first in enumerate(names):
        for second in names[i + 1 :]:
            a, b = resolved[first], resolved[second]
            if a == b:
                raise ValueError(f"{first!r} and {second!r} are the same folder ({a})")
            if a.is_relative_to(b) or b.is_relative_to(a):
                inner, outer = (first, second) if a.is_relative_to(b) else (second, first)
                raise ValueError(f"the vault {inner!r} lies inside the vault {outer!r}")
    return checked


class VaultSetSettings(BaseSettings):
    vaults: Annotated[dict[str, Path], NoDecode] = Field(
        default_factory=dict,
        description="Several vaults served at once, comma-separated `name=path` pairs "
        "(`work=/home/me/Work,personal=/home/me/Notes`): names of lowercase letters, digits, _ and -; "
        "absolute paths, none inside another. Each vault keeps its own index, watcher, jobs and data dir "
        "(`DATA_DIR/<name>` when DATA_DIR is set, else its own folder under ./data), and VAULT_NAME is its "
        "name; requests take `vault`/`vaults`. Unset: the one vault of VAULT_PATH, as before.",
    )

    # set on each vault's own settings when VAULTS names it (vault_set.vault_settings): its VAULT_NAME is
    # then the short name of VAULTS, and Obsidian still knows the vault by its folder's name
    _one_of_vaults: bool = PrivateAttr(False)

    _parsed = field_validator("vaults", mode="before")(parse_vaults)
    _checked = field_validator("vaults")(check_vaults)
