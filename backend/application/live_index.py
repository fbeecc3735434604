"""One generation of the index while it is in use: its stores, its note graph and what it holds per note.

A rebuild fills a new generation beside the serving one and then swaps them; searches lease the generation
they read from, so the old one is closed only once the last search using it has finished.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from backend.application.note_graph import NoteGraph
from backend.application.ports import ChunkStore, GraphStore

log = logging.getLogger(__name__)

RETIRE_WAIT_SECONDS = 60.0  # longer than any search; a stuck reader must not keep old shards open forever


@dataclass(frozen=True, slots=True)
class IndexedNote:
    content_hash: str
    mtime: float
    size: int
    problems: tuple[str, ...] = ()
    dense_ready: bool = True
    link_count: int | None = None  # as recorded (None: an index from before links were counted)


class LiveIndex:
    def __init__(self, generation: str, store: ChunkStore, graph_store: GraphStore, graph: NoteGraph) -> None:
        self.generation = generation
        self.store = store
        self.graph_store = graph_store
        self.graph = graph
        self.notes: dict[str, IndexedNote] = {}  # guarded by the owning IndexService's state lock
        # Only right after the chunk collection was created do we know a note has no old chunks to clear.
        self.fresh = False
        self._users = 0
        self._idle = threading.Condition()
        self._closed = False

    @contextmanager
    def lease(self) -> Iterator[LiveIndex]:
        with self._idle:
            self._users += 1
        try:
            yield self
        finally:
            with self._idle:
                self._users -= 1
                self._idle.notify_all()

    def retire(self, timeout: float = RETIRE_WAIT_SECONDS) -> None:
        """Close the stores once no search reads from them any more."""
        with self._idle:
            if not self._idle.wait_for(lambda: self._users == 0, timeout):
                log.warning("closing index generation %s with %d readers left", self.generation, self._users)
        self.close()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self.store.close()
        finally:
            self.graph_store.close()
