"""Index catalogs: which collection sets ("generations") of the index exist, which one serves, and the switch
from one to the next, so a rebuild fills a complete new set beside the serving one and swaps atomically.

Generation names. "g0" is the layout written before generations existed, still found in users' data; new
generations are "g1", "g2", ... in the order they were handed out. A persisted counter hands them out, and a
name is never handed out twice: not after a drop, a restart or a crashed build. A name is also past every
generation that has data, so the leftovers of a crashed build are never reused; they stay listed by
`generations()` until someone drops them, and whatever else lies under a new name (a directory a crash left
without shards) is removed when the name is handed out. The counter is guarded by a lock of this process
only: two processes handing out names from one catalog at the same moment could get the same name.

Edge (`EdgeIndexCatalog`: qdrant-edge shards under one root directory, default base "obsidian")::

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

Client (`ClientIndexCatalog`: a Qdrant server; local mode in tests), collection names from the base::

    g0                      collections obsidian_chunks, obsidian_notes, obsidian_links
    gN                      collections obsidian_chunks_gN, obsidian_notes_gN, obsidian_links_gN
    active generation       aliases obsidian_chunks, obsidian_notes, obsidian_links -> the *_gN collections
    last name handed out    one point in the payload-only collection obsidian_catalog

  `activate` switches the three aliases in one `update_collection_aliases` call, atomic on the server, and
  tools that address the plain names follow the switch. One-time window: an alias cannot share a
  collection's name, so the first activation after a legacy g0 deletes the g0 collections (chunks first)
  before it creates the aliases. Until that call returns, searches on still open g0 stores fail; a crash in
  between leaves g0 partly deleted (it then reads as needing a rebuild: its chunk collection, the one holding
  the index identity, went first) or gone (no active generation); the complete gN stays listed by
  `generations()`. The catalog shares one client between all stores it opens, and its `close()` closes it.

qdrant-client is imported only when a `ClientIndexCatalog` is used: it takes most of a second to import, and
the embedded (qdrant-edge) set-up never needs it.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import threading
from abc import ABC, abstractmethod
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from backend.application.ports import ChunkStore, GraphStore
from backend.domain.errors import IndexCorruptedError, StoreError
from backend.infrastructure.disk_space import DiskGuard
from backend.infrastructure.durable_files import write_json_durably
from backend.infrastructure.qdrant_chunk_store import QdrantChunkStore
from backend.infrastructure.qdrant_edge_engine import EdgeEngine, edge_errors_mapped, ensure_edge_shard_free
from backend.infrastructure.qdrant_engine import (
    CHUNKS_COLLECTION,
    DEFAULT_BASE,
    LINKS_COLLECTION,
    NOTES_COLLECTION,
    collection_name,
)
from backend.infrastructure.qdrant_graph_store import QdrantGraphStore

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from backend.infrastructure.qdrant_client_engine import CollectionOptions

LEGACY = "g0"
POINTER_FILE = "active_generation.json"
COUNTER_FILE = "generation_counter.json"
OWNER_FILE = "vault.json"  # which vault the index belongs to: {"vault": "/abs/path"}

_KINDS = ("chunks", "notes", "links")  # chunks first: deleting it first marks a set as needing a rebuild
_EDGE_SHARDS = (CHUNKS_COLLECTION, NOTES_COLLECTION, LINKS_COLLECTION)
_GENERATION = re.compile(r"g(0|[1-9][0-9]*)")
_BASE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_COUNTER_POINT = 1
_OWNER_POINT = 2
_OWNER_KEY = "vault"
_ACTIVE_KEY = "active"
_ISSUED_KEY = "last_issued"

log = logging.getLogger(__name__)


def generation_number(generation: str) -> int:
    """0 for "g0", N for "gN"; ValueError for anything else (a name must never reach a path unchecked)."""
    match = _GENERATION.fullmatch(generation) if isinstance(generation, str) else None
    if match is None:
        raise ValueError(f"not an index generation name: {generation!r}")
    return int(match.group(1))


def _checked_base(base: str) -> str:
    if not _BASE.fullmatch(base):
        raise ValueError(f"invalid index base name {base!r}: use letters, digits, '_' and '-'")
    return base


class _Catalog(ABC):
    """The rules both catalogs share; subclasses say where generations live and how the pointer moves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one name hand-out, switch or drop at a time in this process

    @abstractmethod
    def active(self) -> str | None: ...

    @abstractmethod
    def close(self) -> None: ...

    def open(self, generation: str) -> tuple[ChunkStore, GraphStore]:
        self._check_name(generation)
        return self._stores(generation)

    def new_generation(self) -> str:
        with self._lock:
            active = self._active_if_readable()
            taken = [self._issued_if_readable(), *self._present(), generation_number(active) if active else 0]
            number = max(taken) + 1
            self._set_last_issued(number)  # before anything is built under the name: it is spent now
            generation = f"g{number}"
            self._remove(generation)
            return generation

    def activate(self, generation: str) -> None:
        self._check_name(generation)
        with self._lock:
            if self._active_if_readable() == generation:
                return
            if not self._complete(generation):
                raise ValueError(f"index generation {generation!r} is missing some of its collections")
            self._switch(generation)

    def drop(self, generation: str) -> None:
        self._check_name(generation)
        with self._lock:
            if self.active() == generation:
                raise ValueError(f"index generation {generation!r} is active and cannot be dropped")
            self._remove(generation)

    def generations(self) -> list[str]:
        return [f"g{number}" for number in sorted(self._present())]

    def _active_if_readable(self) -> str | None:
        """The active generation, or None when the record of it is damaged: a rebuild then hands out a name
        past every generation present and its switch writes a sound record over the damaged one."""
        try:
            return self.active()
        except IndexCorruptedError as exc:
            log.warning("ignoring the damaged active-generation record: %s", exc.detail)
            return None

    def _issued_if_readable(self) -> int:
        try:
            return self._last_issued()
        except IndexCorruptedError as exc:  # names past every present generation are still new
            log.warning("ignoring the damaged generation counter: %s", exc.detail)
            return 0

    def _check_name(self, generation: str) -> None:
        generation_number(generation)

    # -- where generations live (subclasses) ------------------------------------------------------

    @abstractmethod
    def _stores(self, generation: str) -> tuple[ChunkStore, GraphStore]: ...

    @abstractmethod
    def _present(self) -> set[int]:
        """Numbers of the generations with any data."""

    @abstractmethod
    def _complete(self, generation: str) -> bool:
        """True when all three of the generation's collections exist."""

    @abstractmethod
    def _switch(self, generation: str) -> None:
        """Make the (complete) generation the active one, atomically and durably."""

    @abstractmethod
    def _remove(self, generation: str) -> None:
        """Delete whatever exists of the generation (nothing there is fine)."""

    @abstractmethod
    def _last_issued(self) -> int:
        """The number of the last generation name handed out (0: none yet)."""

    @abstractmethod
    def _set_last_issued(self, number: int) -> None: ...


