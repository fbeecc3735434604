"""The vault on the local disk, read-only. Every read is checked to stay inside the vault root.

Every way a file is reached (scan, stat, read, the file list links resolve against) resolves symlinks first
and refuses what leads out of the vault; a symlink inside it is not followed either (see IN_VAULT_SYMLINK).
Files are opened read-only and never written, created or touched.

Paths go out in Unicode NFC, whatever form the disk uses (`domain.vault_paths.canonical`), and come back in
NFC: each is mapped to its spelling on the disk here, and nowhere else. A file whose name the service could
not serve back (`unservable`), or that only differs from another in its Unicode form, is reported, not listed.
"""

from __future__ import annotations

import errno
import os
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from backend.domain.models import FileProblem, NoteFile
from backend.domain.notes.vault_paths import canonical, unservable
from backend.domain.notes.vault_rules import is_indexable
from backend.infrastructure.vault.scanner import IN_VAULT_SYMLINK, scan_vault_detailed

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
        self._spelling: dict[str, str] = {}  # NFC path -> its spelling on the disk, where they differ

    @property
    def root(self) -> str:
        return str(self._root)

    def scan(self, folder: str = "") -> tuple[list[NoteFile], list[FileProblem]]:
        on_disk = self._on_disk(folder) if folder else ""
        result = scan_vault_detailed(self._root, deny_dirs=self._deny, allow_dirs=self._allow, folder=on_disk)
        problems = [FileProblem(canonical(s.rel_path), s.reason) for s in result.skipped]
        files: list[NoteFile] = []
        taken: dict[str, str] = {}
        # a name already in NFC first: of two spellings of one name, that is the one a lookup reaches
        for found in sorted(result.files, key=lambda f: (canonical(f.rel_path) != f.rel_path, f.rel_path)):
            reason = unservable(found.rel_path)
            name = canonical(found.rel_path)
            if reason is None and name in taken:
                reason = f"same name as {taken[name]!r} in another Unicode form: only that one is indexed"
            if reason is not None:
                problems.append(FileProblem(found.rel_path, reason))
                continue
            taken[name] = found.rel_path
            if name != found.rel_path:
                self._spelling[name] = found.rel_path
            files.append(NoteFile(name, found.size, found.mtime))
        files.sort(key=lambda f: f.rel_path)
        return files, sorted(problems, key=lambda p: p.rel_path)

    def stat(self, rel_path: str) -> NoteFile | None:
        if not is_indexable(rel_path, self._deny, self._allow) or unservable(rel_path) is not None:
            return None
        try:
            path = self._resolve(rel_path)
            st = path.stat()
        except OSError:  # gone, or a symlink (PermissionError when it leads out of the vault): not indexed
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        return NoteFile(canonical(rel_path), st.st_size, st.st_mtime)

    def problem(self, rel_path: str) -> str | None:
        path = self._root / self._on_disk(rel_path)
        try:
            mode = os.lstat(path).st_mode
            if (reason := unservable(rel_path)) is not None:
                return reason
            if Path(os.path.realpath(path)) != path:  # the file or a folder on its way is a symlink
                if not Path(os.path.realpath(path)).is_relative_to(self._root):
                    return "symlink points outside the vault"
                try:
                    os.stat(path)
                except OSError as exc:
                    return f"symlink target missing: {exc.strerror}"
                return IN_VAULT_SYMLINK
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
        # os.walk does not descend into symlinked folders; a symlinked file counts only inside the vault,
        # and a symlinked note not at all: it is not indexed, so a link must not lead to it
        found: list[str] = []
        for folder, dirs, files in os.walk(self._root):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel_folder = os.path.relpath(folder, self._root)
            for name in files:
                if name.startswith(".") or not self._listable(os.path.join(folder, name)):
                    continue
                rel = name if rel_folder == "." else f"{rel_folder}/{name}"
                found.append(canonical(rel.replace(os.sep, "/")))
        return sorted(set(found))

    def has_file(self, rel_path: str) -> bool:
        path = self._root / self._on_disk(rel_path)
        hidden = any(part.startswith(".") for part in rel_path.split("/"))
        return not hidden and path.is_file() and self._listable(str(path))

    def _listable(self, path: str) -> bool:
        if not os.path.islink(path):
            return True
        return not path.lower().endswith(".md") and Path(os.path.realpath(path)).is_relative_to(self._root)

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
        # NFC like the paths: a tag, a link or a title typed on macOS (decomposed) matches one typed elsewhere
        if not unicodedata.is_normalized("NFC", text):
            text = unicodedata.normalize("NFC", text)
        return text, problems

    def _resolve(self, rel_path: str) -> Path:
        spelled = self._root / self._on_disk(rel_path)
        path = Path(os.path.realpath(spelled))
        if not path.is_relative_to(self._root):
            raise PermissionError(f"refusing to read outside the vault: {rel_path}")
        if path != spelled:
            raise FileNotFoundError(errno.ENOENT, IN_VAULT_SYMLINK, rel_path)
        return path

    def _on_disk(self, rel_path: str) -> str:
        """How `rel_path` (any Unicode form) is spelled on the disk: itself when a file has that very name,
        else the name whose NFC form matches, folder by folder; itself when there is none."""
        if os.path.lexists(self._root / rel_path):
            return rel_path
        wanted = canonical(rel_path)
        known = self._spelling.get(wanted)
        if known is not None and os.path.lexists(self._root / known):
            return known
        current, spelled = self._root, []
        for part in wanted.split("/"):
            if not os.path.lexists(current / part):
                try:
                    names = os.listdir(current)
                except OSError:
                    return rel_path
                part = next((name for name in names if canonical(name) == part), "")
                if not part:
                    return rel_path
            spelled.append(part)
            current = current / part
        found = "/".join(spelled)
        self._spelling[wanted] = found
        return found
