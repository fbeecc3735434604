"""Walk an Obsidian vault and list the notes to index (see `backend.domain.notes.vault_rules` for which).

The vault is read-only to us and may change while we walk it, so nothing found inside it raises:
files that vanish or cannot be read, and symlinks (never followed), are reported as skipped.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from backend.domain.notes.vault_rules import is_indexable, should_descend

# Symlinks are never followed, inside the vault either: a symlinked note or folder would be a second copy of
# its target under another path, and the watcher (which sees the real path change) could not keep both.
IN_VAULT_SYMLINK = (
    "symlink inside the vault: not followed, so every note has one path (its target is indexed where it is)"
)


@dataclass(frozen=True, slots=True)
class VaultFile:
    rel_path: str  # vault-relative, forward slashes
    abs_path: Path
    size: int  # bytes
    mtime: float  # seconds since the epoch


@dataclass(frozen=True, slots=True)
class SkippedPath:
    rel_path: str
    reason: str


@dataclass(frozen=True, slots=True)
class ScanResult:
    files: list[VaultFile]  # sorted by rel_path
    skipped: list[SkippedPath]  # sorted by rel_path


def scan_vault(
    root: Path, *, deny_dirs: Sequence[str] = (), allow_dirs: Sequence[str] = ()
) -> list[VaultFile]:
    """The indexable notes under `root`, sorted by `rel_path`.

    Raises NotADirectoryError when `root` is not a folder. `scan_vault_detailed` also says what was
    skipped and why.
    """
    return scan_vault_detailed(root, deny_dirs=deny_dirs, allow_dirs=allow_dirs).files


def scan_vault_detailed(
    root: Path, *, deny_dirs: Sequence[str] = (), allow_dirs: Sequence[str] = (), folder: str = ""
) -> ScanResult:
    """`folder` (vault-relative) limits the walk to that subtree: what a watcher needs after a folder move."""
    real_root = Path(os.path.realpath(root))
    if not real_root.is_dir():
        raise NotADirectoryError(f"vault folder not found: {root}")
    walker = _Walker(real_root, tuple(deny_dirs), tuple(allow_dirs))
    start = folder.strip("/")
    if not start:
        walker.run()
    elif all(
        should_descend("/".join(start.split("/")[: i + 1]), deny_dirs, allow_dirs)
        for i in range(start.count("/") + 1)
    ):
        if _inside_vault(real_root, start):
            walker.run(start)
        elif os.path.islink(real_root / start) and _inside_vault(real_root, start.rpartition("/")[0]):
            # a symlink itself (the watcher rechecks a symlink made in the vault as a folder): reported as the
            # walk of its parent reports it, so it is listed when it comes, not at the next full sync
            walker.visit_link(str(real_root / start), start)
    return ScanResult(
        files=sorted(walker.files, key=lambda f: f.rel_path),
        skipped=sorted(walker.skipped, key=lambda s: s.rel_path),
    )


def _inside_vault(real_root: Path, rel_dir: str) -> bool:
    # a real folder of the vault ("" the root), reached without a symlink (not followed: see IN_VAULT_SYMLINK)
    real = Path(os.path.realpath(real_root / rel_dir))
    return real == real_root / rel_dir and real.is_dir()


def _why(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


@dataclass
class _Walker:
    real_root: Path
    deny_dirs: tuple[str, ...]
    allow_dirs: tuple[str, ...]
    files: list[VaultFile] = field(default_factory=list)
    skipped: list[SkippedPath] = field(default_factory=list)
    # Real paths of folders queued so far: an in-vault symlink to an ancestor would otherwise loop.
    visited: set[Path] = field(default_factory=set)
    pending: list[str] = field(default_factory=list)

    def run(self, start: str = "") -> None:
        self.visited.add(Path(os.path.realpath(self.real_root / start)))
        self.pending.append(start)
        while self.pending:
            rel_dir = self.pending.pop()
            try:
                with os.scandir(self.real_root / rel_dir) as it:
                    entries = list(it)
            except OSError as exc:
                self.skipped.append(SkippedPath(rel_dir, f"folder unreadable: {_why(exc)}"))
                continue
            for entry in entries:
                if not entry.name.startswith("."):
                    self._visit(entry, f"{rel_dir}/{entry.name}" if rel_dir else entry.name)

    def _visit(self, entry: os.DirEntry[str], rel: str) -> None:
        try:
            if entry.is_symlink():
                self.visit_link(entry.path, rel)
            elif entry.is_dir(follow_symlinks=False):
                self._queue_dir(Path(entry.path), rel)
            elif is_indexable(rel, self.deny_dirs, self.allow_dirs):
                self._add_file(rel)
        except OSError as exc:
            self.skipped.append(SkippedPath(rel, f"unreadable: {_why(exc)}"))

    def visit_link(self, path: str, rel: str) -> None:
        is_note = is_indexable(rel, self.deny_dirs, self.allow_dirs)
        if not is_note and not should_descend(rel, self.deny_dirs, self.allow_dirs):
            return
        real = Path(os.path.realpath(path))
        if not real.is_relative_to(self.real_root):
            self.skipped.append(SkippedPath(rel, "symlink points outside the vault"))
            return
        try:
            mode = os.stat(real).st_mode
        except OSError as exc:
            if is_note:
                self.skipped.append(SkippedPath(rel, f"symlink target missing: {_why(exc)}"))
            return
        if stat.S_ISDIR(mode) or is_note:
            self.skipped.append(SkippedPath(rel, IN_VAULT_SYMLINK))

    def _queue_dir(self, path: Path, rel: str) -> None:
        if not should_descend(rel, self.deny_dirs, self.allow_dirs):
            return
        real = Path(os.path.realpath(path))
        if real not in self.visited:
            self.visited.add(real)
            self.pending.append(rel)

    def _add_file(self, rel: str) -> None:
        path = self.real_root / rel
        try:
            st = os.stat(path)
        except OSError as exc:  # vanished between listing and stat
            self.skipped.append(SkippedPath(rel, f"vanished: {_why(exc)}"))
            return
        if not stat.S_ISREG(st.st_mode):
            self.skipped.append(SkippedPath(rel, "not a regular file"))
        elif not os.access(path, os.R_OK):
            self.skipped.append(SkippedPath(rel, "not readable"))
        else:
            self.files.append(VaultFile(rel_path=rel, abs_path=path, size=st.st_size, mtime=st.st_mtime))
