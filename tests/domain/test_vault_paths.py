"""The one path check every entry point uses (HTTP, MCP, memory sources, search filters)."""

from __future__ import annotations

import pytest

from backend.domain.errors import SecurityViolationError
from backend.domain.models import PointFilter
from backend.domain.notes.vault_paths import MAX_PATH_CHARS, safe_filter, vault_folder, vault_path


@pytest.mark.parametrize(
    "path",
    [
        "Home.md",
        "Projects/Database migration.md",
        "Journal/2026/2026-03-28.md",
        "100% done.md",  # a literal percent sign is a real file name
        "a%2Fb.md",  # decodes to a/b.md: still inside the vault
        "Tomasz Wójcik.md",
        "~/notes.md",  # a folder called "~" inside the vault; nothing expands it
        "..hidden-dots.md",
        "notes..md",
        "Con.md",  # a Windows device name is an ordinary file name where the service runs
        "aux.txt",
        "Ｎｏｔｅｓ/１．Intro.md",  # fullwidth letters and a fullwidth dot inside a name
        "\u05e9\u05dc\u05d5\u05dd \u202eקובץ.md",  # bidi override: a display trick, not a way out
        "👨\u200d👩\u200d👧 Family.md",  # zero-width joiners in an emoji name
    ],
)
def test_vault_relative_paths_pass_unchanged(path: str) -> None:
    assert vault_path(path) == path


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("../secret.md", "leaves the vault"),
        ("Projects/../../secret.md", "leaves the vault"),
        ("..", "leaves the vault"),
        ("%2e%2e/secret.md", "leaves the vault"),
        ("%2E%2E%2Fsecret.md", "leaves the vault"),
        ("%252e%252e%252fsecret.md", "leaves the vault"),  # double encoded
        ("%25252e%25252e/secret.md", "leaves the vault"),  # triple encoded
        ("Projects/..%2f..%2fsecret.md", "leaves the vault"),
        ("/etc/passwd", "absolute path"),
        ("%2fetc/passwd", "absolute path"),
        ("C:/Windows/win.ini", "drive letter"),
        ("c:secret.md", "drive letter"),
        ("..\\secret.md", "backslash"),
        ("Projects\\notes.md", "backslash"),
        ("%5c..%5csecret.md", "backslash"),
        ("note\x00.md", "control character"),
        ("note%00.md", "control character"),
        ("note\n.md", "control character"),
        ("note\x85.md", "control character"),  # C1: NEL
        ("\uff0e\uff0e\uff0fetc/passwd", "leaves the vault"),  # fullwidth ../ (NFKC)
        ("%EF%BC%8E%EF%BC%8E/secret.md", "leaves the vault"),  # fullwidth .. percent-encoded
        ("\uff05\uff12\uff45\uff05\uff12\uff45/secret.md", "leaves the vault"),  # fullwidth %2e%2e
        ("\uff0fetc/passwd", "absolute path"),  # fullwidth solidus
        ("Projects\uff3c..\uff3csecret.md", "backslash"),  # fullwidth reverse solidus
        ("%c0%ae%c0%ae/secret.md", "not UTF-8"),  # overlong '.'
        ("%e0%80%ae%e0%80%ae/secret.md", "not UTF-8"),  # 3-byte overlong '.'
        ("caf\udce9.md", "not UTF-8"),  # a Latin-1 file name as os.fsdecode keeps it (or JSON's "\udce9")
        ("./Home.md", "'.' segment"),
        ("Projects//Home.md", "empty"),
        ("Projects/", "empty"),
        ("", "empty path"),
        ("a" * (MAX_PATH_CHARS + 1), "longer than"),
    ],
)
def test_paths_that_leave_or_bend_the_vault_are_refused(path: str, reason: str) -> None:
    with pytest.raises(SecurityViolationError, match=reason):
        vault_path(path)


@pytest.mark.parametrize(
    ("folder", "cleaned"),
    [("", ""), ("/", ""), (" Projects/ ", "Projects"), ("/Journal/2026/", "Journal/2026")],
)
def test_folders_are_cleaned_like_filters_always_did(folder: str, cleaned: str) -> None:
    assert vault_folder(folder) == cleaned


@pytest.mark.parametrize(
    "folder", ["../", "Projects/../..", "%2e%2e", "a\\b", "x\x00", "//server/share", "\uff0e\uff0e"]
)
def test_folders_that_leave_the_vault_are_refused(folder: str) -> None:
    with pytest.raises(SecurityViolationError):
        vault_folder(folder)


def test_a_filter_is_checked_path_by_path() -> None:
    assert safe_filter(None) is None
    checked = safe_filter(PointFilter(note_paths=("Home.md",), folders=("/Projects/",)))
    assert checked == PointFilter(note_paths=("Home.md",), folders=("Projects",))
    with pytest.raises(SecurityViolationError):
        safe_filter(PointFilter(note_paths=("Home.md", "../x.md")))
