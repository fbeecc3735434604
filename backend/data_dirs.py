"""Where a vault's data lives: when DATA_DIR is unset a folder of its own under ./data, named so a person
tells which vault it belongs to, and inside it the embedded store; where built models are kept. Settings
derive DATA_DIR and those folders from here; the CLI reads which vault a data dir's index belongs to here."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

DATA_ROOT = Path("data")  # relative to the working directory, as `make run` starts the service
DEFAULT_VAULT_NAME = "obsidian"  # the collection names before VAULT_NAME existed: obsidian_chunks, ...


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


def store_dir(data_dir: Path, vault_name: str, vault: Path | None = None) -> Path:
    """The embedded store: `DATA_DIR/qdrant` for the default vault name (as before names existed),
    `DATA_DIR/qdrant-<VAULT_NAME>` for any other. When none is there yet, a store of the data dir recorded
    as `vault`'s under the other name is this vault's: a vault named in VAULTS beside a second one keeps the
    index it had alone (its data dir is the same, its name is not), and back again; only an index recorded
    as this very vault's is taken, never another vault's."""
    named = data_dir / ("qdrant" if vault_name == DEFAULT_VAULT_NAME else f"qdrant-{vault_name}")
    if vault is None or named.exists() or not data_dir.is_dir():
        return named
    owner = str(vault.expanduser().resolve())  # as the index records it
    kept = sorted(p for p in data_dir.glob("qdrant*") if p.is_dir() and recorded_vault(p) == owner)
    return kept[0] if kept else named


def records_suffix(store: Path) -> str:
    """What the records kept beside a store (its last job, its fitted recall gate) add to their names: ""
    beside `DATA_DIR/qdrant`, "-<name>" beside `DATA_DIR/qdrant-<name>`. Named as the store is, they follow
    it: vaults sharing a data dir keep their own, and a vault named in VAULTS that kept the store it had
    alone keeps its records too."""
    return store.name.removeprefix("qdrant")


def models_dir(data_dir: Path) -> Path:
    """Where built graphs were kept before MODEL_CACHE_DIR, still read, and written when the shared
    cache is not writable: the data dirs under ./data share `data/models`, any other DATA_DIR has its
    own."""
    data, root = data_dir.resolve(), DATA_ROOT.resolve()
    return root / "models" if root in (data, data.parent) else data_dir / "models"


def model_cache(model_cache_dir: Path | None, data_dir: Path) -> Path:
    """MODEL_CACHE_DIR, or the user's cache folder (XDG_CACHE_HOME, else ~/.cache)."""
    if model_cache_dir is not None:
        return model_cache_dir.expanduser()
    root = os.environ.get("XDG_CACHE_HOME", "").strip()
    if root and Path(root).is_absolute():
        return Path(root) / "knowledge-bridge" / "models"
    try:
        return Path.home() / ".cache" / "knowledge-bridge" / "models"
    except RuntimeError:  # no home folder known (a bare container user): the data dir's own
        return models_dir(data_dir)


def embedding_cache(cache_dir: Path | None, data_dir: Path) -> Path:
    """The embedding cache file: in EMBEDDING_CACHE_DIR, or beside the model cache in the user's cache
    folder (XDG_CACHE_HOME, else ~/.cache: `knowledge-bridge/embeddings.sqlite3`), one for every vault and
    data dir of the user on this machine, so a rebuild, a wiped data dir or another vault holding the same
    text never embeds it again; the data dir's own when no home folder is known."""
    if cache_dir is not None:
        return cache_dir.expanduser() / "embeddings.sqlite3"
    root = os.environ.get("XDG_CACHE_HOME", "").strip()
    if root and Path(root).is_absolute():
        return Path(root) / "knowledge-bridge" / "embeddings.sqlite3"
    try:
        return Path.home() / ".cache" / "knowledge-bridge" / "embeddings.sqlite3"
    except RuntimeError:
        return vault_embedding_cache(data_dir)


def vault_embedding_cache(data_dir: Path) -> Path:
    """Where a data dir kept its own embedding cache before the shared one: still read."""
    return data_dir / "embedding_cache.sqlite3"
