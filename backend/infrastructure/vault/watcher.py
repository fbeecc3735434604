"""Follow an Obsidian vault on disk and hand debounced batches of changed notes to the indexer.

A watchdog observer reports raw file-system events; this adapter keeps only those that concern notes
(`backend.domain.notes.vault_rules`), waits until each path has been quiet for `debounce_seconds` (editors
save often, and atomically through temp files), and calls `on_changes` with everything due at that moment in
one `VaultChanges` batch, on a single dispatcher thread. The batch only names what to recheck: the
callback compares those paths with the disk, so a lost ordering between events never matters.

Nothing is dropped silently: a failing callback gets its batch back for a later retry, and a dead observer
(thread crashed, vault folder deleted, moved or replaced) is restarted with a `rescan` batch, because
events may have been missed while nobody watched.

This module runs the threads and the supervision; events become keys in `events`, keys wait out
their quiet time in `debouncer`, and the watchdog observer is started and checked in `observer`.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from watchdog.events import FileSystemEvent
from watchdog.observers.api import BaseObserver

from backend.domain.errors import KnowledgeBridgeError
from backend.infrastructure.vault.debouncer import Batch, Debouncer
from backend.infrastructure.vault.events import RESCAN, VaultChanges, changes, event_keys
from backend.infrastructure.vault.observer import folder_identity, halt, start_observer, thread_problem

log = logging.getLogger(__name__)


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
        self._deny = tuple(deny_dirs)
        self._allow = tuple(allow_dirs)
        self._supervise_seconds = supervise_seconds
        # Shared by the observer thread (events), the dispatcher (batches) and the status readers.
        self._debouncer = Debouncer(debounce_seconds, max_delay_seconds)
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
            self._debouncer.wake()
        if observer is not None:
            halt(observer, timeout)
        if dispatcher is not None and dispatcher is not threading.current_thread():
            dispatcher.join(timeout)
            if dispatcher.is_alive():
                log.warning(
                    "vault watcher: on_changes still running after %.1fs; not waiting for it", timeout
                )
        self._debouncer.clear()

    @property
    def running(self) -> bool:
        """Observer and dispatcher both alive."""
        observer, dispatcher = self._observer, self._dispatcher
        return (
            observer is not None
            and dispatcher is not None
            and dispatcher.is_alive()
            and thread_problem(observer) is None
        )

    @property
    def pending_changes(self) -> int:
        """Paths and folders waiting for their quiet time or being applied now."""
        return self._debouncer.pending

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
            keys = event_keys(event, self._prefix, self._deny, self._allow)
        except Exception as exc:
            log.exception("vault watcher: could not handle %r", event)
            self._last_error = f"event handling failed: {exc!r}"
            keys = [RESCAN]
        if keys:
            self._debouncer.record(keys, time.monotonic())

    # -- dispatching (dispatcher thread) --------------------------------------------------------------

    def _run(self, stop_token: threading.Event) -> None:
        next_check = time.monotonic() + self._supervise_seconds
        while True:
            batch = self._debouncer.next_batch(stop_token, next_check)
            if batch is None:
                return
            if batch:
                self._deliver(batch)
            if time.monotonic() >= next_check:
                self._supervise_safely(stop_token)
                next_check = time.monotonic() + self._supervise_seconds

    def _deliver(self, batch: Batch) -> None:
        batch_changes = changes(batch.keys())
        try:
            self._on_changes(batch_changes)
        except Exception as exc:
            delay = self._debouncer.failed(batch)
            self._last_error = f"applying vault changes failed: {exc!r}"
            # an expected failure (disk full, store down) says what it is; anything else gets its traceback
            log.log(
                logging.ERROR,
                "vault watcher: applying %d paths / %d folders%s failed; retrying in %.1fs: %s",
                len(batch_changes.paths),
                len(batch_changes.folders),
                " (rescan)" if batch_changes.rescan else "",
                delay,
                exc.detail if isinstance(exc, KnowledgeBridgeError) else exc,
                exc_info=not isinstance(exc, KnowledgeBridgeError),
            )
        else:
            self._debouncer.delivered()

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
                halt(observer, self._supervise_seconds)
            replacement = self._try_start_observer()
            if replacement is None:
                return
            self._observer = replacement
            self._restarts += 1
        log.warning("vault watcher: observer restarted; rescanning the vault for changes it missed")
        self._debouncer.record([RESCAN], time.monotonic())

    def _problem(self, observer: BaseObserver) -> str | None:
        """Why `observer` no longer reports the vault's events, or None when it does."""
        problem = thread_problem(observer)
        if problem is not None:
            return f"{problem} (vault folder {self._root})"
        if folder_identity(self._root) != self._identity:
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
        identity = folder_identity(self._root)
        if identity is None:
            raise FileNotFoundError(f"not a folder: {self._root}")
        real_root = identity[0]
        self._prefix = real_root if real_root.endswith(os.sep) else real_root + os.sep
        self._identity = identity
        return start_observer(real_root, self._on_event, self._supervise_seconds)
