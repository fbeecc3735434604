"""`Vault` over a dict of vault-relative paths to text: notes a test writes without a disk."""

from __future__ import annotations

from backend.domain.models import FileProblem, NoteFile


class FakeVault:
    """Leaves out: what the filesystem adapter guards against (symlinks, unreadable files, invalid UTF-8,
    paths outside the root); `problem` is always None."""

    def __init__(self, files: dict[str, str] | None = None) -> None:
        self.files: dict[str, str] = dict(files or {})
        self.mtimes: dict[str, float] = {}  # 1.0 unless a test touches the file

    @property
    def root(self) -> str:
        return "/fake-vault"

    def scan(self, folder: str = "") -> tuple[list[NoteFile], list[FileProblem]]:
        prefix = f"{folder.strip('/')}/" if folder.strip("/") else ""
        notes = [self.stat(p) for p in sorted(self.files) if p.endswith(".md") and p.startswith(prefix)]
        return [n for n in notes if n is not None], []

    def stat(self, rel_path: str) -> NoteFile | None:
        text = self.files.get(rel_path)
        if text is None or not rel_path.endswith(".md"):
            return None
        return NoteFile(rel_path, len(text.encode()), self.mtimes.get(rel_path, 1.0))

    def list_files(self) -> list[str]:
        return sorted(self.files)

    def has_file(self, rel_path: str) -> bool:
        return rel_path in self.files

    def problem(self, rel_path: str) -> str | None:
        return None

    def read_text(self, rel_path: str) -> tuple[str, list[str]]:
        if rel_path not in self.files:
            raise FileNotFoundError(rel_path)
        return self.files[rel_path], []
