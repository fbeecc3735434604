"""`GraphStore` on qdrant-edge: `<path>/obsidian_notes/` and `<path>/obsidian_links/`, two shards in-process.

qdrant-edge refuses a shard without any vector, so each shard declares one sparse vector that no point
carries: it costs nothing and leaves the shards payload-only in practice.

Locking follows `EdgeChunkStore`: a readers-writer lock guards the shards' lifecycle (ensure, reset, close:
exclusive; everything else: shared), and a mutex keeps writers one at a time. Reads of a shard that was never
created find nothing; writes to it raise `IndexNotReadyError`.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from backend.domain.errors import IndexNotReadyError, StoreError
from backend.domain.ids import link_point_id, note_point_id
from backend.domain.links import LinkRecord, NoteRecord
from backend.infrastructure.disk_space import NO_GUARD, DiskGuard
from backend.infrastructure.qdrant_common import (
    GRAPH_PAGE,
    LINK_INTEGER_FIELDS,
    LINK_KEYWORD_FIELDS,
    LINKS_COLLECTION,
    NOTES_COLLECTION,
    PayloadFilter,
    edge_errors_mapped,
    edge_load_error,
    ensure_edge_shard_free,
    link_payload,
    links_beyond,
    links_counted,
    links_from,
    links_named,
    links_to,
    links_touching,
    note_from_payload,
    note_payload,
    resolution_groups,
    sorted_links,
)
from backend.infrastructure.qdrant_edge_store import edge_filter
from backend.infrastructure.rwlock import ReadWriteLock

_PLACEHOLDER_VECTOR = "unused"
_COLLECTIONS = (NOTES_COLLECTION, LINKS_COLLECTION)
_BULK = 1024  # points per update call of a bulk copy


class EdgeGraphStore:
    def __init__(self, path: Path, *, page_size: int = GRAPH_PAGE, guard: DiskGuard = NO_GUARD) -> None:
        self._root = Path(path)
        self._guard = guard
        self._page = page_size
        self._lifecycle = ReadWriteLock()
        self._open_lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._shards: dict[str, qe.EdgeShard] = {}
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------

    def ensure(self) -> None:
        with self._lifecycle.write(), edge_errors_mapped("open the note graph"):
            self._check_open()
            for name in _COLLECTIONS:
                if name not in self._shards:
                    directory = self._root / name
                    self._shards[name] = self._load(name) if directory.is_dir() else self._create(name)

    def reset(self) -> None:
        with self._lifecycle.write(), edge_errors_mapped("reset the note graph"):
            self._check_open()
            self._guard.check("reset the note graph")
            self._close_shards()
            existing = [self._root / name for name in _COLLECTIONS if (self._root / name).exists()]
            for directory in existing:  # all checked before any is deleted
                ensure_edge_shard_free(directory)
            for directory in existing:
                shutil.rmtree(directory)
            for name in _COLLECTIONS:
                self._shards[name] = self._create(name)

    def close(self) -> None:
        with self._lifecycle.write(), edge_errors_mapped("close the note graph"):
            self._closed = True
            self._close_shards()

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the note graph store has been closed")

    def _close_shards(self) -> None:
        shards, self._shards = self._shards, {}
        for shard in shards.values():
            try:
                shard.flush()
            finally:
                shard.close()

    def _create(self, name: str) -> qe.EdgeShard:
        self._guard.check("create the note graph")
        config = qe.EdgeConfig(sparse_vectors={_PLACEHOLDER_VECTOR: qe.EdgeSparseVectorParams()})
        shard = qe.EdgeShard.create(str(self._root / name), config)
        try:
            _index_fields(shard, name)
            shard.flush()
        except BaseException:
            shard.close()
            raise
        return shard

    def _load(self, name: str) -> qe.EdgeShard:
        directory = self._root / name
        self._guard.check("open the note graph")  # loading replays the log: it writes
        try:
            shard = qe.EdgeShard.load(str(directory))
        except Exception as exc:
            raise edge_load_error(directory, exc) from exc
        try:
            _index_fields(shard, name)  # a no-op when present; heals a shard whose creation was cut short
        except BaseException:
            shard.close()
            raise
        return shard

    def _shard(self, name: str) -> qe.EdgeShard | None:
        """The open shard, loaded on first use; None when it was never created. Call with the lifecycle
        lock held (shared is enough)."""
        self._check_open()
        shard = self._shards.get(name)
        if shard is not None:
            return shard
        with self._open_lock:
            shard = self._shards.get(name)
            if shard is None and (self._root / name).is_dir():
                shard = self._shards[name] = self._load(name)
            return shard

    def _writable(self, name: str) -> qe.EdgeShard:
        shard = self._shard(name)
        if shard is None:
            raise IndexNotReadyError(f"the note graph {name!r} does not exist in {self._root}")
        return shard

    # -- writes ----------------------------------------------------------------------------------

    def put_note(self, note: NoteRecord, links: Sequence[LinkRecord]) -> None:
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("store a note"):
            self._guard.check("store a note")
            link_shard = self._writable(LINKS_COLLECTION)
            note_shard = self._writable(NOTES_COLLECTION)
            if links:
                link_shard.update(qe.UpdateOperation.upsert_points([_link_point(link) for link in links]))
            # After the upsert, so a reader never sees the note with fewer links than either version has.
            stale = links_beyond(note.path, len(links))
            link_shard.update(qe.UpdateOperation.delete_points_by_filter(edge_filter(stale)))
            note_shard.update(qe.UpdateOperation.upsert_points([_note_point(note)]))

    def delete_note(self, path: str) -> None:
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("delete a note"):
            self._guard.check("delete a note")
            note_shard = self._writable(NOTES_COLLECTION)
            link_shard = self._writable(LINKS_COLLECTION)
            note_shard.update(qe.UpdateOperation.delete_points([note_point_id(path)]))
            link_shard.update(qe.UpdateOperation.delete_points_by_filter(edge_filter(links_from(path))))

    def put_many(self, notes: Sequence[NoteRecord], links: Sequence[LinkRecord]) -> None:
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("store notes"):
            link_shard = self._writable(LINKS_COLLECTION)
            note_shard = self._writable(NOTES_COLLECTION)
            for start in range(0, len(links), _BULK):
                points = [_link_point(link) for link in links[start : start + _BULK]]
                link_shard.update(qe.UpdateOperation.upsert_points(points))
            for start in range(0, len(notes), _BULK):  # after the links, as in put_note
                points = [_note_point(note) for note in notes[start : start + _BULK]]
                note_shard.update(qe.UpdateOperation.upsert_points(points))

    def update_resolution(self, links: Sequence[LinkRecord]) -> None:
        if not links:
            return
        with self._lifecycle.read(), self._write_lock, edge_errors_mapped("update links"):
            self._guard.check("update links")
            shard = self._writable(LINKS_COLLECTION)
            for payload, ids in resolution_groups(links):
                # By filter, not by ids: a link deleted meanwhile is skipped instead of failing the batch.
                only = qe.Filter(must=[qe.HasIdCondition(set(ids))])
                shard.update(qe.UpdateOperation.set_payload_by_filter(only, payload))

    # -- reads -----------------------------------------------------------------------------------

    def get_notes(self, paths: Sequence[str]) -> dict[str, NoteRecord]:
        if not paths:
            return {}
        ids = [note_point_id(path) for path in dict.fromkeys(paths)]
        with self._lifecycle.read(), edge_errors_mapped("read notes"):
            shard = self._shard(NOTES_COLLECTION)
            records = [] if shard is None else shard.retrieve(ids, True, False)
        notes = [note_from_payload(r.payload) for r in records if r.payload]
        return {note.path: note for note in notes}

    def all_notes(self) -> list[NoteRecord]:
        payloads = self._scroll(NOTES_COLLECTION, None, "list notes")
        return sorted((note_from_payload(p) for p in payloads), key=lambda note: note.path)

    def all_links(self) -> list[LinkRecord]:
        return sorted_links(self._scroll(LINKS_COLLECTION, None, "list links"))

    def outlinks(self, source: str) -> list[LinkRecord]:
        return sorted_links(self._scroll(LINKS_COLLECTION, links_from(source), "read links"))

    def backlinks(self, target_path: str) -> list[LinkRecord]:
        return sorted_links(self._scroll(LINKS_COLLECTION, links_to(target_path), "read links"))

    def links_touching(self, paths: Sequence[str]) -> list[LinkRecord]:
        if not paths:
            return []
        return sorted_links(self._scroll(LINKS_COLLECTION, links_touching(paths), "read links"))

    def links_to_names(self, names: Sequence[str]) -> list[LinkRecord]:
        if not names:
            return []
        return sorted_links(self._scroll(LINKS_COLLECTION, links_named(names), "read links"))

    def count_links(self, *, resolved: bool | None = None, kind: str | None = None) -> int:
        flt = links_counted(resolved, kind)
        with self._lifecycle.read(), edge_errors_mapped("count links"):
            shard = self._shard(LINKS_COLLECTION)
            if shard is None:
                return 0
            return int(shard.count(qe.CountRequest(exact=True, filter=edge_filter(flt))))

    def _scroll(self, name: str, flt: PayloadFilter | None, action: str) -> list[dict[str, Any]]:
        """Every matching payload, one scroll call per `page_size` records."""
        engine_filter = edge_filter(flt)
        found: list[dict[str, Any]] = []
        with self._lifecycle.read(), edge_errors_mapped(action):
            shard = self._shard(name)
            offset: Any = None
            while shard is not None:
                request = qe.ScrollRequest(
                    offset=offset,
                    limit=self._page,
                    filter=engine_filter,
                    with_payload=True,
                    with_vector=False,
                )
                records, offset = shard.scroll(request)
                found.extend(r.payload for r in records if r.payload)
                if offset is None:
                    break
        return found


# -- translation -----------------------------------------------------------------------------------


def _index_fields(shard: qe.EdgeShard, name: str) -> None:
    if name != LINKS_COLLECTION:
        return  # notes are only read by id or all at once
    for field in LINK_KEYWORD_FIELDS:
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Keyword))
    for field in LINK_INTEGER_FIELDS:
        shard.update(qe.UpdateOperation.create_field_index(field, qe.PayloadSchemaType.Integer))


def _note_point(note: NoteRecord) -> qe.Point:
    return qe.Point(note_point_id(note.path), {}, note_payload(note))


def _link_point(link: LinkRecord) -> qe.Point:
    return qe.Point(link_point_id(link.source, link.position), {}, link_payload(link))
