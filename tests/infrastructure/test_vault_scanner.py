from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from backend.domain.notes.vault_rules import is_indexable
from backend.infrastructure.vault.scanner import IN_VAULT_SYMLINK, scan_vault, scan_vault_detailed
from tests.vault_files import write

# What the scanner lists, in its order (by path), and what it passes over: other file types, hidden files and
# folders, Obsidian's own folders.
NOTES = [
    "Home.md",
    "README.MD",
    "journal/2024-01-01.md",
    "journal/private/secret.md",
    "projects/alpha/plan.md",
    "projects/templates/tpl.md",
    "templates/daily.md",
]
NOT_NOTES = [
    "attachments/image.png",
    "notes.txt",
    "draft.md.bak",
    ".hidden.md",
    ".obsidian/workspace.md",
    ".trash/old.md",
    "projects/.git/HEAD.md",
]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel in [*NOT_NOTES, *reversed(NOTES)]:
        write(root, rel)
    return root


def rel_paths(root: Path, deny: Sequence[str] = (), allow: Sequence[str] = ()) -> list[str]:
    return [f.rel_path for f in scan_vault(root, deny_dirs=deny, allow_dirs=allow)]


def test_lists_markdown_notes_sorted_and_skips_hidden(vault: Path) -> None:
    assert rel_paths(vault) == NOTES


def test_reports_size_mtime_and_absolute_path(vault: Path) -> None:
    write(vault, "journal/2024-01-01.md", "four")
    (file,) = [f for f in scan_vault(vault) if f.rel_path == "journal/2024-01-01.md"]

    stat = os.stat(vault / "journal" / "2024-01-01.md")
    assert file.size == 4
    assert file.mtime == stat.st_mtime
    assert file.abs_path.read_text() == "four"


@pytest.mark.parametrize(
    ("deny", "allow", "expected"),
    [
        pytest.param(
            ["templates"],
            [],
            [
                "Home.md",
                "README.MD",
                "journal/2024-01-01.md",
                "journal/private/secret.md",
                "projects/alpha/plan.md",
            ],
            id="deny-name-at-any-depth",
        ),
        pytest.param(
            ["journal/private", "./projects/alpha/"],
            [],
            [
                "Home.md",
                "README.MD",
                "journal/2024-01-01.md",
                "projects/templates/tpl.md",
                "templates/daily.md",
            ],
            id="deny-paths",
        ),
        pytest.param(
            [],
            ["journal", "projects/alpha"],
            ["journal/2024-01-01.md", "journal/private/secret.md", "projects/alpha/plan.md"],
            id="allow",
        ),
        pytest.param([], ["missing"], [], id="allow-nothing-existing"),
        pytest.param(["private"], ["journal"], ["journal/2024-01-01.md"], id="deny-beats-allow"),
        pytest.param([""], ["/"], rel_paths, id="empty-entries-ignored"),
    ],
)
def test_deny_and_allow_dirs(vault: Path, deny: list[str], allow: list[str], expected: object) -> None:
    if callable(expected):
        expected = expected(vault)
    assert rel_paths(vault, deny, allow) == expected


@pytest.mark.parametrize(
    ("rel_path", "deny", "allow", "indexable"),
    [
        ("a.md", (), (), True),
        ("A.Md", (), (), True),
        ("a.txt", (), (), False),
        ("a.md/b.png", (), (), False),
        (".a.md", (), (), False),
        ("x/.obsidian/a.md", (), (), False),
        ("archive/a.md", ("archive",), (), False),
        ("deep/archive/a.md", ("archive",), (), False),
        ("archived/a.md", ("archive",), (), True),
        ("deep/archive/a.md", ("deep/archive",), (), False),
        ("other/deep/archive/a.md", ("deep/archive",), (), True),
        ("journal/a.md", (), ("journal",), True),
        ("journalism/a.md", (), ("journal",), False),
        ("a.md", (), ("journal",), False),
        ("journal\\sub\\a.md", (), ("journal",), True),
    ],
)
def test_is_indexable(rel_path: str, deny: tuple[str, ...], allow: tuple[str, ...], indexable: bool) -> None:
    assert is_indexable(rel_path, deny, allow) is indexable


