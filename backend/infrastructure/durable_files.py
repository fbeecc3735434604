"""Small JSON records next to the index (identity, active generation) that survive a crash whole."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any


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