# -- qdrant-edge -------------------------------------------------------------------------------------


class EdgeIndexCatalog(_Catalog):
    def __init__(self, root: Path, *, base: str = DEFAULT_BASE, min_free_bytes: int = 0) -> None:
        super().__init__()
        self._root = Path(root)
        self._guard = DiskGuard(self._root, min_free_bytes)
        self._base = _checked_base(base)
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
            QdrantChunkStore(EdgeEngine(directory, guard=self._guard), CHUNKS_COLLECTION),
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
        number = record.get(_ISSUED_KEY)
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise _damaged(path)
        return number

    def _set_last_issued(self, number: int) -> None:
        with edge_errors_mapped("record the index generation counter"):
            write_json_durably(self._root / f"{self._prefix}{COUNTER_FILE}", {_ISSUED_KEY: number})

    def vault_owner(self) -> str | None:
        path = self._root / f"{self._prefix}{OWNER_FILE}"
        with edge_errors_mapped("read which vault the index belongs to"):
            record = _read_json(path)
        owner = record.get(_OWNER_KEY) if record is not None else None
        if record is not None and not isinstance(owner, str):
            raise _damaged(path)
        return owner

    def record_vault_owner(self, vault: str) -> None:
        with edge_errors_mapped("record which vault the index belongs to"):
            write_json_durably(self._root / f"{self._prefix}{OWNER_FILE}", {_OWNER_KEY: vault})

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


# -- qdrant-client -----------------------------------------------------------------------------------


