"""The resolved links touching each note lately asked about, kept between searches (related notes).

A search's related notes read the ends of every link touching its results: one store call, but each link's
payload read and decoded (0.5-0.9 ms a search on the Zettelkasten, where a result's hub brings its
backlinks). The results of a vault's searches come back, and its links change only when a note is written:
every write to the links drops all that is kept (`clear`), and a read that began before a write is not kept
after it (`epoch`, as in payload_cache.py).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence

from backend.domain.links import LinkEnds


class LinkEndsCache:
    """At most `capacity` notes' link ends (the least recently asked leave first); 0 keeps none."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._entries: OrderedDict[str, tuple[LinkEnds, ...]] = OrderedDict()
        self._lock = threading.Lock()
        self._epoch = 0

    @property
    def epoch(self) -> int:
        return self._epoch

    def found(self, paths: Iterable[str]) -> tuple[dict[str, tuple[LinkEnds, ...]], list[str]]:
        """The kept link ends of each of `paths`, and the paths not kept, in the order given."""
        found: dict[str, tuple[LinkEnds, ...]] = {}
        missing: list[str] = []
        with self._lock:
            for path in paths:
                ends = self._entries.get(path)
                if ends is None:
                    missing.append(path)
                else:
                    self._entries.move_to_end(path)
                    found[path] = ends
        return found, missing

    def keep(self, epoch: int, read: Mapping[str, Sequence[LinkEnds]]) -> int:
        """Keep what was read from the store when `epoch` was current, unless the links changed since; how
        many notes' link ends were kept."""
        if not self.capacity:
            return 0
        with self._lock:
            if epoch != self._epoch:
                return 0
            for path, ends in read.items():
                self._entries[path] = tuple(ends)
                self._entries.move_to_end(path)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return min(len(read), self.capacity)

    def clear(self) -> None:
        with self._lock:
            self._epoch += 1
            self._entries.clear()


def each_link_once(paths: Sequence[str], ends_of: Mapping[str, Sequence[LinkEnds]]) -> list[LinkEnds]:
    """Every link touching `paths`, once: a link between two of them is in both notes' ends, and counted
    with the one asked first (a link of a note to itself is in its ends once)."""
    order = {path: i for i, path in enumerate(paths)}
    found: list[LinkEnds] = []
    for i, path in enumerate(paths):
        for ends in ends_of[path]:
            other = ends.target if ends.source == path else ends.source
            if order.get(other, i) >= i:
                found.append(ends)
    return found


def split_by_note(paths: Sequence[str], links: Iterable[LinkEnds]) -> dict[str, list[LinkEnds]]:
    """The links (each touching one of `paths` at least) by each of `paths` they touch."""
    by_note: dict[str, list[LinkEnds]] = {path: [] for path in paths}
    for ends in links:
        if ends.source in by_note:
            by_note[ends.source].append(ends)
        if ends.target in by_note and ends.target != ends.source:
            by_note[ends.target].append(ends)
    return by_note
