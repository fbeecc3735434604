"""Where a vault's data lives when DATA_DIR is unset: a folder of its own under ./data, named so a person
tells which vault it belongs to. Settings derive DATA_DIR from here; the CLI reads which vault a data dir's
index belongs to from here."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

DATA_ROOT = Path("data")  # relative to the working directory, as `make run` starts the service


def vault_data_dir(vault: Path) -> Path:
    """The data directory a vault gets when DATA_DIR is unset: its own folder under ./data, named after the
    vault's folder plus 8 hex digits of its absolute path (two vaults both called `notes` differ), e.g.
    `data/example-vault-1f2e3d4c`. An index from before per-vault folders, in `data/` itself and recorded as
    this vault's, stays where it is: `data`."""
    if recorded_vault(DATA_ROOT / "qdrant") == str(vault):
        return DATA_ROOT
    return DATA_ROOT / vault_folder(vault)


def vault_folder(vault: Path) -> str:
    """`<vault folder>-<8 hex digits of its absolute path>`: a person tells vaults apart by the first part,
    and two vaults of the same folder name (two `notes`) still differ."""
    name = re.sub(r"[^\w.-]+", "-", vault.name).strip(".-")[:40] or "vault"
    return f"{name}-{hashlib.sha256(str(vault).encode()).hexdigest()[:8]}"


def recorded_vault(store: Path) -> str | None:
    """The vault an embedded index says it belongs to (the catalog's `vault.json` in its store folder,
    backend/infrastructure/index_catalog/edge.py); None when it says none."""
    try:
        owner = json.loads((store / "vault.json").read_text(encoding="utf-8")).get("vault")
    except (OSError, ValueError, AttributeError):
        return None
    return owner if isinstance(owner, str) else None
