"""Follow an Obsidian vault on disk and hand debounced batches of changed notes to the indexer.

A watchdog observer reports raw file-system events; this adapter keeps only those that concern notes
(`backend.domain.vault_rules`), waits until each path has been quiet for `debounce_seconds` (editors save
often, and atomically through temp files), and calls `on_changes` with everything due at that moment in
one `VaultChanges` batch, on a single dispatcher thread. The batch only names what to recheck: the
callback compares those paths with the disk, so a lost ordering between events never matters.

Nothing is dropped silently: a failing callback gets its batch back for a later retry, and a dead observer
(thread crashed, vault folder deleted, moved or replaced) is restarted with a `rescan` batch, because
events may have been missed while nobody watched.
"""

from __future__ import annotations

import heapq
import logging
import os
import stat
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from watchdog.events import (
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.api import BaseObserver

from backend.domain.errors import KnowledgeBridgeError
from backend.domain.vault_paths import canonical
from backend.domain.vault_rules import is_indexable, should_descend

log = logging.getLogger(__name__)

MAX_RETRY_SECONDS = 60.0
MIN_RETRY_SECONDS = 0.1  # with debounce 0 a failing callback must still not spin
MAX_GRACE_SECONDS = 0.5

# Asked of the kernel (inotify mask), so reads of notes (open / close-no-write, by Obsidian or by our own
# indexer) and attribute changes never reach Python at all.
_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]
_FILE_CHANGES = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_MODIFIED, EVENT_TYPE_CLOSED, EVENT_TYPE_DELETED})
_DIR_CHANGES = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_DELETED})  # a modified folder is just noise

_PATH = "path"
_FOLDER = "folder"
_RESCAN: tuple[str, str] = ("rescan", "")
_Key = tuple[str, str]  # (kind, vault-relative path)


@dataclass(frozen=True, slots=True)
class VaultChanges:
    paths: frozenset[str]  # notes created, modified, deleted or moved (either side): recheck each on disk
    folders: frozenset[str]  # folders created, deleted or moved (either side): recheck their whole subtree
    rescan: bool = False  # events may have been lost (observer restarted): compare the whole vault


@dataclass(slots=True)
class _Pending:
    first: float  # monotonic time of the first event since the path was last dispatched
    last: float  # monotonic time of the latest event


class _Forward(FileSystemEventHandler):
    """Hands every event to the watcher (runs on the observer thread)."""

    def __init__(self, sink: Callable[[FileSystemEvent], None]) -> None:
        self._sink = sink

    def dispatch(self, event: FileSystemEvent) -> None:
        self._sink(event)


