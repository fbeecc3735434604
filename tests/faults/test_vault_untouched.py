"""The vault is read-only to the service, and nothing outside it is ever read.

A whole lifecycle (first index, the watcher following edits the test makes, a sync, a rebuild, searches,
note links, a verify, a restart) runs against a vault holding symlinks that lead out of it. Before and after,
the test records every entry of the vault with its type, size, mode, inode, mtime and ctime (no atime: reads
update it): the tree after must be exactly the tree the test's own edits left, with no file added.

Outside the vault, the targets of those symlinks get an old access time; the kernel (relatime) updates it on
the first read, so an unchanged access time proves they were never opened.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.infrastructure.vault.scanner import IN_VAULT_SYMLINK
from tests.api.conftest import wait_for_job
from tests.api.test_live_index_api import LiveApp
from tests.application.fakes import FakeEmbedder
from tests.vault_files import write

Snapshot = dict[str, tuple[str, int, int, int, int, int]]
OLD = 946_684_800  # 2000-01-01: an access time the kernel will move forward on any read


def snapshot(root: Path) -> Snapshot:
    """Every entry under root (symlinks not followed): kind, size, mode, inode, mtime and ctime in ns."""
    found: Snapshot = {}
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            path = Path(folder, name)
            st = path.lstat()
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            found[str(path.relative_to(root))] = (
                kind,
                st.st_size,
                st.st_mode,
                st.st_ino,
                st.st_mtime_ns,
                st.st_ctime_ns,
            )
    return found


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    folder = tmp_path / "outside"
    write(folder, "secret.md", "# Secret\n\nThe combination is 4-8-15-16-23-42.\n")
    write(folder, "Private/diary.md", "# Diary\n\nNobody reads this aardwolf.\n")
    for path in folder.rglob("*.md"):
        os.utime(path, (OLD, OLD))
    probe = folder / "probe.md"
    probe.write_text("probe")
    os.utime(probe, (OLD, OLD))
    probe.read_text()
    if probe.stat().st_atime == OLD:
        pytest.skip("this file system does not record reads (noatime)")
    probe.unlink()
    return folder


@pytest.fixture
def vault(tmp_path: Path, outside: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "Projects/Database migration.md", "# Database migration\n\nMySQL to PostgreSQL.\n")
    write(
        root,
        "Shopping list.md",
        "# Shopping list\n\n- basmati rice\n\nSee [[Projects/Database migration]].\n",
    )
    write(root, ".obsidian/workspace.json", "{}")
    (root / "attachment.png").write_bytes(b"\x89PNG\r\n")
    (root / "Secret link.md").symlink_to(outside / "secret.md")
    (root / "Private").symlink_to(outside / "Private", target_is_directory=True)
    (root / "Inner link.md").symlink_to(root / "Shopping list.md")
    return root


@pytest.fixture
def service(vault: Path, tmp_path: Path) -> Iterator[list[LiveApp]]:
    apps: list[LiveApp] = []
    yield apps
    for app in apps:
        app.close()


def test_a_whole_lifecycle_writes_nothing_in_the_vault_and_reads_nothing_outside(
    vault: Path, outside: Path, tmp_path: Path, service: list[LiveApp]
) -> None:
    before = snapshot(vault)
    outside_before = snapshot(outside)
    app = LiveApp(vault, tmp_path / "data", FakeEmbedder())
    service.append(app)
    assert snapshot(vault) == before  # the first index

    # the test's own edits, followed by the watcher
    write(vault, "Inbox/Idea.md", "# Idea\n\nA trip to zanzibar, see [[Shopping list]].\n")
    app.wait_until(lambda: app.top("zanzibar") == "Inbox/Idea.md", "a new note")
    write(vault, "Shopping list.md", "# Shopping list\n\n- quince jam\n")
    app.wait_until(lambda: app.top("quince") == "Shopping list.md", "an edit")
    os.rename(vault / "Projects", vault / "Archive")
    app.wait_until(lambda: app.top("postgresql") == "Archive/Database migration.md", "a folder move")
    (vault / "Inbox/Idea.md").unlink()
    app.wait_until(lambda: app.top("zanzibar") is None, "a delete")
    # symlinks leading out, made while the watcher runs: its refresh path must refuse them too
    (vault / "Inbox/Watched secret.md").symlink_to(outside / "secret.md")
    (vault / "Watched private").symlink_to(outside / "Private", target_is_directory=True)
    write(vault, "Inbox/After.md", "# After\n\nwritten after the symlinks: okapi\n")
    app.wait_until(lambda: app.top("okapi") == "Inbox/After.md", "the batch holding the symlinks")
    after_edits = snapshot(vault)
    assert after_edits != before  # the snapshot sees changes, when there are some

    # everything else the service does
    for request in (("post", "/index/sync"), ("post", "/index/rebuild")):
        # the watcher's last batch may still be embedding: a job asked meanwhile is refused (409), not lost
        wait_for_job(app.client)
        assert getattr(app.client, request[0])(request[1]).status_code == 202
        app.wait_until(lambda: app.status()["job"]["finished_at"] is not None, request[1], timeout=60)
    for mode in ("hybrid", "dense", "keyword"):
        app.top("basmati quince postgresql", mode)
    assert app.client.get("/note/Shopping list.md/links").status_code == 200
    assert app.client.get("/index/verify").json()["consistent"] is True
    app.close()
    service.clear()
    restarted = LiveApp(vault, tmp_path / "data", FakeEmbedder())
    service.append(restarted)
    # "Inner link.md" is an in-vault symlink to the list: not followed, the list is indexed once
    assert restarted.top("quince") == "Shopping list.md"

    assert snapshot(vault) == after_edits  # not a byte, a timestamp or a file added by the service
    assert snapshot(outside) == outside_before
    for path in outside.rglob("*.md"):
        assert path.stat().st_atime == OLD, f"{path} was read"
    reasons = {f["path"]: f["reason"] for f in restarted.status()["failed_files"]}
    assert reasons == {
        "Inbox/Watched secret.md": "symlink points outside the vault",
        "Private": "symlink points outside the vault",
        "Secret link.md": "symlink points outside the vault",
        "Watched private": "symlink points outside the vault",
        "Inner link.md": IN_VAULT_SYMLINK,
    }
    for query in ("combination 4-8-15-16-23-42", "aardwolf"):
        assert restarted.top(query) is None
