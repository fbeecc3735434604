"""The generation bookkeeping both index catalogs share: naming, hand-out, switch and drop under one lock.

Generation names. "g0" is the layout written before generations existed, still found in users' data; new
generations are "g1", "g2", ... in the order they were handed out. A persisted counter hands them out, and a
name is never handed out twice: not after a drop, a restart or a crashed build. A name is also past every
generation that has data, so the leftovers of a crashed build are never reused; they stay listed by
`generations()` until someone drops them, and whatever else lies under a new name (a directory a crash left
without shards) is removed when the name is handed out. The counter is guarded by a lock of this process
only: two processes handing out names from one catalog at the same moment could get the same name.

Where a generation lives and how the active one is recorded is each engine's own (`edge`, `client`).
"""

from __future__ import annotations

import logging
import re
import threading
from abc import ABC, abstractmethod

from backend.application.ports import ChunkStore, GraphStore
from backend.domain.errors import IndexCorruptedError

LEGACY = "g0"
# Field names of the records both catalogs keep (a JSON file on edge, a point's payload on a server).
ISSUED_KEY = "last_issued"
OWNER_KEY = "vault"

_GENERATION = re.compile(r"g(0|[1-9][0-9]*)")
_BASE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")

log = logging.getLogger(__name__)


def generation_number(generation: str) -> int:
    """0 for "g0", N for "gN"; ValueError for anything else (a name must never reach a path unchecked)."""
    match = _GENERATION.fullmatch(generation) if isinstance(generation, str) else None
    if match is None:
        raise ValueError(f"not an index generation name: {generation!r}")
    return int(match.group(1))


def checked_base(base: str) -> str:
    """The base unchanged; ValueError unless it is safe in a file name and a collection name alike."""
    if not _BASE.fullmatch(base):
        raise ValueError(f"invalid index base name {base!r}: use letters, digits, '_' and '-'")
    return base


class GenerationCatalog(ABC):
    """The rules both catalogs share; subclasses say where generations live and how the pointer moves."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one name hand-out, switch or drop at a time in this process

    @abstractmethod
    def active(self) -> str | None: ...

    @abstractmethod
    def close(self) -> None: ...

    def open(self, generation: str) -> tuple[ChunkStore, GraphStore]:
        self._check_name(generation)
        return self._stores(generation)

    def new_generation(self) -> str:
        with self._lock:
            active = self._active_if_readable()
            taken = [self._issued_if_readable(), *self._present(), generation_number(active) if active else 0]
            number = max(taken) + 1
            self._set_last_issued(number)  # before anything is built under the name: it is spent now
            generation = f"g{number}"
            self._remove(generation)
            return generation

    def activate(self, generation: str) -> None:
        self._check_name(generation)
        with self._lock:
            if self._active_if_readable() == generation:
                return
            if not self._complete(generation):
                raise ValueError(f"index generation {generation!r} is missing some of its collections")
            self._switch(generation)

    def drop(self, generation: str) -> None:
        self._check_name(generation)
        with self._lock:
            if self.active() == generation:
                raise ValueError(f"index generation {generation!r} is active and cannot be dropped")
            self._remove(generation)

    def generations(self) -> list[str]:
        return [f"g{number}" for number in sorted(self._present())]

    def _active_if_readable(self) -> str | None:
        """The active generation, or None when the record of it is damaged: a rebuild then hands out a name
        past every generation present and its switch writes a sound record over the damaged one."""
        try:
            return self.active()
        except IndexCorruptedError as exc:
            log.warning("ignoring the damaged active-generation record: %s", exc.detail)
            return None

    def _issued_if_readable(self) -> int:
        try:
            return self._last_issued()
        except IndexCorruptedError as exc:  # names past every present generation are still new
            log.warning("ignoring the damaged generation counter: %s", exc.detail)
            return 0

    def _check_name(self, generation: str) -> None:
        generation_number(generation)

    # -- where generations live (subclasses) ------------------------------------------------------

    @abstractmethod
    def _stores(self, generation: str) -> tuple[ChunkStore, GraphStore]: ...

    @abstractmethod
    def _present(self) -> set[int]:
        """Numbers of the generations with any data."""

    @abstractmethod
    def _complete(self, generation: str) -> bool:
        """True when all three of the generation's collections exist."""

    @abstractmethod
    def _switch(self, generation: str) -> None:
        """Make the (complete) generation the active one, atomically and durably."""

    @abstractmethod
    def _remove(self, generation: str) -> None:
        """Delete whatever exists of the generation (nothing there is fine)."""

    @abstractmethod
    def _last_issued(self) -> int:
        """The number of the last generation name handed out (0: none yet)."""

    @abstractmethod
    def _set_last_issued(self, number: int) -> None: ...
