"""One generation of the index while it is in use: its stores, its note graph and what it holds per note.

A rebuild fills a new generation beside the serving one and then swaps them; searches lease the generation
they read from, so the old one is closed only once the last search using it has finished. What a generation
holds per note (and which notes the disk showed) travels with it, so a swap takes all of it at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from backend.application.note_graph import NoteGraph
from backend.application.ports import ChunkStore, GraphStore
from backend.domain.models import FileProblem

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
        # Only right after the chunk collection was created do we know a note has no old chunks to clear.
        self.fresh = False
        self._state = threading.Lock()  # guards the two sets below: readers count while a writer changes them
        self._notes: dict[str, IndexedNote] = {}
        self._on_disk: set[str] = set()  # notes the last scan and the watcher saw on the disk
        self._users = 0
        self._idle = threading.Condition()
        self._closed = False

    # -- what it holds per note -------------------------------------------------------------------------

    def load(self, notes: dict[str, IndexedNote]) -> None:
        """What the stored note records say, on opening: each was on the disk when it was written."""
        with self._state:
            self._notes = dict(notes)
            self._on_disk = set(notes)

    def notes(self) -> dict[str, IndexedNote]:
        """A copy, to plan a pass with while writers go on."""
        with self._state:
            return dict(self._notes)

    def known(self, path: str) -> IndexedNote | None:
        with self._state:
            return self._notes.get(path)

    def holds(self, path: str) -> bool:
        with self._state:
            return path in self._notes

    def put(self, path: str, note: IndexedNote) -> None:
        with self._state:
            self._notes[path] = note

    def touched(self, path: str, mtime: float, size: int) -> None:
        """Touched, not changed: the new mtime is remembered so the next pass skips the note unread."""
        with self._state:
            known = self._notes.get(path)
            if known is not None:
                self._notes[path] = replace(known, mtime=mtime, size=size)

    def drop(self, path: str) -> None:
        with self._state:
            self._notes.pop(path, None)

    def paths_under(self, prefix: str) -> list[str]:
        with self._state:
            return [path for path in self._notes if path.startswith(prefix)]

    def pending_dense(self) -> list[str]:
        """Notes written by keyword only, waiting for dense vectors, by path."""
        with self._state:
            return sorted(path for path, state in self._notes.items() if not state.dense_ready)

    def is_pending(self, path: str, content_hash: str | None = None) -> bool:
        """The note is held keyword-only (with this content, when given)."""
        with self._state:
            state = self._notes.get(path)
        if state is None or state.dense_ready:
            return False
        return content_hash is None or state.content_hash == content_hash

    def note_count(self) -> int:
        with self._state:
            return len(self._notes)

    def dense_pending_count(self) -> int:
        with self._state:
            return sum(1 for state in self._notes.values() if not state.dense_ready)

    def note_problems(self) -> list[FileProblem]:
        with self._state:
            return [
                FileProblem(path, problem)
                for path, state in sorted(self._notes.items())
                for problem in state.problems
            ]

    # -- what the disk showed ---------------------------------------------------------------------------

    def saw_exactly(self, paths: Iterable[str]) -> None:
        """A whole-vault scan: these are the notes on the disk."""
        with self._state:
            self._on_disk = set(paths)

    def saw(self, present: Iterable[str], absent: Iterable[str] = ()) -> None:
        """A look at a few paths: these are on the disk, those not."""
        with self._state:
            self._on_disk.update(present)
            self._on_disk.difference_update(absent)

    def unindexed_count(self) -> int:
        """Notes seen on the disk that the generation does not hold (yet, or because they failed)."""
        with self._state:
            return sum(1 for path in self._on_disk if path not in self._notes)

    # -- its lifetime -----------------------------------------------------------------------------------

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