def test_never_follows_symlinks_out_of_the_vault(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "inside.md")
    outside = tmp_path / "outside"
    write(outside, "leak.md", "secret")
    write(outside, "sub/leak2.md", "secret")
    (root / "linked-file.md").symlink_to(outside / "leak.md")
    (root / "linked-dir").symlink_to(outside / "sub", target_is_directory=True)
    (root / "relative.md").symlink_to(Path("..") / "outside" / "leak.md")

    result = scan_vault_detailed(root)

    assert [f.rel_path for f in result.files] == ["inside.md"]
    assert [(s.rel_path, s.reason) for s in result.skipped] == [
        ("linked-dir", "symlink points outside the vault"),
        ("linked-file.md", "symlink points outside the vault"),
        ("relative.md", "symlink points outside the vault"),
    ]


def test_does_not_follow_symlinks_inside_the_vault_and_says_why(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "real/note.md")
    (root / "alias.md").symlink_to(root / "real" / "note.md")
    (root / "real" / "loop").symlink_to(root, target_is_directory=True)

    result = scan_vault_detailed(root)

    assert [f.rel_path for f in result.files] == ["real/note.md"]  # once, under its real path
    assert [(s.rel_path, s.reason) for s in result.skipped] == [
        ("alias.md", IN_VAULT_SYMLINK),
        ("real/loop", IN_VAULT_SYMLINK),
    ]


def test_a_scan_of_a_symlink_reports_it_as_the_whole_scan_does(tmp_path: Path) -> None:
    # the watcher rechecks a symlink made in the vault as a folder: the scan of it says what the full one says
    root = tmp_path / "vault"
    write(root, "real/note.md")
    write(tmp_path / "outside", "sub/leak.md", "secret")
    (root / "linked").symlink_to(tmp_path / "outside" / "sub", target_is_directory=True)
    (root / "real" / "alias").symlink_to(root / "real", target_is_directory=True)
    (root / "image.png").symlink_to(root / "real" / "note.md")  # a symlinked file, not a note: not listed

    whole = scan_vault_detailed(root)
    each = [scan_vault_detailed(root, folder=rel) for rel in ("linked", "real/alias", "image.png", "gone")]

    assert [(s.rel_path, s.reason) for s in whole.skipped] == [
        ("linked", "symlink points outside the vault"),
        ("real/alias", IN_VAULT_SYMLINK),
    ]
    assert [(s.rel_path, s.reason) for result in each for s in result.skipped] == [
        ("linked", "symlink points outside the vault"),
        ("real/alias", IN_VAULT_SYMLINK),
    ]
    assert not any(result.files for result in each)  # never followed
    assert scan_vault_detailed(root, folder="linked", deny_dirs=["linked"]).skipped == []


def test_skips_files_that_vanished(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "ok.md")
    (root / "dangling.md").symlink_to(root / "deleted.md")

    result = scan_vault_detailed(root)

    assert [f.rel_path for f in result.files] == ["ok.md"]
    assert [s.rel_path for s in result.skipped] == ["dangling.md"]
    assert "missing" in result.skipped[0].reason


@pytest.mark.skipif(
    os.name != "posix" or os.geteuid() == 0, reason="needs POSIX permissions and a non-root user"
)
def test_skips_unreadable_files_and_folders(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "ok.md")
    locked_file = write(root, "locked.md")
    locked_dir = write(root, "closed/inner.md").parent
    locked_file.chmod(0)
    locked_dir.chmod(0)
    try:
        result = scan_vault_detailed(root)
    finally:
        locked_dir.chmod(0o755)

    assert [f.rel_path for f in result.files] == ["ok.md"]
    assert [s.rel_path for s in result.skipped] == ["closed", "locked.md"]


def test_a_missing_vault_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(NotADirectoryError):
        scan_vault(tmp_path / "nope")


def test_an_empty_vault_has_no_notes(tmp_path: Path) -> None:
    assert scan_vault(tmp_path) == []
