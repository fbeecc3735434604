"""The read questions a serving index answers from the generation it serves (`ServingIndex`'s chunk and note
reads), each inside `serving()`, so a rebuild that switches meanwhile waits for the read; IndexHandle
(index_handle.py) is one, and says how a generation is served."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections import Counter
from contextlib import AbstractContextManager

from backend.application.serving.live_index import LiveIndex
from backend.application.serving.note_graph import LinkCounts, NoteLinks
from backend.domain.index.index_consistency import RecordedNote, StoreDrift, store_drift
from backend.domain.links import LinkRecord, NoteRecord
from backend.domain.notes.vault_paths import vault_path


class ServingReads(ABC):
    writer: threading.RLock  # one writer at a time: a consistent read holds it too

    @abstractmethod
    def serving(self) -> AbstractContextManager[LiveIndex]:
        """The generation to read from, kept open until the caller is done even if a rebuild switches."""

    def chunk_count(self) -> int:
        with self.serving() as live:
            return live.store.count()

    def recent_chunk_count(self) -> int:
        """The chunk count for /index/status: read from the store again only after writes, at most once a
        second (`LiveIndex.counted`), so polling it costs nothing however large the vault."""
        with self.serving() as live:
            return live.counted("chunks", live.store.count)

    def note_links(self, path: str) -> NoteLinks:
        path = vault_path(path)
        with self.serving() as live:
            return live.graph.links_of(path)

    def unresolved_links(self) -> list[LinkRecord]:
        """Every link to a note not created yet, by source note and position."""
        with self.serving() as live:
            return live.graph_store.unresolved_links()

    def note_record(self, path: str) -> NoteRecord | None:
        """The indexed note at `path`, or None when the index does not hold it."""
        with self.serving() as live:
            return live.graph.record(path)

    def note_records(self) -> list[NoteRecord]:
        with self.serving() as live:
            return live.graph.records()

    def link_counts(self) -> LinkCounts:
        """As `recent_chunk_count`: counted again only after writes, at most once a second."""
        with self.serving() as live:
            return live.counted("links", live.graph.counts)

    def consistency(self) -> tuple[StoreDrift, list[NoteRecord], list[LinkRecord]]:
        """What the serving index holds on disk, read under the writer lock so no half-written note shows:
        how its chunk points add up with its stored note records, those records, and every link."""
        with self.writer, self.serving() as live:
            stored = live.graph_store.all_notes()
            links = live.graph_store.all_links()
            recorded = {
                r.path: RecordedNote(r.content_hash, r.dense_ready, r.link_count, r.chunk_count)
                for r in stored
            }
            drift = store_drift(live.store.inventory(), recorded, Counter(link.source for link in links))
            return drift, stored, links
