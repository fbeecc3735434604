"""One generation of the index while it is in use: its stores, its note graph and what it holds per note.

A rebuild fills a new generation beside the serving one and then swaps them; searches lease the generation
they read from, so the old one is closed only once the last search using it has finished. What a generation
holds per note (and which notes the disk showed) travels with it, so a swap takes all of it at once.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import TypeVar

from backend.application.ports import ChunkStore, GraphStore
from backend.application.serving.note_graph import NoteGraph
from backend.domain.models import FileProblem

log = logging.getLogger(__name__)

RETIRE_WAIT_SECONDS = 60.0  # longer than any search; a stuck reader must not keep old shards open forever
# A count read from the store (chunks, links) is read again once the generation was written since; while a
# whole-vault pass writes, not more often than this: /index/status polled during a first index of 53k notes
# must not count per call (~90 ms a call there).
COUNT_MAX_AGE_SECONDS = 1.0

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class IndexedNote:
    content_hash: str
    mtime: float
    size: int
    problems: tuple[str, ...] = ()
    dense_ready: bool = True
    link_count: int | None = None  # as recorded (None: an index from before links were counted)
    chunk_count: int | None = None  # as recorded (None: an index from before chunks were counted)


class LiveIndex:
    def __init__(self, generation: str, store: ChunkStore, graph_store: GraphStore, graph: NoteGraph) -> None:
        self.generation = generation
        self.store = store
        self.graph_store = graph_store
        self.graph = graph
        # Only right after the chunk collection was created do we know a note has no old chunks to clear.
        self.fresh = False
        self._state = threading.Lock()  # guards what follows: readers count while a writer changes it
        self._notes: dict[str, IndexedNote] = {}
        self._on_disk: set[str] = set()  # notes the last scan and the watcher saw on the disk
        # Running counts, kept as notes are written, so status and search never walk every note (issue 28:
        # /index/status cost 250 ms at 53k notes when it sorted and counted them per call).
        self._pending = 0  # notes held keyword-only
        self._unindexed = 0  # paths in _on_disk that _notes does not hold
        self._with_problems: set[str] = set()
        self.version = 0  # bumped by every change of what the generation holds
        self.bulk_writing = False  # a whole-vault pass is writing: counts may be a second old
        self._counted: dict[str, tuple[int, float, object]] = {}
        self._users = 0
        self._idle = threading.Condition()
        self._closed = False

    # -- what it holds per note -------------------------------------------------------------------------

    def load(self, notes: dict[str, IndexedNote]) -> None:
        """What the stored note records say, on opening: each was on the disk when it was written."""
        with self._state:
            self._notes = dict(notes)
            self._on_disk = set(notes)
            self._pending = sum(1 for note in notes.values() if not note.dense_ready)
            self._unindexed = 0
            self._with_problems = {path for path, note in notes.items() if note.problems}
            self.version += 1

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
            known = self._notes.get(path)
            if known is None:
                self._unindexed -= path in self._on_disk
            else:
                self._uncount(path, known)
            self._notes[path] = note
            self._pending += not note.dense_ready
            if note.problems:
                self._with_problems.add(path)
            self.version += 1

    def dense_added(self, path: str) -> None:
        """The note, held keyword-only, has its dense vectors now (its content is as it was)."""
        with self._state:
            known = self._notes.get(path)
            if known is not None and not known.dense_ready:
                self._notes[path] = replace(known, dense_ready=True)
                self._pending -= 1
                self.version += 1

    def touched(self, path: str, mtime: float, size: int) -> None:
        """Touched, not changed: the new mtime is remembered so the next pass skips the note unread."""
        with self._state:
            known = self._notes.get(path)
            if known is not None:
                self._notes[path] = replace(known, mtime=mtime, size=size)

    def drop(self, path: str) -> None:
        with self._state:
            known = self._notes.pop(path, None)
            if known is not None:
                self._uncount(path, known)
                self._unindexed += path in self._on_disk
            self.version += 1

    def changed(self) -> None:
        """Its points or links changed other than through `put` or `drop` (links resolved anew)."""
        with self._state:
            self.version += 1

    def _uncount(self, path: str, known: IndexedNote) -> None:
        """Take the note held at `path` out of the running counts (the caller holds the lock)."""
        self._pending -= not known.dense_ready
        self._with_problems.discard(path)

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
        return self._pending

    def note_problems(self) -> list[FileProblem]:
        """The indexed notes' problems, by path (only the notes that have any are looked at)."""
        with self._state:
            troubled = [(path, self._notes[path].problems) for path in self._with_problems]
        return [FileProblem(path, problem) for path, problems in sorted(troubled) for problem in problems]

    def counted(self, name: str, count: Callable[[], T], max_age: float = COUNT_MAX_AGE_SECONDS) -> T:
        """`count()` (a store count), read again only once the generation changed since it was read; while a
        whole-vault pass writes (`bulk_writing`), not more often than every `max_age` seconds."""
        now = time.monotonic()
        seen = self._counted.get(name)
        if seen is not None and (seen[0] == self.version or (self.bulk_writing and now - seen[1] < max_age)):
            return seen[2]  # type: ignore[return-value]
        version = self.version  # before counting: a write meanwhile makes the next call count again
        value = count()
        self._counted[name] = (version, now, value)
        return value

    # -- what the disk showed ---------------------------------------------------------------------------

    def saw_exactly(self, paths: Iterable[str]) -> None:
        """A whole-vault scan: these are the notes on the disk."""
        with self._state:
            self._on_disk = set(paths)
            self._unindexed = sum(1 for path in self._on_disk if path not in self._notes)

    def saw(self, present: Iterable[str], absent: Iterable[str] = ()) -> None:
        """A look at a few paths: these are on the disk, those not."""
        with self._state:
            for path in present:
                if path not in self._on_disk:
                    self._on_disk.add(path)
                    self._unindexed += path not in self._notes
            for path in absent:
                if path in self._on_disk:
                    self._on_disk.discard(path)
                    self._unindexed -= path not in self._notes

    def unindexed_count(self) -> int:
        """Notes seen on the disk that the generation does not hold (yet, or because they failed)."""
        return self._unindexed

    def disk_count(self) -> int:
        """Notes the last scan and the watcher saw on the disk."""
        return len(self._on_disk)

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
