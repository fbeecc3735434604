"""The vault watcher's waiting room: each changed path waits until it has been quiet for a while.

Editors save often, and atomically through temp files, so a path goes out only once no event has touched
it for `debounce_seconds` (or, written continuously, `max_delay_seconds` after its first event). Paths that
fall due a moment apart wait for each other, so they share a batch. A failed batch comes back, merged with
what was touched meanwhile, and the next batch waits out a growing retry delay.

Events arrive on the observer thread; batches are taken on the dispatcher thread; status readers count.
One condition guards it all.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass

from backend.infrastructure.vault.events import RESCAN, Key

MAX_RETRY_SECONDS = 60.0
MIN_RETRY_SECONDS = 0.1  # with debounce 0 a failing callback must still not spin
MAX_GRACE_SECONDS = 0.5


@dataclass(slots=True)
class Pending:
    first: float  # monotonic time of the first event since the path was last dispatched
    last: float  # monotonic time of the latest event


Batch = dict[Key, Pending]


class Debouncer:
    def __init__(self, debounce_seconds: float, max_delay_seconds: float) -> None:
        self._debounce = debounce_seconds
        self._max_delay = max_delay_seconds
        # Paths that fall due a moment apart (one save touching several notes) wait for each other, so
        # they share a batch; nothing ever goes out before its quiet time.
        self._grace = min(debounce_seconds / 4, MAX_GRACE_SECONDS)
        self._cond = threading.Condition(threading.Lock())
        self._pending: Batch = {}
        # (due, key) entries; an entry may be early (the path was touched again since): it is then pushed
        # back with its real due time when it comes up, so each event costs O(1) and a burst one entry.
        self._heap: list[tuple[float, Key]] = []
        self._in_flight = 0
        self._retry_at = 0.0
        self._failures = 0

    @property
    def pending(self) -> int:
        """Paths and folders waiting for their quiet time or being applied now."""
        with self._cond:
            return len(self._pending) - (RESCAN in self._pending) + self._in_flight

    def record(self, keys: Iterable[Key], now: float) -> None:
        with self._cond:
            added = False
            for key in keys:
                item = self._pending.get(key)
                if item is None:
                    item = self._pending[key] = Pending(first=now, last=now)
                    heapq.heappush(self._heap, (self._due(item), key))
                    added = True
                else:
                    item.last = now  # its heap entry is now early; see `_take_due`
            if added:  # a later touch only moves a due time back, which the dispatcher finds by itself
                self._cond.notify()

    def next_batch(self, stop_token: threading.Event, until: float) -> Batch | None:
        """Wait for the next batch due; empty once monotonic time reaches `until`, None once stopped."""
        batch: Batch = {}
        with self._cond:
            while not stop_token.is_set():
                now = time.monotonic()
                if now >= until:
                    break
                batch = self._take_due(now)
                if batch:
                    break
                self._cond.wait(self._wait_seconds(now, until))
            if stop_token.is_set():
                return None
        return batch

    def wake(self) -> None:
        """Have `next_batch` look at its stop token now."""
        with self._cond:
            self._cond.notify_all()

    def delivered(self) -> None:
        with self._cond:
            self._failures = 0
            self._retry_at = 0.0
            self._in_flight = 0

    def failed(self, batch: Batch) -> float:
        """Requeue `batch` and hold every batch back for the returned, growing number of seconds."""
        with self._cond:
            self._failures += 1
            delay = min(max(self._debounce, MIN_RETRY_SECONDS) * 2 ** (self._failures - 1), MAX_RETRY_SECONDS)
            self._retry_at = time.monotonic() + delay
            self._put_back(batch)
            self._in_flight = 0
        return delay

    def clear(self) -> None:
        with self._cond:
            self._pending.clear()
            self._heap.clear()
            self._in_flight = 0
            self._retry_at = 0.0
            self._failures = 0

    def _due(self, item: Pending) -> float:
        return min(item.last + self._debounce, item.first + self._max_delay)

    def _wait_seconds(self, now: float, until: float) -> float:
        wake = until
        if self._heap:
            wake = min(wake, max(self._heap[0][0] + self._grace, self._retry_at))
        return max(wake - now, 0.0)

    def _take_due(self, now: float) -> Batch:
        """Remove and return everything due by `now`, once the earliest has waited out the grace time.
        Called with the lock held."""
        if now < self._retry_at or not self._heap or self._heap[0][0] + self._grace > now:
            return {}
        batch: Batch = {}
        while self._heap and self._heap[0][0] <= now:
            _, key = heapq.heappop(self._heap)
            item = self._pending.get(key)
            if item is None:
                continue  # a stale entry of a path already dispatched
            due = self._due(item)
            if due <= now:
                batch[key] = self._pending.pop(key)
            else:
                heapq.heappush(self._heap, (due, key))
        self._in_flight = len(batch) - (RESCAN in batch)
        return batch

    def _put_back(self, batch: Batch) -> None:
        """Requeue a failed batch, merged with what was touched meanwhile. Called with the lock held."""
        for key, old in batch.items():
            item = self._pending.get(key)
            if item is None:
                item = self._pending[key] = old
            else:
                item.first = min(item.first, old.first)
            heapq.heappush(self._heap, (self._due(item), key))