class ClientIndexCatalog(_Catalog):
    def __init__(
        self,
        client: QdrantClient,
        *,
        options: CollectionOptions | None = None,
        base: str = DEFAULT_BASE,
    ) -> None:
        super().__init__()
        self._client = client
        self._options = options
        self._base = _checked_base(base)
        self._aliases = tuple(collection_name(kind, base) for kind in _KINDS)
        self._catalog = collection_name("catalog", base)
        self._generation_collection = re.compile(re.escape(base) + r"_(?:chunks|notes|links)_g([1-9][0-9]*)")
        self._closed = False

    def collections(self, generation: str) -> tuple[str, str, str]:
        """The generation's chunk, note and link collection names (the plain names for the legacy g0)."""
        self._check_name(generation)
        if generation == LEGACY:
            return self._aliases
        chunks, notes, links = (f"{alias}_{generation}" for alias in self._aliases)
        return chunks, notes, links

    def active(self) -> str | None:
        with self._mapped("read the active index generation"):
            target = self._alias_targets().get(self._aliases[0])
            if target is None:
                return LEGACY if self._legacy_present(self._collection_names()) else None
        match = self._generation_collection.fullmatch(target)
        if match is None:
            raise StoreError(
                f"the alias {self._aliases[0]!r} points at {target!r}, which is no index generation",
                suggestion=f"Point it at a {self._aliases[0]}_gN collection, or delete it and rebuild.",
            )
        return f"g{match.group(1)}"

    def close(self) -> None:
        """Close the client shared by every store this catalog opened; safe to call twice."""
        if self._closed:
            return
        from backend.infrastructure.qdrant_client_engine import client_errors_mapped

        self._closed = True
        with client_errors_mapped(self._client, "close the index catalog", ()):
            self._client.close()

    def _stores(self, generation: str) -> tuple[ChunkStore, GraphStore]:
        from backend.infrastructure.qdrant_client_engine import ClientEngine

        if generation == LEGACY:
            with self._mapped("open the index"):
                replaced = bool(self._alias_targets())
            if replaced:  # its names are aliases of a newer generation now; writing there would hit that
                raise ValueError(f"the legacy index generation {LEGACY!r} has been replaced")
        chunks, notes, links = self.collections(generation)
        store = QdrantChunkStore(
            ClientEngine(self._client, options=self._options, close_client=False), chunks
        )
        graph = QdrantGraphStore(
            ClientEngine(self._client, options=self._options, close_client=False),
            notes_collection=notes,
            links_collection=links,
        )
        return store, graph

    def _present(self) -> set[int]:
        with self._mapped("list the index generations"):
            names = self._collection_names()
        found = {int(m.group(1)) for m in map(self._generation_collection.fullmatch, names) if m}
        if self._legacy_present(names):
            found.add(0)
        return found

    def _complete(self, generation: str) -> bool:
        with self._mapped("list the index collections"):
            names = self._collection_names()
        return all(name in names for name in self.collections(generation))

    def _switch(self, generation: str) -> None:
        from qdrant_client import models as qm

        if generation == LEGACY:  # its plain names may only come back as aliases
            raise ValueError(f"the legacy index generation {LEGACY!r} cannot be activated again")
        with self._mapped(f"switch to the index generation {generation}"):
            names = self._collection_names()
            for legacy in (name for name in self._aliases if name in names):
                self._client.delete_collection(legacy)  # the one-time window (see the module docstring)
            operations: list[qm.CreateAliasOperation | qm.DeleteAliasOperation] = [
                qm.DeleteAliasOperation(delete_alias=qm.DeleteAlias(alias_name=alias))
                for alias in self._alias_targets()
            ]
            operations += [
                qm.CreateAliasOperation(create_alias=qm.CreateAlias(collection_name=name, alias_name=alias))
                for alias, name in zip(self._aliases, self.collections(generation), strict=True)
            ]
            self._client.update_collection_aliases(change_aliases_operations=operations)

    def _remove(self, generation: str) -> None:
        with self._mapped(f"drop the index generation {generation}"):
            names = self._collection_names()  # real collections only: never an alias of another set
            for name in self.collections(generation):
                if name in names:
                    self._client.delete_collection(name)

    def _last_issued(self) -> int:
        with self._mapped("read the index generation counter"):
            if not self._client.collection_exists(self._catalog):
                return 0
            records = self._client.retrieve(self._catalog, [_COUNTER_POINT], with_payload=True)
        number = (records[0].payload or {}).get(_ISSUED_KEY) if records else 0
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise StoreError(f"the index generation counter in {self._catalog!r} is damaged")
        return number

    def _set_last_issued(self, number: int) -> None:
        self._put_catalog_point(_COUNTER_POINT, {_ISSUED_KEY: number}, "record the index generation counter")

    def vault_owner(self) -> str | None:
        with self._mapped("read which vault the index belongs to"):
            if not self._client.collection_exists(self._catalog):
                return None
            records = self._client.retrieve(self._catalog, [_OWNER_POINT], with_payload=True)
        owner = (records[0].payload or {}).get(_OWNER_KEY) if records else None
        if records and not isinstance(owner, str):
            raise StoreError(f"the vault record in {self._catalog!r} is damaged")
        return owner

    def record_vault_owner(self, vault: str) -> None:
        self._put_catalog_point(_OWNER_POINT, {_OWNER_KEY: vault}, "record which vault the index belongs to")

    def describe(self) -> str:
        return f"the collections {self._aliases[0]}/_notes/_links on the Qdrant server"

    def _put_catalog_point(self, point_id: int, payload: dict[str, Any], action: str) -> None:
        from qdrant_client import models as qm

        with self._mapped(action):
            if not self._client.collection_exists(self._catalog):
                replicas = self._options.replication_factor if self._options else None
                self._client.create_collection(self._catalog, vectors_config={}, replication_factor=replicas)
            point = qm.PointStruct(id=point_id, vector={}, payload=payload)
            self._client.upsert(self._catalog, points=[point], wait=True)

    def _collection_names(self) -> set[str]:
        return {c.name for c in self._client.get_collections().collections}

    def _alias_targets(self) -> dict[str, str]:
        """This catalog's aliases that exist, with the collection each points at."""
        found = self._client.get_aliases().aliases
        return {a.alias_name: a.collection_name for a in found if a.alias_name in self._aliases}

    def _legacy_present(self, names: set[str]) -> bool:
        return any(name in names for name in self._aliases)

    def _mapped(self, action: str) -> AbstractContextManager[None]:
        from backend.infrastructure.qdrant_client_engine import client_errors_mapped

        if self._closed:
            raise StoreError("the index catalog has been closed")
        return client_errors_mapped(self._client, action, ())
