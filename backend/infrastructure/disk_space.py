"""Refuse index writes while the disk holding the index is (nearly) full.

qdrant-edge writes through memory-mapped files. When a write touches a page the file system cannot back
any more, the kernel does not return an error: it kills the process with SIGBUS (seen on a full tmpfs: the
whole service died mid-sync). So writes are refused, with a clear error, while less than `min_free_bytes`
is free; the serving index stays as it was and keeps answering. This is a margin, not a guarantee: a disk
filled faster than that between two checks (by another program) can still stop the process, and the index
then comes back at restart as of its last completed write (its write-ahead log).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from backend.domain.errors import StorageFullError

MB = 1024 * 1024


class DiskGuard:
    def __init__(self, path: Path, min_free_bytes: int) -> None:
        self._path = Path(path)
        self._min_free = min_free_bytes

    def keep_free(self, min_free_bytes: int) -> None:
        """A new margin, from the next check on."""
        self._min_free = min_free_bytes

    def check(self, action: str) -> None:
        """Raise StorageFullError before `action` when the disk is below the margin."""
        if self._min_free <= 0:
            return
        free = self.free_bytes()
        if free is not None and free < self._min_free:
            raise StorageFullError(
                f"refusing to {action}: {free / MB:.1f} MB free on the disk holding {self._path}, "
                f"below the {self._min_free / MB:.0f} MB kept free (MIN_FREE_DISK_MB); nothing was changed"
            )

    def free_bytes(self) -> int | None:
        """Free bytes for unprivileged writers on the file system of the path (its nearest existing
        ancestor), or None when that cannot be told."""
        path = self._path
        while not path.exists() and path != path.parent:
            path = path.parent
        try:
            if hasattr(os, "statvfs"):
                stats = os.statvfs(path)
                return stats.f_bavail * stats.f_frsize
            return shutil.disk_usage(path).free
        except OSError:
            return None


NO_GUARD = DiskGuard(Path("."), 0)
