"""DATA_DIR must be writable by this process: the embedded index, the embedding cache and models built on a
first start live there.

Checked once before anything opens it, so that a folder this user cannot write (typically a Docker bind
mount owned by root, while the image runs as uid 10001) is one message that names the folder, the user and
the command that fixes it, instead of a traceback from whichever component touches it first (it was SQLite's
"unable to open database file").
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path


def data_dir_problem(path: Path) -> str | None:
    """None when this process can create files in `path` (created first when missing); otherwise what is
    wrong and what to do, in one line."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        # creating a file is the only test that tells (ACLs, read-only mounts, root squashing on NFS)
        with tempfile.TemporaryFile(dir=path, prefix=".write-check-"):
            pass
    except OSError as exc:
        return _describe(path, exc)
    return None


def _describe(path: Path, exc: OSError) -> str:
    if exc.errno == errno.EROFS:
        return f"{path} is on a read-only file system: mount it read-write"
    if exc.errno == errno.ENOSPC:
        return f"{path}: no space left on its disk; free some and start again"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        return f"{path} is not a directory (a file is in its way): point DATA_DIR at a folder"
    if exc.errno not in (errno.EACCES, errno.EPERM):
        return f"{path} cannot be written: {exc.strerror or exc}"
    uid, gid = os.geteuid(), os.getegid()
    existing = next(p for p in (path, *path.parents) if p.exists())
    found = existing.stat()
    owner = f"{existing} belongs to uid {found.st_uid}, gid {found.st_gid}, mode {found.st_mode & 0o777:04o}"
    if existing == path:
        fix = f"`chown -R {uid}:{gid} {path}`"
    else:
        fix = f"`mkdir -p {path} && chown {uid}:{gid} {path}`"
    return (
        f"{path} is not writable by this process (uid {uid}, gid {gid}): {owner}. Give it to that user as "
        f"root: {fix} (for a Docker bind mount, run it on the host folder mounted at {path} instead, or "
        "use a named volume)"
    )
