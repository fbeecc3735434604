"""The site and the vectors of tests/api/test_path_safety.py: a vault with canaries and symlinks around it,
and every spelling of a path that tries to leave it."""

from __future__ import annotations

import os
import tempfile
import unicodedata
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tests.vault_files import write

TOKEN = f"KB-CANARY-{uuid.uuid4().hex}"
CANARY_TEXT = f"# Canary\n\n{TOKEN} secret launch code swordfish canary\n"
PASSWD_LINE = "root:x:0:0"
QUERY = "secret launch code swordfish canary note plan"
NFD_NAME = unicodedata.normalize("NFD", "Café notes.md")

Kind = Literal["refuse", "absent", "inside"]


@dataclass(frozen=True)
class Vector:
    value: str
    # refuse: 400 SECURITY_VIOLATION; absent: 400, 404 or nothing found; inside: in the vault, may be read
    kind: Kind


@dataclass
class Site:
    """The vault and everything around it."""

    home: Path
    vault: Path
    tmp_canary: Path
    notes: set[str] = field(default_factory=set)
    base: str = ""


def build_site(root: Path) -> Site:
    home = root / "home"
    vault = home / "vault"
    notes = {
        "Home.md": "# Home\n\nThe launch plan note links [[Projects/Plan]].\n",
        "Projects/Plan.md": "# Plan\n\nA plan note about the launch.\n",
        "Con.md": "# Con\n\nPros and cons: a legal name on Linux, a device name on Windows.\n",
        NFD_NAME: "# Café\n\nA note whose name is stored decomposed (NFD), as macOS does.\n",
        "Swap.md": "# Swap\n\nIndexed as a note, then swapped for a symlink out of the vault.\n",
    }
    for rel, text in notes.items():
        write(vault, rel, text)
    write(home, "canary.md", CANARY_TEXT)  # beside the vault, in its parent folder
    write(home, "vault-secrets/canary.md", CANARY_TEXT)  # a sibling whose name starts like the vault's
    write(home, "outside-dir/canary.md", CANARY_TEXT)
    write(root, "canary.md", CANARY_TEXT)  # two levels up
    tmp_canary = Path(tempfile.mkdtemp(prefix="kb-canary-", dir="/tmp"))
    write(tmp_canary, "canary.md", CANARY_TEXT)
    os.symlink(home / "canary.md", vault / "Leak.md")
    os.symlink(tmp_canary / "canary.md", vault / "LeakTmp.md")
    os.symlink(home / "outside-dir", vault / "Outside")
    os.symlink(home, vault / "Parent")
    os.symlink(vault / "Home.md", vault / "Alias.md")  # to another in-vault note: allowed
    os.symlink("Projects", vault / "Shortcut")  # an in-vault folder
    return Site(home=home, vault=vault, tmp_canary=tmp_canary)


def vectors(site: Site) -> list[Vector]:
    found: list[Vector] = []

    def add(kind: Kind, *values: str) -> None:
        found.extend(Vector(v, kind) for v in values)

    # `..` in every position, and classic filter bypasses
    targets = ["../canary.md", "../../canary.md", "../vault-secrets/canary.md", "../outside-dir/canary.md"]
    targets += ["../" * 12 + "etc/passwd", "Projects/../../canary.md", "Projects/../../../canary.md"]
    add("refuse", *targets)
    add("refuse", "..", "../", "Projects/..", "Projects/../Home.md", "./Home.md", "Projects/./Plan.md")
    add("refuse", "....//canary.md", "..././canary.md", "../Parent/canary.md", ".../../canary.md")
    add("refuse", ".%2e/canary.md", "%2e./canary.md", "..%c1%9ccanary.md", "..%25%35%63canary.md")
    add("absent", "..;/canary.md", "%uff0e%uff0e/canary.md", "..%/canary.md")
    # every encoding of the traversals
    for target in targets[:3]:
        add(
            "refuse",
            target.replace(".", "%2e").replace("/", "%2f"),
            target.replace(".", "%2E").replace("/", "%2F"),
            target.replace("..", "%2e%2e"),
            target.replace("/", "%2f"),
            target.replace(".", "%252e").replace("/", "%252f"),
            target.replace(".", "%25252e"),
            target.replace(".", "%c0%ae"),  # overlong UTF-8 '.'
            target.replace(".", "%e0%80%ae"),
            target.replace("/", "%c0%af"),  # overlong '/'
            target.replace("/", "\\"),
            target.replace("/", "%5c"),
            target.replace("/", "%255c"),
            target.replace(".", "\uff0e").replace("/", "\uff0f"),  # fullwidth
            target.replace("..", "\u2025"),  # TWO DOT LEADER: '..' under NFKC
            target.replace("/", "\uff3c"),  # fullwidth backslash
        )
    # absolute paths, the canaries' own paths included
    add("refuse", "/etc/passwd", "//etc/passwd", "%2fetc%2fpasswd", "/" + "/".join(["etc", "passwd"]))
    add(
        "refuse",
        str(site.home / "canary.md"),
        str(site.tmp_canary / "canary.md"),
        str(site.vault / "Home.md"),
    )
    add("refuse", "file:///etc/passwd", "/proc/self/environ", "/dev/zero")
    # drive letters and UNC paths
    add("refuse", "C:\\Windows\\win.ini", "c:/windows/win.ini", "C:canary.md", "C:%5cWindows%5cwin.ini")
    add("refuse", "\\\\server\\share\\canary.md", "//server/share/canary.md", "\\\\?\\C:\\canary.md")
    add("refuse", "\\\\.\\CON", "%5c%5cserver%5cshare")
    # NUL bytes and other control characters
    add("refuse", "Home.md\x00", "Home.md%00", "Home.md%00.png", "Home.md\x00.png", "../canary.md%00.md")
    add("refuse", "%00../canary.md", "Home.md\n", "Home.md%0d%0aX-Injected: 1", "Home.md\x85")
    # empty and degenerate
    add("refuse", "", "/", "//", "Home.md/", "Home.md/.", "Projects//Plan.md")
    add("refuse", "a" * 1025, "../" * 400 + "etc/passwd", "a/" * 600 + "x.md")
    # Windows device names: ordinary file names here (Con.md below is a real note); never a device
    add("absent", "CON", "NUL", "COM1", "LPT1", "con.md", "aux.txt", "NUL.md", "Projects/COM1.md", "PRN.md")
    # Unicode look-alikes that stay ordinary names, and bidi overrides
    add("absent", "\u202ecanary.md", "..\u202e/canary.md", "\u202e../canary.md", "Home\u200b.md")
    add("absent", "\u2024\u2024x/canary.md", "Home.md\u2024", "~/canary.md", "$HOME/canary.md", "%HOMEPATH%")
    add("absent", "...", "Home.md?x=1", "Home.md#Plan", "x" * 255 + ".md", "x" * 300 + ".md")
    # symlinks: out of the vault (a file, a folder, the parent folder) -> never read
    add("absent", "Leak.md", "LeakTmp.md", "Outside/canary.md", "Outside", "Parent/canary.md")
    add("absent", "Parent/vault/Home.md", "Parent/vault-secrets/canary.md")
    # in-vault names, read as themselves
    add("inside", "Con.md", "Alias.md", "Shortcut/Plan.md", NFD_NAME, unicodedata.normalize("NFC", NFD_NAME))
    add("inside", "Home.md", "Projects/Plan.md")
    # indexed as a note, then made a symlink to the canary: what the index holds (the old in-vault text,
    # its links) may be answered; the file itself is never read
    add("inside", "Swap.md")
    return found
