"""`GraphStore` on qdrant-client: two payload-only collections (`vectors_config={}`) on a Qdrant server, or in
local mode (`:memory:` / `path=`) in tests.

Payload indexes are created against a server only: local mode ignores them and warns about each one. Locking
follows `ClientChunkStore`: against a server reads and the one writer run concurrently; local mode is plain
Python, so there every write is exclusive. Reads of a collection that does not exist find nothing; writes to
it raise `IndexNotReadyError`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from qdrant_client import QdrantClient
from qdrant_client import models as qm

from backend.domain.errors import IndexNotReadyError, StoreError
from backend.domain.ids import link_point_id, note_point_id
from backend.domain.links import LinkRecord, NoteRecord
from backend.infrastructure.qdrant_client_store import (
    CollectionOptions,
    client_errors_mapped,
    client_filter,
    is_local_mode,
)
from backend.infrastructure.qdrant_common import (
    GRAPH_PAGE,
    LINK_INTEGER_FIELDS,
    LINK_KEYWORD_FIELDS,
    LINKS_COLLECTION,
    NOTES_COLLECTION,
    PayloadFilter,
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
from backend.infrastructure.rwlock import ReadWriteLock

_CLOSING = "close the note graph"
_UPSERT_BATCH = 1024  # payload-only points of a few hundred bytes: far below the 32 MB request limit


class ClientGraphStore:
    def __init__(
        self,
        client: QdrantClient,
        *,
        notes_collection: str = NOTES_COLLECTION,
        links_collection: str = LINKS_COLLECTION,
        page_size: int = GRAPH_PAGE,
        options: CollectionOptions | None = None,
        close_client: bool = True,
    ) -> None:
        self._client = client
        self._close_client = close_client  # False when the client is shared (an index catalog owns it)
        self._notes = notes_collection
        self._links = links_collection
        self._page = page_size
        self._options = options or CollectionOptions()
        self._local = is_local_mode(client)
        self._lifecycle = ReadWriteLock()
        self._write_lock = threading.Lock()
        self._closed = False

    # -- lifecycle -------------------------------------------------------------------------------

    def ensure(self) -> None:
        with self._lifecycle.write(), self._mapped("open the note graph"):
            for name in (self._notes, self._links):
                if not self._client.collection_exists(name):
                    self._create(name)
            self._index_links()  # idempotent; also heals a collection whose creation was cut short

    def reset(self) -> None:
        with self._lifecycle.write(), self._mapped("reset the note graph"):
            for name in (self._notes, self._links):
                if self._client.collection_exists(name):
                    self._client.delete_collection(name)
                self._create(name)
            self._index_links()

    def close(self) -> None:
        with self._lifecycle.write():
            if self._closed:
                return
            self._closed = True
            if self._close_client:
                with self._mapped(_CLOSING):
                    self._client.close()

    def _create(self, name: str) -> None:
        self._client.create_collection(name, vectors_config={}, **self._options.create_kwargs())

    def _index_links(self) -> None:
        if self._local:
            return
        for field in LINK_KEYWORD_FIELDS:
            self._client.create_payload_index(self._links, field, qm.PayloadSchemaType.KEYWORD, wait=True)
        for field in LINK_INTEGER_FIELDS:
            self._client.create_payload_index(self._links, field, qm.PayloadSchemaType.INTEGER, wait=True)

    # -- writes ----------------------------------------------------------------------------------

    def put_note(self, note: NoteRecord, links: Sequence[LinkRecord]) -> None:
        with self._writing(), self._mapped("store a note"):
            points = [_link_point(link) for link in links]
            for start in range(0, len(points), _UPSERT_BATCH):
                self._client.upsert(self._links, points=points[start : start + _UPSERT_BATCH], wait=True)
            # After the upsert, so a reader never sees the note with fewer links than either version has.
            stale = qm.FilterSelector(filter=client_filter(links_beyond(note.path, len(links))))
            self._client.delete(self._links, points_selector=stale, wait=True)
            self._client.upsert(self._notes, points=[_note_point(note)], wait=True)

    def delete_note(self, path: str) -> None:
        with self._writing(), self._mapped("delete a note"):
            note_id = qm.PointIdsList(points=[note_point_id(path)])
            self._client.delete(self._notes, points_selector=note_id, wait=True)
            outgoing = qm.FilterSelector(filter=client_filter(links_from(path)))
            self._client.delete(self._links, points_selector=outgoing, wait=True)

    def put_many(self, notes: Sequence[NoteRecord], links: Sequence[LinkRecord]) -> None:
        with self._writing(), self._mapped("store notes"):
            link_points = [_link_point(link) for link in links]
            for start in range(0, len(link_points), _UPSERT_BATCH):
                batch = link_points[start : start + _UPSERT_BATCH]
                self._client.upsert(self._links, points=batch, wait=True)
            note_points = [_note_point(note) for note in notes]  # after the links, as in put_note
            for start in range(0, len(note_points), _UPSERT_BATCH):
                batch = note_points[start : start + _UPSERT_BATCH]
                self._client.upsert(self._notes, points=batch, wait=True)

    def update_resolution(self, links: Sequence[LinkRecord]) -> None:
        if not links:
            return
        operations = [_set_payload(payload, ids) for payload, ids in resolution_groups(links)]
        with self._writing(), self._mapped("update links"):
            self._client.batch_update_points(self._links, operations, wait=True)

    # -- reads -----------------------------------------------------------------------------------

    def get_notes(self, paths: Sequence[str]) -> dict[str, NoteRecord]:
        if not paths:
            return {}
        ids = [note_point_id(path) for path in dict.fromkeys(paths)]
        try:
            with self._lifecycle.read(), self._mapped("read notes"):
                records = self._client.retrieve(self._notes, ids, with_payload=True, with_vectors=False)
        except IndexNotReadyError:
            return {}
        notes = [note_from_payload(r.payload) for r in records if r.payload]
        return {note.path: note for note in notes}

    def all_notes(self) -> list[NoteRecord]:
        payloads = self._scroll(self._notes, None, "list notes")
        return sorted((note_from_payload(p) for p in payloads), key=lambda note: note.path)

    def all_links(self) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, None, "list links"))

    def outlinks(self, source: str) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, links_from(source), "read links"))

    def backlinks(self, target_path: str) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, links_to(target_path), "read links"))

    def links_touching(self, paths: Sequence[str]) -> list[LinkRecord]:
        if not paths:
            return []
        return sorted_links(self._scroll(self._links, links_touching(paths), "read links"))

    def links_to_names(self, names: Sequence[str]) -> list[LinkRecord]:
        if not names:
            return []
        return sorted_links(self._scroll(self._links, links_named(names), "read links"))

    def count_links(self, *, resolved: bool | None = None, kind: str | None = None) -> int:
        flt = client_filter(links_counted(resolved, kind))
        try:
            with self._lifecycle.read(), self._mapped("count links"):
                return int(self._client.count(self._links, count_filter=flt, exact=True).count)
        except IndexNotReadyError:
            return 0

    def _scroll(self, name: str, flt: PayloadFilter | None, action: str) -> list[dict[str, Any]]:
        """Every matching payload, one scroll call per `page_size` records."""
        engine_filter = client_filter(flt)
        found: list[dict[str, Any]] = []
        offset: Any = None
        try:
            with self._lifecycle.read(), self._mapped(action):
                while True:
                    records, offset = self._client.scroll(
                        name,
                        scroll_filter=engine_filter,
                        limit=self._page,
                        offset=offset,
                        with_payload=True,
                        with_vectors=False,
                    )
                    found.extend(r.payload for r in records if r.payload)
                    if offset is None:
                        return found
        except IndexNotReadyError:
            return []

    # -- helpers ---------------------------------------------------------------------------------

    @contextmanager
    def _writing(self) -> Iterator[None]:
        if self._local:
            with self._lifecycle.write():
                yield
        else:
            with self._lifecycle.read(), self._write_lock:
                yield

    @contextmanager
    def _mapped(self, action: str) -> Iterator[None]:
        if self._closed and action != _CLOSING:
            raise StoreError("the note graph store has been closed")
        with client_errors_mapped(self._client, action, (self._notes, self._links)):
            yield


# -- translation -----------------------------------------------------------------------------------


def _note_point(note: NoteRecord) -> qm.PointStruct:
    return qm.PointStruct(id=note_point_id(note.path), vector={}, payload=note_payload(note))


def _link_point(link: LinkRecord) -> qm.PointStruct:
    return qm.PointStruct(id=link_point_id(link.source, link.position), vector={}, payload=link_payload(link))


def _set_payload(payload: dict[str, Any], ids: list[str]) -> qm.SetPayloadOperation:
    # By filter, not by ids: a link deleted meanwhile is skipped instead of failing the batch.
    only = qm.Filter(must=[qm.HasIdCondition(has_id=list(ids))])
    return qm.SetPayloadOperation(set_payload=qm.SetPayload(payload=payload, filter=only))
