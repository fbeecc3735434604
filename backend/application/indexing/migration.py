"""Moving an index to another store (the embedded store to a Qdrant server) without embedding anything again.

Every point of the serving generation is copied as it is stored: chunks with their dense and sparse vectors
and payloads, note records and links, and the index identity (model, dimension, keyword encoding) that
the target's chunk collection is created with. The copy goes into a new generation of the target, which is
activated only once every count matches, so a copy that fails half way leaves no index there (its leftovers
are dropped by the next migrate, or when the service opens the target).

A target that already serves an index of this vault is refused unless `replace` is asked: then the copy is
built beside it and switched to, as a rebuild does, and the old generation is dropped. An index of another
vault, on either side, is refused whatever is asked (VAULT_MISMATCH): nothing replaces one vault's index with
another's. The target records the vault, as an index the service built does.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from backend.application.ports import ChunkStore, GraphStore, IndexCatalog
from backend.domain.errors import (
    IndexNotReadyError,
    MigrationTargetNotEmptyError,
    StoreError,
    VaultMismatchError,
)

log = logging.getLogger(__name__)

PAGE = 512  # chunk points per read and write: ~2 MB at 1024-d, far below any request limit
PROGRESS_LOG_SECONDS = 10.0

Progress = Callable[[str, int, int], None]  # phase ("chunks", "notes"), done, total


@dataclass(frozen=True, slots=True)
class MigrationReport:
    source_generation: str
    target_generation: str
    chunks: int
    dense_chunks: int  # chunks copied with their dense vector (the rest wait for the embedder, as before)
    notes: int
    links: int
    replaced: str | None  # the target's generation this copy replaced, if any


def migrate_index(
    source: IndexCatalog,
    target: IndexCatalog,
    *,
    vault: str,
    replace: bool = False,
    progress: Progress | None = None,
) -> MigrationReport:
    """Copy the active generation of `source` (the index of `vault`) into a new generation of `target` and
    activate it there."""
    _check_owner(source, vault, "copy")
    _check_owner(target, vault, "overwrite")
    generation = source.active()
    if generation is None:
        raise IndexNotReadyError("there is no index to migrate: build one first (python -m backend index)")
    existing = target.active()
    if existing is not None and not replace:
        raise MigrationTargetNotEmptyError(
            f"the target already serves an index of this vault (generation {existing}); nothing was copied"
        )
    for leftover in target.generations():
        if leftover != existing:  # a copy or rebuild that died before its switch
            target.drop(leftover)
    src_chunks, src_graph = source.open(generation)
    try:
        identity = src_chunks.identity()
        if identity is None:
            raise IndexNotReadyError(f"index generation {generation} was never finished; rebuild it first")
        new = target.new_generation()
        dst_chunks, dst_graph = target.open(new)
        try:
            dst_chunks.create(identity)
            dst_graph.reset()
            chunks, dense = _copy_chunks(src_chunks, dst_chunks, progress)
            notes, links = _copy_graph(src_graph, dst_graph, progress)
            _check_counts(src_chunks, dst_chunks, src_graph, dst_graph)
        finally:
            dst_chunks.close()
            dst_graph.close()
        target.record_vault_owner(vault)
        target.activate(new)
    finally:
        src_chunks.close()
        src_graph.close()
    if existing is not None:
        target.drop(existing)
    log.info(
        "migrated index generation %s: %d chunks (%d with dense vectors), %d notes, %d links -> %s",
        generation,
        chunks,
        dense,
        notes,
        links,
        new,
    )
    return MigrationReport(generation, new, chunks, dense, notes, links, existing)


def _check_owner(catalog: IndexCatalog, vault: str, verb: str) -> None:
    owner = catalog.vault_owner()
    if owner is not None and owner != vault:
        raise VaultMismatchError(
            f"the index in {catalog.describe()} belongs to the vault {owner}, not to {vault}; nothing was "
            "copied",
            suggestion=f"Migrate {vault} with its own DATA_DIR and VAULT_NAME (a server keeps each "
            f"VAULT_NAME apart); nothing may {verb} the index of another vault.",
        )


def _copy_chunks(source: ChunkStore, target: ChunkStore, progress: Progress | None) -> tuple[int, int]:
    total = source.count()
    copied = dense = 0
    offset: str | None = None
    next_log = time.monotonic() + PROGRESS_LOG_SECONDS
    if progress:
        progress("chunks", 0, total)
    while True:
        page, offset = source.export(limit=PAGE, offset=offset)
        target.upsert(page)
        copied += len(page)
        dense += sum(1 for point in page if point.dense is not None)
        if progress:
            progress("chunks", copied, total)
        if time.monotonic() >= next_log:
            log.info("migrating: %d of %d chunks copied", copied, total)
            next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        if offset is None:
            return copied, dense


def _copy_graph(source: GraphStore, target: GraphStore, progress: Progress | None) -> tuple[int, int]:
    notes = source.all_notes()
    links = source.all_links()
    if progress:
        progress("notes", 0, len(notes))
    target.put_many(notes, links)
    if progress:
        progress("notes", len(notes), len(notes))
    return len(notes), len(links)


def _check_counts(src: ChunkStore, dst: ChunkStore, src_graph: GraphStore, dst_graph: GraphStore) -> None:
    pairs = {
        "chunks": (src.count(), dst.count()),
        "notes": (len(src_graph.all_notes()), len(dst_graph.all_notes())),
        "links": (src_graph.count_links(), dst_graph.count_links()),
    }
    wrong = {kind: counts for kind, counts in pairs.items() if counts[0] != counts[1]}
    if wrong:
        raise StoreError(
            "the copy does not match the source (source, target): "
            + ", ".join(f"{kind} {a} vs {b}" for kind, (a, b) in wrong.items()),
            suggestion="Nothing was switched on the target; run the migration again.",
        )
