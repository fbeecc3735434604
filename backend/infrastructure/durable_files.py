"""Small JSON records next to the index (identity, active generation) that survive a crash whole."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


def write_json_durably(target: Path, record: dict[str, Any]) -> None:
    """Replace `target` so that after a crash it holds either the old or the new record, never a mix."""
    target.parent.mkdir(parents=True, exist_ok=True)
    # a temporary file of this writer's own: two writers of one record (two threads, or two processes on one
    # data dir) would otherwise write into one temporary file and rename it from under each other
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(record, fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)  # of this writer alone: no other writes into it, and none would remove it
        raise
    _fsync_dir(target.parent)  # the rename itself is only durable once the directory is on disk


def _fsync_dir(directory: Path) -> None:
    if os.name == "nt":
        return  # directories cannot be opened there; NTFS journals the rename
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def read_json_record(target: Path, read: Callable[[dict[str, Any]], T], otherwise: str) -> T | None:
    """The record `write_json_durably` kept at `target`, as `read` makes it, or None: none kept, or one that
    cannot be read (a layout of another version, a field missing), said in the log with what follows
    (`otherwise`), never an error that stops a start or a status."""
    if not target.exists():
        return None
    try:
        return read(json.loads(target.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("ignoring %s (%s): %s", target, exc, otherwise)
        return None
