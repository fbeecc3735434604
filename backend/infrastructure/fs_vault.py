"""The vault on the local disk, read-only. Every read is checked to stay inside the vault root.

Every way a file is reached (scan, stat, read, the file list links resolve against) resolves symlinks first
and refuses what leads out of the vault. Files are opened read-only and never written, created or touched.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path

from backend.domain.models import FileProblem, NoteFile
from backend.domain.vault_rules import is_indexable
from backend.infrastructure.vault_scanner import scan_vault_detailed

MAX_NOTE_BYTES = 5 * 1024 * 1024  # larger notes are indexed up to this size; the rest is reported
# O_NONBLOCK: a FIFO put where a note was (between the scan and the read) must not block the indexer
# forever waiting for a writer; O_NOFOLLOW: a symlink swapped in after the path was resolved is refused.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)


class FileSystemVault:
    def __init__(
        self,
        root: Path,
        *,
        deny_dirs: Sequence[str] = (),
        allow_dirs: Sequence[str] = (),
        max_note_bytes: int = MAX_NOTE_BYTES,
    ) -> None:
        self._root = Path(os.path.realpath(root))
        self._deny = tuple(deny_dirs)
        self._allow = tuple(allow_dirs)
        self._max_bytes = max_note_bytes

    @property
    def root(self) -> str:
        return str(self._root)

    def scan(self, folder: str = "") -> tuple[list[NoteFile], list[FileProblem]]:
        result = scan_vault_detailed(self._root, deny_dirs=self._deny, allow_dirs=self._allow, folder=folder)
        files = [NoteFile(f.rel_path, f.size, f.mtime) for f in result.files]
        return files, [FileProblem(s.rel_path, s.reason) for s in result.skipped]

    def stat(self, rel_path: str) -> NoteFile | None:
        if not is_indexable(rel_path, self._deny, self._allow):
            return None
        try:
            path = self._resolve(rel_path)
            st = path.stat()
        except OSError:  # gone, or a symlink leading out of the vault (PermissionError): not ours to index
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return NoteFile(rel_path, st.st_size, st.st_mtime)

    def problem(self, rel_path: str) -> str | None:
        path = self._root / rel_path
        try:
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                if not Path(os.path.realpath(path)).is_relative_to(self._root):
                    return "symlink points outside the vault"
                try:
                    mode = os.stat(path).st_mode
                except OSError as exc:
                    return f"symlink target missing: {exc.strerror}"
        except FileNotFoundError:
            return None
        except OSError as exc:
            return f"unreadable: {exc.strerror}"
        if not stat.S_ISREG(mode):
            return "not a regular file"
        if not os.access(path, os.R_OK):
            return "not readable"
        return None

    def list_files(self) -> list[str]:
        # links may point at attachments and at notes in denied folders, so this ignores DENY/ALLOW;
        # os.walk does not descend into symlinked folders, and a symlinked file counts only inside the vault
        found: list[str] = []
        for folder, dirs, files in os.walk(self._root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel_folder = os.path.relpath(folder, self._root)
            for name in files:
                if name.startswith(".") or not self._inside(os.path.join(folder, name)):
                    continue
                rel = name if rel_folder == "." else f"{rel_folder}/{name}"
                found.append(rel.replace(os.sep, "/"))
        return sorted(found)

    def _inside(self, path: str) -> bool:
        return not os.path.islink(path) or Path(os.path.realpath(path)).is_relative_to(self._root)

    def read_text(self, rel_path: str) -> tuple[str, list[str]]:
        path = self._resolve(rel_path)
        problems: list[str] = []
        fd = os.open(path, _OPEN_FLAGS)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):  # a FIFO, device or folder where a note was listed
                raise OSError(errno.EINVAL, "not a regular file")
            fh = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        with fh:
            data = fh.read(self._max_bytes + 1)  # never more: a 50 MB note costs what the cap allows
        truncated = len(data) > self._max_bytes
        if truncated:
            data = data[: self._max_bytes]
            problems.append(
                f"note of {max(st.st_size, len(data) + 1):,} bytes is over MAX_NOTE_BYTES "
                f"({self._max_bytes:,}): indexed the first {self._max_bytes:,} bytes only"
            )
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8-sig", errors="replace")
            # a cut through the last multi-byte character is our doing, not the file's
            if not (truncated and exc.start >= len(data) - 3):
                problems.append("invalid UTF-8: undecodable bytes replaced")
        if "\x00" in text:
            text = text.replace("\x00", "")
            problems.append("binary NUL bytes removed")
        return text, problems

    def _resolve(self, rel_path: str) -> Path:
        path = Path(os.path.realpath(self._root / rel_path))
        if not path.is_relative_to(self._root):
            raise PermissionError(f"refusing to read outside the vault: {rel_path}")
        return path
