"""The qdrant-edge index catalog (`EdgeIndexCatalog`): generations as shard folders under one root directory,
default base "obsidian"::

    g0                      root/obsidian_chunks  root/obsidian_notes  root/obsidian_links
    gN                      root/gN/obsidian_chunks  root/gN/obsidian_notes  root/gN/obsidian_links
    active generation       root/active_generation.json   {"active": "gN"}
    last name handed out    root/generation_counter.json  {"last_issued": N}

Both files are replaced atomically (temp file, fsync, os.replace, fsync of the directory), so after a crash
the pointer names the old or the new generation. Without a pointer the legacy directories, when present,
make "g0" the active generation. The graph store's shards have fixed names, so for another base the shards
inside a generation keep their names and the base names the directory and the files instead:
`root/<base>-gN/`, `root/<base>-active_generation.json`, `root/<base>-generation_counter.json`. Only the
default base has a legacy g0. `drop` refuses (IndexUnavailableError) while any shard of the generation is
open, in this process or another: its files would vanish under the reader.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from backend.domain.errors import IndexCorruptedError
from backend.infrastructure.disk_space import DiskGuard
from backend.infrastructure.durable_files import write_json_durably
from backend.infrastructure.index_catalog.generations import (
    ISSUED_KEY,
    LEGACY,
    OWNER_KEY,
    GenerationCatalog,
    checked_base,
    generation_number,
)
from backend.infrastructure.qdrant.chunk_store import PAYLOAD_CACHE_MB, QdrantChunkStore
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from backend.infrastructure.qdrant.edge_errors import edge_errors_mapped, ensure_edge_shard_free
from backend.infrastructure.qdrant.engine import (
    CHUNKS_COLLECTION,
    DEFAULT_BASE,
    LINKS_COLLECTION,
    NOTES_COLLECTION,
)
from backend.infrastructure.qdrant.graph_store import QdrantGraphStore

POINTER_FILE = "active_generation.json"
COUNTER_FILE = "generation_counter.json"
OWNER_FILE = "vault.json"  # which vault the index belongs to: {"vault": "/abs/path"}

_EDGE_SHARDS = (CHUNKS_COLLECTION, NOTES_COLLECTION, LINKS_COLLECTION)
_ACTIVE_KEY = "active"


class EdgeIndexCatalog(GenerationCatalog):
    def __init__(
        self,
        root: Path,
        *,
        base: str = DEFAULT_BASE,
        min_free_bytes: int = 0,
        cache_mb: int = PAYLOAD_CACHE_MB,
    ) -> None:
        super().__init__()
        self._cache_mb = cache_mb
        self._root = Path(root)
        self._guard = DiskGuard(self._root, min_free_bytes)
        self._base = checked_base(base)
        self._prefix = "" if base == DEFAULT_BASE else f"{base}-"
        self._generation_dir = re.compile(re.escape(self._prefix) + r"g([1-9][0-9]*)")

    def keep_free(self, min_free_bytes: int) -> None:
        """Refuse writes below this much free disk from now on (MIN_FREE_DISK_MB, as a running service's
        disk fills or gets room again)."""
        self._guard.keep_free(min_free_bytes)

    def active(self) -> str | None:
        with edge_errors_mapped("read the active index generation"):
            pointer = _read_json(self._root / f"{self._prefix}{POINTER_FILE}")
        if pointer is not None:
            generation = pointer.get(_ACTIVE_KEY)
            try:
                generation_number(generation)
            except ValueError:
                raise _damaged(self._root / f"{self._prefix}{POINTER_FILE}") from None
            return str(generation)
        return LEGACY if self._has_legacy() and self._any_shard(LEGACY) else None

    def close(self) -> None:
        """Nothing to release: the stores it opened hold the shards."""

    def generation_dir(self, generation: str) -> Path:
        """The directory holding the generation's shards (the root itself for the legacy g0)."""
        self._check_name(generation)
        return self._root if generation == LEGACY else self._root / f"{self._prefix}{generation}"

    def _check_name(self, generation: str) -> None:
        if generation_number(generation) == 0 and not self._has_legacy():
            raise ValueError(f"the index base {self._base!r} has no legacy generation {LEGACY!r}")

    def _has_legacy(self) -> bool:
        return self._base == DEFAULT_BASE

    def _shard_dirs(self, generation: str) -> list[Path]:
        directory = self.generation_dir(generation)
        return [directory / name for name in _EDGE_SHARDS]

    def _any_shard(self, generation: str) -> bool:
        return any(path.is_dir() for path in self._shard_dirs(generation))

    def _stores(self, generation: str) -> tuple[QdrantChunkStore, QdrantGraphStore]:
        directory = self.generation_dir(generation)
        return (
            QdrantChunkStore(
                EdgeEngine(directory, guard=self._guard), CHUNKS_COLLECTION, cache_mb=self._cache_mb
            ),
            QdrantGraphStore(EdgeEngine(directory, guard=self._guard)),
        )

    def _present(self) -> set[int]:
        found: set[int] = set()
        with edge_errors_mapped("list the index generations"):
            if self._has_legacy() and self._any_shard(LEGACY):
                found.add(0)
            if self._root.is_dir():
                for entry in self._root.iterdir():
                    match = self._generation_dir.fullmatch(entry.name)
                    if match and entry.is_dir() and self._any_shard(f"g{match.group(1)}"):
                        found.add(int(match.group(1)))
        return found

    def _complete(self, generation: str) -> bool:
        return all(path.is_dir() for path in self._shard_dirs(generation))

    def _switch(self, generation: str) -> None:
        with edge_errors_mapped("switch the active index generation"):
            write_json_durably(self._root / f"{self._prefix}{POINTER_FILE}", {_ACTIVE_KEY: generation})

    def _remove(self, generation: str) -> None:
        with edge_errors_mapped(f"drop the index generation {generation}"):
            shards = [path for path in self._shard_dirs(generation) if path.exists()]
            for shard in shards:  # all checked before any is deleted
                ensure_edge_shard_free(shard)
            if generation == LEGACY:  # its shards sit in the root, beside everything else
                for shard in shards:
                    shutil.rmtree(shard)
            elif self.generation_dir(generation).exists():
                shutil.rmtree(self.generation_dir(generation))

    def _last_issued(self) -> int:
        path = self._root / f"{self._prefix}{COUNTER_FILE}"
        with edge_errors_mapped("read the index generation counter"):
            record = _read_json(path)
        if record is None:
            return 0
        number = record.get(ISSUED_KEY)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise _damaged(path)
        return number

    def _set_last_issued(self, number: int) -> None:
        with edge_errors_mapped("record the index generation counter"):
            write_json_durably(self._root / f"{self._prefix}{COUNTER_FILE}", {ISSUED_KEY: number})

    def vault_owner(self) -> str | None:
        path = self._root / f"{self._prefix}{OWNER_FILE}"
        with edge_errors_mapped("read which vault the index belongs to"):
            record = _read_json(path)
        owner = record.get(OWNER_KEY) if record is not None else None
        if record is not None and not isinstance(owner, str):
            raise _damaged(path)
        return owner

    def record_vault_owner(self, vault: str) -> None:
        with edge_errors_mapped("record which vault the index belongs to"):
            write_json_durably(self._root / f"{self._prefix}{OWNER_FILE}", {OWNER_KEY: vault})

    def describe(self) -> str:
        return str(self._root)


def _read_json(path: Path) -> dict[str, Any] | None:
    """The file's object, None when there is no file; IndexCorruptedError when it is not a JSON object."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise _damaged(path) from None
    try:
        record = json.loads(text)
    except ValueError:
        record = None
    if not isinstance(record, dict):
        raise _damaged(path)
    return record


def _damaged(path: Path) -> IndexCorruptedError:
    return IndexCorruptedError(f"the index catalog file {path} is damaged")
