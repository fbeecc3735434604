"""What qdrant-edge's failures mean: damaged files, a full disk, a shard another process holds.

qdrant-edge raises bare `Exception`s (and Rust panics, as BaseException), so the engine and the index catalog
map every failure through here to the domain error a caller can act on.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backend.domain.errors import (
    IndexCorruptedError,
    IndexUnavailableError,
    KnowledgeBridgeError,
    StorageFullError,
    StoreError,
)
from backend.infrastructure.qdrant.engine import describe_error

# Words of qdrant-edge errors that mean its files are damaged (a shard, segment or WAL that cannot be read
# back), or that the disk is full. Matched on the text: qdrant-edge raises bare `Exception`s.
_DAMAGED = (
    "failed to load segment",
    "deserialize",
    "decode",
    "decompress",
    "out of bounds",
    "can't init wal",
    "invalid utf-8",
    "unexpected end of file",
    "checksum",
    "corrupt",
)
_DISK_FULL = (
    "no space left on device",
    "os error 28",
    "disk quota exceeded",
    "file too large",
    "os error 27",
)


def is_engine_panic(exc: BaseException) -> bool:
    """A Rust panic inside qdrant-edge surfaces as pyo3's `PanicException`, a BaseException: on files it
    reads back that is damage (seen with a garbled payload index), never something to retry."""
    return type(exc).__name__ == "PanicException"


def edge_error(action: str, exc: BaseException) -> KnowledgeBridgeError:
    """The domain error for a qdrant-edge failure: damaged files, a full disk, or anything else."""
    text = describe_error(exc) if is_engine_panic(exc) else str(exc)
    lowered = text.lower()
    if any(sign in lowered for sign in _DISK_FULL):
        return StorageFullError(f"could not {action}: the disk holding the index is full ({text})")
    if is_engine_panic(exc) or any(sign in lowered for sign in _DAMAGED):
        return IndexCorruptedError(f"could not {action}: the index files are damaged ({text})")
    return StoreError(f"could not {action}: {text}")


@contextmanager
def edge_errors_mapped(action: str) -> Iterator[None]:
    """qdrant-edge raises bare `Exception` (and panics, as BaseException): none of it reaches the caller."""
    try:
        yield
    except KnowledgeBridgeError:
        raise
    except Exception as exc:
        raise edge_error(action, exc) from exc
    except BaseException as exc:
        if not is_engine_panic(exc):
            raise  # KeyboardInterrupt, SystemExit
        raise edge_error(action, exc) from exc


def edge_load_error(shard_dir: Path, exc: BaseException) -> KnowledgeBridgeError:
    text = str(exc)
    if not is_engine_panic(exc) and ("WouldBlock" in text or "lock" in text.lower()):
        return IndexUnavailableError(
            f"the index at {shard_dir} is in use by another process: {text}",
            suggestion="Stop the other Knowledge Bridge process using this data directory, then retry.",
        )
    error = edge_error(f"open the index at {shard_dir}", exc)
    if type(error) is StoreError:
        # a shard that exists but cannot be loaded is damaged, whatever the engine's words for it
        return IndexCorruptedError(error.detail)
    return error


def ensure_edge_shard_free(shard_dir: Path) -> None:
    """Refuse to delete a shard that is open (here or in another process): its files would vanish under it.

    An open shard holds an exclusive flock on its `wal` folder (qdrant-edge 0.9; the contract tests catch a
    change). Asking for that lock reads and writes nothing: loading the shard to find out would replay its
    log, which fails on a damaged shard and, on a full disk, gets the process killed (see disk_space.py).
    A shard without a log folder (half-created) holds nothing.
    """
    wal = shard_dir / "wal"
    try:
        fd = os.open(wal, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise IndexUnavailableError(
            f"the index at {shard_dir} is in use",
            suggestion="Stop the other Knowledge Bridge process using this data directory, then retry.",
        ) from None
    finally:
        os.close(fd)  # also releases the probe's own lock