class VaultWatcher:
    """Watch `root` and call `on_changes` with debounced batches; see the module docstring."""

    def __init__(
        self,
        root: Path,
        on_changes: Callable[[VaultChanges], None],
        *,
        debounce_seconds: float = 2.0,
        max_delay_seconds: float | None = None,
        deny_dirs: Sequence[str] = (),
        allow_dirs: Sequence[str] = (),
        supervise_seconds: float = 1.0,
    ) -> None:
        if debounce_seconds < 0:
            raise ValueError("debounce_seconds must be >= 0")
        if supervise_seconds <= 0:
            raise ValueError("supervise_seconds must be > 0")
        if max_delay_seconds is None:
            max_delay_seconds = max(10 * debounce_seconds, 10.0)
        if max_delay_seconds <= 0:
            raise ValueError("max_delay_seconds must be > 0")
        self._root = Path(root)
        self._on_changes = on_changes
        self._debounce = debounce_seconds
        self._max_delay = max_delay_seconds
        # Paths that fall due a moment apart (one save touching several notes) wait for each other, so
        # they share a batch; nothing ever goes out before its quiet time.
        self._grace = min(debounce_seconds / 4, MAX_GRACE_SECONDS)
        self._deny = tuple(deny_dirs)
        self._allow = tuple(allow_dirs)
        self._supervise_seconds = supervise_seconds
        self._handler = _Forward(self._on_event)

        # Event bookkeeping, shared by the observer thread, the dispatcher and the status readers.
        self._cond = threading.Condition(threading.Lock())
        self._pending: dict[_Key, _Pending] = {}
        # (due, key) entries; an entry may be early (the path was touched again since): it is then pushed
        # back with its real due time when it comes up, so each event costs O(1) and a burst one entry.
        self._heap: list[tuple[float, _Key]] = []
        self._in_flight = 0
        self._retry_at = 0.0
        self._failures = 0
        self._restarts = 0
        self._last_error: str | None = None

        # Observer lifecycle, serialised between start/stop and the dispatcher's supervision.
        self._lifecycle = threading.RLock()
        self._observer: BaseObserver | None = None
        self._dispatcher: threading.Thread | None = None
        self._stop_token = threading.Event()
        self._prefix = ""  # realpath of the watched root plus a separator
        self._identity: tuple[str, int, int] | None = None  # (realpath, st_dev, st_ino) being watched
        self._reported: str | None = None  # the start failure already logged at ERROR

    # -- public interface ----------------------------------------------------------------------------

    def start(self) -> None:
        """Start watching (idempotent). A missing vault folder is logged and retried, never raised."""
        with self._lifecycle:
            if self._dispatcher is not None:
                return
            self._stop_token = threading.Event()
            self._observer = self._try_start_observer()
            self._dispatcher = threading.Thread(
                target=self._run, args=(self._stop_token,), name="vault-watcher", daemon=True
            )
            self._dispatcher.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the observer and the dispatcher (idempotent). Pending changes are dropped: the next start
        reconciles the whole vault anyway."""
        with self._lifecycle:
            observer, self._observer = self._observer, None
            dispatcher, self._dispatcher = self._dispatcher, None
            self._stop_token.set()
            with self._cond:
                self._cond.notify_all()
        if observer is not None:
            _halt(observer, timeout)
        if dispatcher is not None and dispatcher is not threading.current_thread():
            dispatcher.join(timeout)
            if dispatcher.is_alive():
                log.warning(
                    "vault watcher: on_changes still running after %.1fs; not waiting for it", timeout
                )
        with self._cond:
            self._pending.clear()
            self._heap.clear()
            self._in_flight = 0
            self._retry_at = 0.0
            self._failures = 0

    @property
    def running(self) -> bool:
        """Observer and dispatcher both alive."""
        observer, dispatcher = self._observer, self._dispatcher
        return (
            observer is not None
            and dispatcher is not None
            and dispatcher.is_alive()
            and _thread_problem(observer) is None
        )

    @property
    def pending_changes(self) -> int:
        """Paths and folders waiting for their quiet time or being applied now."""
        with self._cond:
            return len(self._pending) - (_RESCAN in self._pending) + self._in_flight

    @property
    def restarts(self) -> int:
        return self._restarts

    @property
    def last_error(self) -> str | None:
        """The last observer or callback failure (kept after recovery, for /index/status)."""
        return self._last_error

    # -- events (observer thread) ---------------------------------------------------------------------

    def _on_event(self, event: FileSystemEvent) -> None:
        # An exception here would kill the observer thread; an event we failed to read may be a lost
        # change, so it asks for a rescan rather than vanishing.
        try:
            keys = self._keys_for(event)
        except Exception as exc:
            log.exception("vault watcher: could not handle %r", event)
            self._last_error = f"event handling failed: {exc!r}"
            keys = [_RESCAN]
        if keys:
            self._record(keys, time.monotonic())

    def _keys_for(self, event: FileSystemEvent) -> list[_Key]:
        kind = event.event_type
        if event.is_directory:
            if kind == EVENT_TYPE_MOVED or kind in _DIR_CHANGES:
                sides = [self._relative(event.src_path), self._relative(event.dest_path)]
                return [
                    (_FOLDER, rel) for rel in sides if rel and should_descend(rel, self._deny, self._allow)
                ]
            return []
        if kind == EVENT_TYPE_MOVED or kind in _FILE_CHANGES:
            sides = [self._relative(event.src_path), self._relative(event.dest_path)]
            return [(_PATH, rel) for rel in sides if rel and is_indexable(rel, self._deny, self._allow)]
        return []  # opened, closed without writing, attribute changes

    def _relative(self, path: bytes | str) -> str | None:
        """Vault-relative with "/" separators; None for the root itself or anything outside it."""
        text = os.fsdecode(path)
        prefix = self._prefix
        if not text or not prefix or not text.startswith(prefix):
            return None
        rel = text[len(prefix) :]
        # in NFC, as the index names notes (a file synced from macOS is named in NFD on the disk)
        return canonical(rel.replace(os.sep, "/") if os.sep != "/" else rel)

    def _record(self, keys: Iterable[_Key], now: float) -> None:
        with self._cond:
            added = False
            for key in keys:
                item = self._pending.get(key)
                if item is None:
                    item = self._pending[key] = _Pending(first=now, last=now)
                    heapq.heappush(self._heap, (self._due(item), key))
                    added = True
                else:
                    item.last = now  # its heap entry is now early; see `_take_due`
            if added:  # a later touch only moves a due time back, which the dispatcher finds by itself
                self._cond.notify()

    # -- dispatching (dispatcher thread) --------------------------------------------------------------

    def _due(self, item: _Pending) -> float:
        return min(item.last + self._debounce, item.first + self._max_delay)

    def _run(self, stop_token: threading.Event) -> None:
        next_check = time.monotonic() + self._supervise_seconds
        while True:
            batch: dict[_Key, _Pending] | None = None
            with self._cond:
                while not stop_token.is_set():
                    now = time.monotonic()
                    if now >= next_check:
                        break
                    batch = self._take_due(now)
                    if batch:
                        break
                    self._cond.wait(self._wait_seconds(now, next_check))
                if stop_token.is_set():
                    return
            if batch:
                self._deliver(batch)
            if time.monotonic() >= next_check:
                self._supervise_safely(stop_token)
                next_check = time.monotonic() + self._supervise_seconds

    def _wait_seconds(self, now: float, next_check: float) -> float:
        wake = next_check
        if self._heap:
            wake = min(wake, max(self._heap[0][0] + self._grace, self._retry_at))
        return max(wake - now, 0.0)

    def _take_due(self, now: float) -> dict[_Key, _Pending] | None:
        """Remove and return everything due by `now`, once the earliest has waited out the grace time.
        Called with the lock held."""
        if now < self._retry_at or not self._heap or self._heap[0][0] + self._grace > now:
            return None
        batch: dict[_Key, _Pending] = {}
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
        self._in_flight = len(batch) - (_RESCAN in batch)
        return batch or None

    def _deliver(self, batch: dict[_Key, _Pending]) -> None:
        changes = _changes(batch.keys())
        try:
            self._on_changes(changes)
        except Exception as exc:
            with self._cond:
                self._failures += 1
                delay = min(
                    max(self._debounce, MIN_RETRY_SECONDS) * 2 ** (self._failures - 1), MAX_RETRY_SECONDS
                )
                self._retry_at = time.monotonic() + delay
                self._put_back(batch)
                self._in_flight = 0
                self._last_error = f"applying vault changes failed: {exc!r}"
            # an expected failure (disk full, store down) says what it is; anything else gets its traceback
            log.log(
                logging.ERROR,
                "vault watcher: applying %d paths / %d folders%s failed; retrying in %.1fs: %s",
                len(changes.paths),
                len(changes.folders),
                " (rescan)" if changes.rescan else "",
                delay,
                exc.detail if isinstance(exc, KnowledgeBridgeError) else exc,
                exc_info=not isinstance(exc, KnowledgeBridgeError),
            )
        else:
            with self._cond:
                self._failures = 0
                self._retry_at = 0.0
                self._in_flight = 0

    def _put_back(self, batch: dict[_Key, _Pending]) -> None:
        """Requeue a failed batch, merged with what was touched meanwhile. Called with the lock held."""
        for key, old in batch.items():
            item = self._pending.get(key)
            if item is None:
                item = self._pending[key] = old
            else:
                item.first = min(item.first, old.first)
            heapq.heappush(self._heap, (self._due(item), key))

    # -- supervision (dispatcher thread) --------------------------------------------------------------

    def _supervise_safely(self, stop_token: threading.Event) -> None:
        try:
            self._supervise(stop_token)
        except Exception as exc:  # the dispatcher must outlive any surprise here
            log.exception("vault watcher: supervision failed")
            self._last_error = f"supervision failed: {exc!r}"

    def _supervise(self, stop_token: threading.Event) -> None:
        with self._lifecycle:
            if stop_token.is_set():
                return
            observer = self._observer
            if observer is not None:
                problem = self._problem(observer)
                if problem is None:
                    return
                log.error("vault watcher: %s; restarting the observer", problem)
                self._last_error = problem
                self._observer = None
                _halt(observer, self._supervise_seconds)
            replacement = self._try_start_observer()
            if replacement is None:
                return
            self._observer = replacement
            self._restarts += 1
        log.warning("vault watcher: observer restarted; rescanning the vault for changes it missed")
        self._record([_RESCAN], time.monotonic())

    def _problem(self, observer: BaseObserver) -> str | None:
        """Why `observer` no longer reports the vault's events, or None when it does."""
        problem = _thread_problem(observer)
        if problem is not None:
            return f"{problem} (vault folder {self._root})"
        if _identity(self._root) != self._identity:
            return f"the vault folder {self._root} was moved, replaced or deleted"
        return None

    def _try_start_observer(self) -> BaseObserver | None:
        """A running observer on the vault's realpath, or None (logged, `last_error` set) when it cannot."""
        try:
            observer = self._start_observer()
        except Exception as exc:
            message = f"cannot watch the vault folder {self._root}: {exc}"
            self._last_error = message
            if message != self._reported:  # retried every interval: say it once, then quietly retry
                log.error("vault watcher: %s; retrying every %.1fs", message, self._supervise_seconds)
                self._reported = message
            else:
                log.debug("vault watcher: %s", message)
            return None
        if self._reported is not None:
            log.info("vault watcher: watching %s again", self._root)
        self._reported = None
        return observer

    def _start_observer(self) -> BaseObserver:
        identity = _identity(self._root)
        if identity is None:
            raise FileNotFoundError(f"not a folder: {self._root}")
        real_root = identity[0]
        self._prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
        self._identity = identity
        observer = Observer()
        try:
            observer.schedule(self._handler, real_root, recursive=True, event_filter=_EVENT_FILTER)
            observer.start()
        except BaseException:
            _halt(observer, self._supervise_seconds)  # the inotify reader thread is already running
            raise
        return observer


