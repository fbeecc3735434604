"""Hostile and broken files (see hostile_vault.py): each note is indexed, or skipped with its reason in
failed_files; the rest of the vault is indexed, the service stays healthy and search still answers; nothing
outside the vault is read.

Run as root (as CI does here), chmod 000 stops nobody, so "unreadable" is made real in other ways: a FIFO,
a folder or a dangling symlink where a note was, files deleted between the scan and the read, and a run as
the unprivileged user `nobody` when the machine has one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.application.indexing.indexer import Indexer
from backend.bootstrap import build_encoder, build_services
from backend.config import load_settings
from backend.domain.models import ParsedNote, SearchMode
from backend.entrypoints.app import create_app
from backend.infrastructure.markdown.parser import parse_note
from tests.api.conftest import wait_for_job
from tests.faults.hostile_vault import SKIPPED, write_hostile_vault
from tests.vault_files import write

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """One indexing of the hostile vault (about 10 s: a 50 MB note and 10,000 headings cost that much)."""
    root = tmp_path_factory.mktemp("hostile")
    vault = root / "vault"
    vault.mkdir()
    searchable = write_hostile_vault(vault)
    settings = load_settings(vault_path=vault, data_dir=root / "data", embedding_provider="none", watch=False)
    client = TestClient(create_app(settings), raise_server_exceptions=False)
    client.__enter__()
    wait_for_job(client, timeout=600)
    yield client, searchable
    client.__exit__(None, None, None)


def failed(client: TestClient) -> dict[str, str]:
    return {f["path"]: f["reason"] for f in client.get("/index/status").json()["failed_files"]}


def test_the_service_stays_healthy_and_indexes_every_note_it_can(hostile: tuple[TestClient, dict]) -> None:
    client, searchable = hostile
    assert client.get("/health").status_code == 200
    status = client.get("/index/status").json()
    assert status["job"]["phase"] == "done"
    assert status["indexed_notes"] == len(searchable) + 2  # and the empty and whitespace-only notes
    assert status["unindexed_files"] == 0


@pytest.mark.parametrize(
    "word",
    ["postgresql", "basmati", "lighthouse", "zebra", "armadillo", "wombat", "quokka", "narwhal", "pangolin",
     "ocelot", "mongoose", "capybara", "meerkat", "wolverine", "caracal", "tapir", "okapi", "fennec", "gecko",
     "dugong"],
)  # fmt: skip
def test_each_note_is_found_by_its_own_word(hostile: tuple[TestClient, dict], word: str) -> None:
    client, searchable = hostile
    (path,) = [p for p, w in searchable.items() if w == word]
    response = client.post("/search", json={"query": word, "mode": "keyword", "top_k": 3})
    assert response.status_code == 200
    assert path in [r["note_path"] for r in response.json()["results"]]


def test_what_is_skipped_or_damaged_is_listed_with_its_reason(hostile: tuple[TestClient, dict]) -> None:
    client, _ = hostile
    reasons = failed(client)
    for path, reason in SKIPPED.items():
        assert reason in reasons[path]
    assert "over MAX_NOTE_BYTES" in reasons["Huge/fifty megabytes.md"]
    assert "invalid UTF-8" in reasons["Broken/invalid utf8.md"]
    assert "NUL" in reasons["Broken/nul bytes.md"]
    assert "frontmatter_too_complex" in reasons["Yaml/billion laughs.md"]
    assert "frontmatter_invalid_yaml" in reasons["Yaml/deep nesting.md"]
    assert "frontmatter_too_large" in reasons["Yaml/huge frontmatter.md"]
    assert "frontmatter_unclosed" in reasons["Yaml/unclosed.md"]
    for fine in (
        "Shopping list.md",
        "Huge/one long line.md",
        "Huge/ten thousand headings.md",
        "Names/fox 🦊.md",
    ):
        assert fine not in reasons


def test_nothing_from_outside_the_vault_is_indexed(hostile: tuple[TestClient, dict]) -> None:
    client, _ = hostile
    body = {"query": "outside the vault never indexed", "mode": "keyword", "top_k": 50}
    results = client.post("/search", json=body).json()["results"]
    assert all("never indexed" not in r["content"] for r in results)
    assert all(not r["note_path"].startswith("Not notes/") for r in results)


def test_the_index_adds_up_with_the_vault(hostile: tuple[TestClient, dict]) -> None:
    client, _ = hostile
    report = client.get("/index/verify").json()
    assert report["consistent"] is True, report["drift"]
    assert {f["path"] for f in report["skipped"]} == set(SKIPPED)


def test_files_deleted_or_made_unreadable_mid_scan_are_skipped_with_a_reason(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for name in ("a first.md", "b deleted.md", "c fifo.md", "d folder.md", "e dangling.md", "f last.md"):
        write(vault, name, f"# {name}\n\nword{name[0]}\n")

    def sabotaging_parser(rel_path: str, text: str) -> ParsedNote:
        # The first note is being read: the scan is done, the others are not read yet. Change them now.
        if rel_path == "a first.md":
            (vault / "b deleted.md").unlink()
            (vault / "c fifo.md").unlink()
            os.mkfifo(vault / "c fifo.md")
            (vault / "d folder.md").unlink()
            (vault / "d folder.md").mkdir()
            (vault / "e dangling.md").unlink()
            (vault / "e dangling.md").symlink_to(vault / "nowhere.md")
        return parse_note(rel_path, text)

    services = build_services(
        load_settings(vault_path=vault, data_dir=tmp_path / "data", embedding_provider="none", watch=False)
    )
    index = services.index
    # the service's index, written with the parser that changes the disk at the right moment
    indexer = Indexer(index, parser=sabotaging_parser, encoder=build_encoder(services.settings))
    try:
        services.supervisor.open(start_indexing=False)
        report = indexer.sync()
        assert report.indexed == 2
        reasons = {f.rel_path: f.reason for f in index.failed_files}
        assert reasons == {
            "c fifo.md": "not a regular file",
            "d folder.md": "not a regular file",
            "e dangling.md": "symlink target missing: No such file or directory",
        }  # the deleted note is simply gone
        assert index.unindexed_files == 3
        hits = services.search.search("worda wordf", mode=SearchMode.KEYWORD, top_k=5).hits
        assert sorted({h.payload["note_path"] for h in hits}) == ["a first.md", "f last.md"]
    finally:
        services.close()


@pytest.fixture
def as_nobody() -> list[str]:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a process as the unprivileged user nobody")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    """A folder nobody can reach (pytest's own temp folders are private to root)."""
    work = Path(tempfile.mkdtemp(prefix="kb-nobody-"))
    os.chmod(work, 0o755)
    yield work
    for path in work.rglob("*"):  # give root its way back in to delete
        if path.is_dir() and not path.is_symlink():
            os.chmod(path, 0o755)
    shutil.rmtree(work)


def test_a_note_without_read_permission_is_skipped_when_not_root(
    as_nobody: list[str], shared_dir: Path
) -> None:
    work = shared_dir
    vault = work / "vault"
    write(vault, "open.md", "# Open\n\nreadable heron\n")
    write(vault, "closed.md", "# Closed\n\nprivate heron\n")
    write(vault, "Locked/inside.md", "# Inside\n\nlocked heron\n")
    os.chmod(vault / "closed.md", 0o000)
    os.chmod(vault / "Locked", 0o000)
    (work / "data").mkdir()
    os.chown(work / "data", 65534, 65534)
    env = {**os.environ, "EMBEDDING_PROVIDER": "none", "PORT": "1", "HOME": str(work)}
    result = subprocess.run(
        [*as_nobody, sys.executable, "-m", "backend", "index", "--vault", str(vault), "--data-dir",
         str(work / "data")],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    if result.returncode != 0 and "Permission denied" in result.stderr and "backend" not in result.stderr:
        pytest.skip(f"nobody cannot run the project's Python here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr
    assert "indexed 1 notes" in result.stdout
    assert "closed.md: not readable" in result.stdout
    assert "Locked: folder unreadable: Permission denied" in result.stdout
