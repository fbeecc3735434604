import os
from pathlib import Path

import pytest

from backend.infrastructure.vault.file_system import FileSystemVault


@pytest.fixture
def root(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    return vault


def test_reads_a_note_and_drops_a_byte_order_mark(root: Path) -> None:
    (root / "a.md").write_bytes("\ufeff# Café\n".encode())
    assert FileSystemVault(root).read_text("a.md") == ("# Café\n", [])


def test_invalid_utf8_is_replaced_and_reported(root: Path) -> None:
    (root / "bad.md").write_bytes(b"# ok\n\xff\xfe broken\n")
    text, problems = FileSystemVault(root).read_text("bad.md")
    assert text.startswith("# ok\n")
    assert "\ufffd" in text
    assert any("UTF-8" in p for p in problems)


def test_nul_bytes_are_removed_and_reported(root: Path) -> None:
    (root / "bin.md").write_bytes(b"# a\x00b\n")
    text, problems = FileSystemVault(root).read_text("bin.md")
    assert text == "# ab\n"
    assert problems == ["binary NUL bytes removed"]


def test_a_huge_note_is_capped_with_a_reason(root: Path) -> None:
    (root / "big.md").write_text("é" * 3000)  # 6,000 bytes; the cap cuts a two-byte character in half
    text, problems = FileSystemVault(root, max_note_bytes=1001).read_text("big.md")
    assert len(text.encode()) <= 1003
    assert problems == [
        "note of 6,000 bytes is over MAX_NOTE_BYTES (1,001): indexed the first 1,001 bytes only"
    ]


def test_a_fifo_where_a_note_was_is_refused_at_once_instead_of_blocking(root: Path) -> None:
    # stat() said "a regular note", then something put a FIFO there: opening it for reading would wait for
    # a writer forever and stall the indexer.
    os.mkfifo(root / "note.md")
    with pytest.raises(OSError, match="not a regular file"):
        FileSystemVault(root).read_text("note.md")


def test_a_folder_where_a_note_was_is_an_oserror(root: Path) -> None:
    (root / "note.md").mkdir()
    with pytest.raises(OSError, match="not a regular file"):
        FileSystemVault(root).read_text("note.md")


def test_the_file_list_for_links_leaves_out_symlinks_leading_out_of_the_vault(
    root: Path, tmp_path: Path
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.png").write_bytes(b"x")
    (tmp_path / "outside" / "in folder.md").write_text("x")
    (root / "a.md").write_text("a")
    (root / "pic.png").symlink_to(tmp_path / "outside" / "secret.png")
    (root / "inner.png").symlink_to(root / "a.md")
    (root / "linked folder").symlink_to(tmp_path / "outside", target_is_directory=True)
    assert FileSystemVault(root).list_files() == ["a.md", "inner.png"]


def test_never_reads_outside_the_vault(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.md").write_text("password")
    (root / "link.md").symlink_to(tmp_path / "secret.md")
    vault = FileSystemVault(root)
    with pytest.raises(PermissionError):
        vault.read_text("../secret.md")
    with pytest.raises(PermissionError):
        vault.read_text("link.md")
    files, skipped = vault.scan()
    assert files == []
    assert [s.rel_path for s in skipped] == ["link.md"]


def test_a_vanished_file_raises_oserror_for_the_indexer_to_record(root: Path) -> None:
    with pytest.raises(FileNotFoundError):
        FileSystemVault(root).read_text("gone.md")


def test_stat_sees_a_note_as_it_is_now_and_not_what_is_no_note(root: Path, tmp_path: Path) -> None:
    (root / "a.md").write_text("hello")
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "b.md").write_text("hidden")
    (root / "image.png").write_bytes(b"\x89PNG")
    outside = tmp_path / "outside.md"
    outside.write_text("secret")
    (root / "link.md").symlink_to(outside)
    vault = FileSystemVault(root)
    found = vault.stat("a.md")
    assert found is not None
    assert (found.rel_path, found.size) == ("a.md", 5)
    assert vault.stat("missing.md") is None
    assert vault.stat(".obsidian/b.md") is None
    assert vault.stat("image.png") is None
    assert vault.stat("link.md") is None  # a symlink out of the vault is not ours to index
    assert vault.stat("../outside.md") is None


def test_scan_of_one_folder_lists_only_its_subtree(root: Path) -> None:
    for rel in ("top.md", "Projects/a.md", "Projects/deep/b.md", "Other/c.md", "Projects/.hidden/d.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x")
    files, _ = FileSystemVault(root).scan("Projects")
    assert [f.rel_path for f in files] == ["Projects/a.md", "Projects/deep/b.md"]
    assert FileSystemVault(root).scan("Gone")[0] == []
    assert FileSystemVault(root, deny_dirs=["Projects"]).scan("Projects")[0] == []
    assert FileSystemVault(root).scan("../..")[0] == []