def _changes(keys: Iterable[_Key]) -> VaultChanges:
    """The batch for these keys; entries inside a folder of the same batch are left out, since the
    folder's subtree is rechecked whole (a moved folder also reports every file and subfolder in it)."""
    keys = list(keys)
    folders = {rel for kind, rel in keys if kind == _FOLDER}
    return VaultChanges(
        paths=frozenset(rel for kind, rel in keys if kind == _PATH and not _inside(rel, folders)),
        folders=frozenset(rel for rel in folders if not _inside(rel, folders)),
        rescan=_RESCAN in keys,
    )


def _inside(rel: str, folders: set[str]) -> bool:
    if not folders:
        return False
    parts = rel.split("/")
    return any("/".join(parts[:i]) in folders for i in range(1, len(parts)))


def _identity(root: Path) -> tuple[str, int, int] | None:
    """(realpath, device, inode) of the vault folder: a change means we watch the wrong folder."""
    real = os.path.realpath(root)
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (real, st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def _thread_problem(observer: BaseObserver) -> str | None:
    """Which of the observer's threads died, if one did."""
    if not observer.is_alive():
        return "the file observer thread died"
    emitters = list(observer.emitters)
    if not emitters or not all(emitter.is_alive() for emitter in emitters):
        return "the file observer stopped watching the vault folder (deleted?)"
    # The inotify observer reads the kernel on a thread of its own (a private attribute, hence the care):
    # if that one dies, observer and emitters live on and simply never hear of a change again.
    reader = getattr(observer, "_inotify_fd", None)
    if isinstance(reader, threading.Thread) and not reader.is_alive():
        return "the inotify reader thread died"
    return None


def _halt(observer: BaseObserver, timeout: float) -> None:
    """Stop an observer, dead or alive, without letting its failure stop us."""
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout)
    except Exception:
        log.debug("vault watcher: stopping the observer failed", exc_info=True)
