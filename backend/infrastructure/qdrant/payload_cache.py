"""The payloads of the chunks searches read, kept in memory between searches.

A search asks the store for ~100 candidates. Finding them is cheap (0.1 ms on qdrant-edge for a keyword
query over LoCoMo dev); reading their payloads is not: each is read and decoded whole, ~10 µs a point, so
1.1 ms of the 1.2 ms query (and the same for a hybrid search's payload read). So the chunk store keeps the
payloads it read, within a memory budget (SEARCH_CACHE_MB), and reads the stored ones in at start-up
(`QdrantChunkStore.warm`) as far as the budget goes: the Zettelkasten's 25,714 take 72 MB.

Never stale: the chunk store drops a chunk's entry whenever it writes or deletes it (`forget`,
`forget_note`, `clear`), and a payload read from the store is kept only when nothing was forgotten between
the read and the keeping (`epoch`): a search (or the warm-up) that read a chunk just before a write cannot
put its old payload back after the write dropped it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

from backend.domain.index.payload import NOTE_PATH

# What a kept payload costs in memory besides its text, as Python objects: a dict of ~16 fields, their
# strings and lists (2.8 KB measured a Zettelkasten chunk of 200 characters, tracemalloc, 25,714 payloads)
PAYLOAD_OVERHEAD = 2_600


def payload_bytes(payload: dict[str, Any]) -> int:
    """About what a payload takes in memory (its text counted once a character: most notes are ASCII)."""
    return PAYLOAD_OVERHEAD + len(str(payload.get("content", "")))


class PayloadCache:
    """Payloads by point id, at most `budget` bytes of them (`payload_bytes`; the least recently read leave
    first); a budget of 0 keeps none. With a kept payload, its point's keyword terms once read (a hit's
    confidence counts them)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.used = 0
        self._entries: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._terms: dict[str, frozenset[int]] = {}
        self._by_note: dict[str, set[str]] = {}
        self._lock = threading.Lock()
        self._epoch = 0
        self.hits = 0
        self.misses = 0

    @property
    def epoch(self) -> int:
        """Changes with every forgetting; read it before reading the store, give it to `keep`."""
        return self._epoch

    def __len__(self) -> int:
        return len(self._entries)

    def found(self, ids: Iterable[str]) -> tuple[dict[str, dict[str, Any]], list[str]]:
        """The kept payloads of `ids` (each a copy: a caller never holds the kept one), and the ids not
        kept, in the order given."""
        found: dict[str, dict[str, Any]] = {}
        missing: list[str] = []
        with self._lock:
            entries = self._entries
            for point_id in ids:
                payload = entries.get(point_id)
                if payload is None:
                    missing.append(point_id)
                else:
                    entries.move_to_end(point_id)
                    found[point_id] = dict(payload)
            self.hits += len(found)
            self.misses += len(missing)
        return found, missing

    def keep(
        self, epoch: int, payloads: Mapping[str, dict[str, Any]], *, only_into_room: bool = False
    ) -> int:
        """Keep payloads read from the store when `epoch` was current, unless something was forgotten since
        (the read may predate a write); how many were kept. The dicts are kept as given: pass ones nobody
        else holds. `only_into_room`: keep what fits without making any other payload leave (warming)."""
        if not self.budget or not payloads:
            return 0
        kept = 0
        with self._lock:
            if epoch != self._epoch:
                return 0
            for point_id, payload in payloads.items():
                size = payload_bytes(payload)
                if only_into_room and (point_id in self._entries or self.used + size > self.budget):
                    continue
                self._drop(point_id)
                self._entries[point_id] = payload
                self.used += size
                self._by_note.setdefault(str(payload.get(NOTE_PATH, "")), set()).add(point_id)
                kept += 1
            while self.used > self.budget:
                self._drop(next(iter(self._entries)))
        return kept

    @property
    def full(self) -> bool:
        """No payload of a typical size fits any more."""
        return self.used + PAYLOAD_OVERHEAD > self.budget

    def terms(self, ids: Iterable[str]) -> tuple[dict[str, frozenset[int]], list[str]]:
        """The kept keyword terms of `ids`, and the ids without, in the order given."""
        found: dict[str, frozenset[int]] = {}
        missing: list[str] = []
        with self._lock:
            for point_id in ids:
                terms = self._terms.get(point_id)
                if terms is None:
                    missing.append(point_id)
                else:
                    found[point_id] = terms
        return found, missing

    def keep_terms(self, epoch: int, terms: Mapping[str, frozenset[int]]) -> None:
        """Keep terms read from the store when `epoch` was current, for points whose payload is kept."""
        with self._lock:
            if epoch != self._epoch:
                return
            for point_id, found in terms.items():
                if point_id in self._entries:
                    self._terms[point_id] = found

    def forget(self, ids: Iterable[str]) -> None:
        """Drop the entries of points just written or deleted (after the write: a read begun before it is
        then refused by `keep`)."""
        with self._lock:
            self._epoch += 1
            for point_id in ids:
                self._drop(point_id)

    def forget_note(self, note_path: str) -> None:
        """Drop every entry of a note's chunks (a delete by note path names no ids)."""
        with self._lock:
            self._epoch += 1
            for point_id in list(self._by_note.get(note_path, ())):
                self._drop(point_id)

    def clear(self) -> None:
        with self._lock:
            self._epoch += 1
            self._entries.clear()
            self.used = 0
            self._by_note.clear()
            self._terms.clear()

    def _drop(self, point_id: str) -> None:
        payload = self._entries.pop(point_id, None)
        if payload is None:
            return
        self.used -= payload_bytes(payload)  # what it was counted at: a kept payload never changes
        self._terms.pop(point_id, None)
        note = str(payload.get(NOTE_PATH, ""))
        ids = self._by_note.get(note)
        if ids is not None:
            ids.discard(point_id)
            if not ids:
                del self._by_note[note]
