"""The Qdrant server index catalog (`ClientIndexCatalog`; local mode in tests): generations as collections,
named from the base::

    g0                      collections obsidian_chunks, obsidian_notes, obsidian_links
    gN                      collections obsidian_chunks_gN, obsidian_notes_gN, obsidian_links_gN
    active generation       aliases obsidian_chunks, obsidian_notes, obsidian_links -> the *_gN collections
    last name handed out    one point in the payload-only collection obsidian_catalog

`activate` switches the three aliases in one `update_collection_aliases` call, atomic on the server, and
tools that address the plain names follow the switch. One-time window: an alias cannot share a collection's
name, so the first activation after a legacy g0 deletes the g0 collections (chunks first) before it creates
the aliases. Until that call returns, searches on still open g0 stores fail; a crash in between leaves g0
partly deleted (it then reads as needing a rebuild: its chunk collection, the one holding the index
identity, went first) or gone (no active generation); the complete gN stays listed by `generations()`. The
catalog shares one client between all stores it opens, and its `close()` closes it.

qdrant-client is imported only when a `ClientIndexCatalog` is used: it takes most of a second to import, and
the embedded (qdrant-edge) set-up never needs it.
"""

from __future__ import annotations

import re
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from backend.application.ports import ChunkStore, GraphStore
from backend.domain.errors import StoreError
from backend.infrastructure.index_catalog.generations import (
    ISSUED_KEY,
    LEGACY,
    OWNER_KEY,
    GenerationCatalog,
    checked_base,
)
from backend.infrastructure.qdrant.chunk_store import PAYLOAD_CACHE_MB, QdrantChunkStore
from backend.infrastructure.qdrant.engine import DEFAULT_BASE, collection_name
from backend.infrastructure.qdrant.graph_store import QdrantGraphStore

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

    from backend.infrastructure.qdrant.client_engine import CollectionOptions

_KINDS = ("chunks", "notes", "links")  # chunks first: deleting it first marks a set as needing a rebuild
_COUNTER_POINT = 1
_OWNER_POINT = 2


class ClientIndexCatalog(GenerationCatalog):
    def __init__(
        self,
        client: QdrantClient,
        *,
        options: CollectionOptions | None = None,
        base: str = DEFAULT_BASE,
        cache_mb: int = PAYLOAD_CACHE_MB,
    ) -> None:
        super().__init__()
        self._client = client
        self._cache_mb = cache_mb
        self._options = options
        self._base = checked_base(base)
        self._aliases = tuple(collection_name(kind, base) for kind in _KINDS)
        self._catalog = collection_name("catalog", base)
        self._generation_collection = re.compile(re.escape(base) + r"_(?:chunks|notes|links)_g([1-9][0-9]*)")
        self._closed = False

    @property
    def options(self) -> CollectionOptions | None:
        """How the collections this catalog creates are laid out (shards, replication, on disk)."""
        return self._options

    @property
    def connection(self) -> dict[str, Any]:
        """The client's connection settings (url, api_key, gRPC, timeout) as qdrant-client recorded them."""
        return dict(self._client.init_options)

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
        from backend.infrastructure.qdrant.client_engine import client_errors_mapped

        self._closed = True
        with client_errors_mapped(self._client, "close the index catalog", ()):
            self._client.close()

    def _stores(self, generation: str) -> tuple[ChunkStore, GraphStore]:
        from backend.infrastructure.qdrant.client_engine import ClientEngine

        if generation == LEGACY:
            with self._mapped("open the index"):
                replaced = bool(self._alias_targets())
            if replaced:  # its names are aliases of a newer generation now; writing there would hit that
                raise ValueError(f"the legacy index generation {LEGACY!r} has been replaced")
        chunks, notes, links = self.collections(generation)
        store = QdrantChunkStore(
            ClientEngine(self._client, options=self._options, close_client=False),
            chunks,
            cache_mb=self._cache_mb,
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
        number = (records[0].payload or {}).get(ISSUED_KEY) if records else 0
        if isinstance(number, bool) or not isinstance(number, int) or number < 0:
            raise StoreError(f"the index generation counter in {self._catalog!r} is damaged")
        return number

    def _set_last_issued(self, number: int) -> None:
        self._put_catalog_point(_COUNTER_POINT, {ISSUED_KEY: number}, "record the index generation counter")

    def vault_owner(self) -> str | None:
        with self._mapped("read which vault the index belongs to"):
            if not self._client.collection_exists(self._catalog):
                return None
            records = self._client.retrieve(self._catalog, [_OWNER_POINT], with_payload=True)
        owner = (records[0].payload or {}).get(OWNER_KEY) if records else None
        if records and not isinstance(owner, str):
            raise StoreError(f"the vault record in {self._catalog!r} is damaged")
        return owner

    def record_vault_owner(self, vault: str) -> None:
        self._put_catalog_point(_OWNER_POINT, {OWNER_KEY: vault}, "record which vault the index belongs to")

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
        from backend.infrastructure.qdrant.client_engine import client_errors_mapped

        if self._closed:
            raise StoreError("the index catalog has been closed")
        return client_errors_mapped(self._client, action, ())
