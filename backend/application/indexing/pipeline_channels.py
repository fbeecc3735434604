"""Hand-over points between the threads of an indexing pass: bounded batch queues that a failing stage can
stop, and the feed of note paths from the keyword pass to the dense pass."""

from __future__ import annotations

import contextlib
import heapq
import queue
import threading
from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

from backend.domain.index.dense_order import UNRANKED, DenseRank

T = TypeVar("T")

POLL_SECONDS = 0.1  # how soon a blocked stage notices that the pipeline stops


def put(channel: queue.Queue[T | None], item: T | None, stop: threading.Event) -> bool:
    """Put unless the pipeline stops meanwhile (then False); an end marker always goes in."""
    while True:
        try:
            channel.put(item, timeout=POLL_SECONDS)
            return True
        except queue.Full:
            if stop.is_set():
                if item is None:  # make room: whoever reads next must see the end
                    with contextlib.suppress(queue.Empty):
                        channel.get_nowait()
                    continue
                return False


def get(channel: queue.Queue[T | None], stop: threading.Event) -> T | None:
    """The next item; None at the end, or once the pipeline stops and nothing is left."""
    while True:
        try:
            return channel.get(timeout=POLL_SECONDS)
        except queue.Empty:
            if stop.is_set():
                return None


class PathFeed:
    """Note paths waiting for the dense pass, added while the keyword pass writes them, handed out in the
    order of their rank (smaller first; backend.domain.index.dense_order.dense_rank: the person's own notes
    before those saved from elsewhere, recent before old), in the order they were added among equals.

    Not bounded: the keyword pass must never wait for the embedder (notes become keyword-searchable at the
    keyword pass's pace), and a path per note is what the live index holds anyway; the texts are read again
    by the dense pass's reader, whose batch queues are bounded. A path is handed out once per pass.
    """

    def __init__(self, paths: Iterable[str] = ()) -> None:
        self._waiting: list[tuple[DenseRank, int, str]] = []  # a heap
        self._seen: set[str] = set()
        self._closed = False
        self._changed = threading.Condition()
        self.add(paths)

    @property
    def added(self) -> int:
        """Paths added so far (each counted once)."""
        with self._changed:
            return len(self._seen)

    def add(self, paths: Iterable[str], ranks: Mapping[str, DenseRank] | None = None) -> list[str]:
        """Add paths, each at its rank in `ranks` (UNRANKED when it has none); the paths that were new."""
        new = []
        with self._changed:
            for path in paths:
                if path not in self._seen:
                    self._seen.add(path)
                    rank = ranks.get(path, UNRANKED) if ranks is not None else UNRANKED
                    heapq.heappush(self._waiting, (rank, len(self._seen), path))
                    new.append(path)
            self._changed.notify_all()
        return new

    def close(self) -> None:
        """No more paths: `take` ends once the waiting ones are handed out."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()

    def take(self, stop: threading.Event, *, after_close: bool = False) -> Iterator[str]:
        """Paths by rank, waiting for more until the feed is closed or `stop` is set; `after_close`: none
        before the feed is closed (whoever adds them has finished), so the whole feed is in rank order."""
        while True:
            with self._changed:
                while (after_close or not self._waiting) and not self._closed and not stop.is_set():
                    self._changed.wait(POLL_SECONDS)
                if not self._waiting or stop.is_set():
                    return
                path = heapq.heappop(self._waiting)[2]
            yield path
