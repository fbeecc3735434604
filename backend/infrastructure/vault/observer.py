"""The watchdog observer on the vault folder: started, checked for dead threads, and stopped.

An observer dies quietly: a crashed thread or a vault folder deleted, moved or replaced leaves it
running but deaf. These helpers let the watcher notice that (`thread_problem`, `folder_identity`)
and replace it (`start_observer`, `halt`).
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileAttribEvent,
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

log = logging.getLogger(__name__)

# Asked of the kernel (inotify mask), so reads of notes (open / close-no-write, by Obsidian or by our own
# indexer) never reach Python at all. A note's attribute change is asked for: a note unreadable when its
# edit was read (its permissions, a sync tool's lock) is read again when it is made readable, which
# writes nothing and says so only as a change of its mode.
_EVENT_FILTER: list[type[FileSystemEvent]] = [
    FileCreatedEvent,
    FileModifiedEvent,
    FileAttribEvent,
    FileClosedEvent,
    FileDeletedEvent,
    FileMovedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class _Forward(FileSystemEventHandler):
    """Hands every event to the watcher (runs on the observer thread)."""

    def __init__(self, sink: Callable[[FileSystemEvent], None]) -> None:
        self._sink = sink

    def dispatch(self, event: FileSystemEvent) -> None:
        self._sink(event)


def start_observer(
    real_root: str, sink: Callable[[FileSystemEvent], None], halt_timeout: float
) -> BaseObserver:
    """A running observer handing every event under `real_root` to `sink`."""
    observer = Observer()
    try:
        observer.schedule(_Forward(sink), real_root, recursive=True, event_filter=_EVENT_FILTER)
        observer.start()
    except BaseException:
        halt(observer, halt_timeout)  # the inotify reader thread is already running
        raise
    return observer


def folder_identity(root: Path) -> tuple[str, int, int] | None:
    """(realpath, device, inode) of the vault folder: a change means we watch the wrong folder."""
    real = os.path.realpath(root)
    try:
        st = os.stat(real)
    except OSError:
        return None
    return (real, st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None


def thread_problem(observer: BaseObserver) -> str | None:
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


def halt(observer: BaseObserver, timeout: float) -> None:
    """Stop an observer, dead or alive, without letting its failure stop us."""
    try:
        observer.stop()
        if observer.is_alive():
            observer.join(timeout)
    except Exception:
        log.debug("vault watcher: stopping the observer failed", exc_info=True)
