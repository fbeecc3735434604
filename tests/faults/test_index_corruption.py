"""Damaged index files: the service starts, every read says INDEX_CORRUPTED (503, recoverable, with the
rebuild command), nothing leaks a stack trace, and a rebuild from the vault serves again.

The files are damaged for real (truncated, overwritten with garbage, deleted) in an index built by the
service itself; the shard layout is qdrant-edge's (see backend/infrastructure/index_catalog/edge.py).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests.backend_cli import run_backend
from tests.live_server import wait_until
from tests.vault_files import write_notes

REPO = Path(__file__).resolve().parents[2]
NOTES = {
    "Projects/Database migration.md": "# Database migration\n\nWe move from MySQL to PostgreSQL in March.\n",
    "Finance/Sreenivas.md": "# Sreenivas\n\nI owe Sreenivas 1200 rupees for the concert tickets.\n",
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n",
    "Links.md": "# Links\n\nSee [[Shopping list]] and [[Sreenivas]].\n",
}
GARBAGE = bytes(range(256))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


def start(vault: Path, data: Path) -> TestClient:
    settings = load_settings(vault_path=vault, data_dir=data, embedding_provider="none", watch=False)
    client = TestClient(create_app(settings), raise_server_exceptions=False)
    client.__enter__()
    return client


def idle(client: TestClient) -> bool:
    response = client.get("/index/status")
    if response.status_code != 200:
        return "a rebuild job" not in response.json()["detail"]
    job = response.json()["job"]
    return job is None or job["finished_at"] is not None


@pytest.fixture
def index_dir(vault: Path, tmp_path: Path) -> Path:
    """A complete index of the vault, built by the service and closed."""
    data = tmp_path / "data"
    client = start(vault, data)
    try:
        wait_until(lambda: idle(client), "first index")
        assert client.get("/index/status").json()["indexed_notes"] == len(NOTES)
    finally:
        client.__exit__(None, None, None)
    return data / "qdrant"


def files(root: Path, pattern: str) -> list[Path]:
    found = sorted(p for p in root.glob(pattern) if p.is_file())
    assert found, f"no file matches {pattern}: the store layout changed"
    return found


def truncate(pattern: str) -> Callable[[Path], None]:
    def damage(root: Path) -> None:
        for path in files(root, pattern):
            os.truncate(path, 0)

    return damage


def garble(pattern: str) -> Callable[[Path], None]:
    def damage(root: Path) -> None:
        for path in files(root, pattern):
            size = max(path.stat().st_size, len(GARBAGE))
            path.write_bytes((GARBAGE * (size // len(GARBAGE) + 1))[:size])

    return damage


DAMAGES: dict[str, Callable[[Path], None]] = {
    "the active-generation pointer garbled": garble("active_generation.json"),
    "the active-generation pointer emptied": truncate("active_generation.json"),
    "the pointer naming a generation that is not there": lambda root: (
        root / "active_generation.json"
    ).write_text('{"active": "g9"}'),
    "the chunk shard's WAL truncated": truncate("g1/obsidian_chunks/wal/open-*"),
    "a chunk segment's description garbled": garble("g1/obsidian_chunks/segments/*/segment.json"),
    "a chunk segment's payload index garbled (the engine panics)": garble(
        "g1/obsidian_chunks/segments/*/payload_index/*-map/tracker.dat"
    ),
    "the chunk shard's config garbled": garble("g1/obsidian_chunks/edge_config.json"),
    "the note shard's WAL garbled": garble("g1/obsidian_notes/wal/open-*"),
    "the link shard's segment garbled": garble("g1/obsidian_links/segments/*/segment.json"),
}


def assert_corrupted(response_json: dict, status: int) -> None:
    assert status == 503, response_json
    assert response_json["error_code"] == "INDEX_CORRUPTED"
    assert response_json["recoverable"] is True
    assert "POST /index/rebuild" in response_json["suggestion"]
    assert "python -m backend index --rebuild" in response_json["suggestion"]
    assert "Traceback" not in response_json["detail"]


@pytest.mark.parametrize("damage", list(DAMAGES), ids=list(DAMAGES))
def test_damaged_files_answer_index_corrupted_and_a_rebuild_serves_again(
    damage: str, vault: Path, index_dir: Path
) -> None:
    DAMAGES[damage](index_dir)
    client = start(vault, index_dir.parent)
    try:
        assert client.get("/health").status_code == 200  # the service is up
        searched = client.post("/search", json={"query": "basmati rice", "mode": "keyword"})
        assert_corrupted(searched.json(), searched.status_code)
        status = client.get("/index/status")
        assert_corrupted(status.json(), status.status_code)
        assert client.post("/index/sync").status_code == 503  # nothing is written into a damaged index

        assert client.post("/index/rebuild").status_code == 202
        wait_until(lambda: client.get("/index/status").status_code == 200 and idle(client), "rebuild")
        status = client.get("/index/status").json()
        assert status["job"]["phase"] == "done", status["job"]
        assert status["indexed_notes"] == len(NOTES)
        found = client.post("/search", json={"query": "basmati rice", "mode": "keyword"}).json()
        assert found["results"][0]["note_path"] == "Shopping list.md"
        assert client.get("/index/verify").json()["consistent"] is True
    finally:
        client.__exit__(None, None, None)


def test_an_mcp_tool_on_a_damaged_index_says_the_command_that_rebuilds_it(
    vault: Path, index_dir: Path
) -> None:
    """Over MCP the suggestion named POST /index/rebuild, a route an MCP client cannot call."""
    from tests import live_server
    from tests.api.test_mcp import in_session

    DAMAGES["the chunk shard's config garbled"](index_dir)
    settings = load_settings(
        vault_path=vault, data_dir=index_dir.parent, embedding_provider="none", watch=False
    )

    async def work(session: Any) -> Any:
        return await session.call_tool("search", {"query": "basmati rice", "mode": "keyword"})

    with live_server.serving(create_app(settings)) as base:
        said = json.loads(in_session(base, work).content[0].text)
        rest = live_server.LOOPBACK.post(f"{base}/search", json={"query": "basmati rice", "mode": "keyword"})
    assert said["error_code"] == "INDEX_CORRUPTED"
    assert "`python -m backend rebuild`" in said["suggestion"]
    assert "POST /" not in said["suggestion"]
    assert_corrupted(rest.json(), rest.status_code)  # REST still names its route


def test_a_damaged_identity_record_is_rebuilt_at_start_by_itself(vault: Path, index_dir: Path) -> None:
    # Without its identity record the shard cannot be trusted to hold this model's vectors: the service
    # starts it over (the same path as a crash right after creating it) instead of failing.
    garble("g1/obsidian_chunks/kb_identity.json")(index_dir)
    client = start(vault, index_dir.parent)
    try:
        wait_until(lambda: idle(client), "re-index")
        assert client.get("/index/status").json()["indexed_notes"] == len(NOTES)
        found = client.post("/search", json={"query": "basmati rice", "mode": "keyword"}).json()
        assert found["results"][0]["note_path"] == "Shopping list.md"
    finally:
        client.__exit__(None, None, None)


def cli(*args: str, data: Path, vault: Path) -> subprocess.CompletedProcess[str]:
    return run_backend(*args, "--vault", str(vault), "--data-dir", str(data))


def test_the_cli_says_index_corrupted_without_a_traceback_and_rebuilds(vault: Path, index_dir: Path) -> None:
    truncate("g1/obsidian_chunks/wal/open-*")(index_dir)
    data = index_dir.parent
    for command in (["status"], ["search", "basmati"], ["sync"], ["verify"]):
        result = cli(*command, data=data, vault=vault)
        assert result.returncode == 1, (command, result.stdout, result.stderr)
        assert "INDEX_CORRUPTED" in result.stderr
        assert "python -m backend rebuild" in result.stderr  # CLI advice, not POST /index/rebuild
        assert "POST" not in result.stderr
        assert "Traceback" not in result.stderr
    rebuilt = cli("index", "--rebuild", data=data, vault=vault)
    assert rebuilt.returncode == 0, rebuilt.stderr
    found = cli("search", "basmati", data=data, vault=vault)
    assert found.returncode == 0, found.stderr
    assert "Shopping list.md" in found.stdout


@pytest.fixture
def lost_points(vault: Path, index_dir: Path) -> Path:
    # qdrant-edge's id tracker maps point ids to storage; cut short, the shard loads but forgets points
    # without a word (research.md). Only the note records can tell.
    truncate("g1/obsidian_chunks/segments/*/mutable_id_tracker.mappings")(index_dir)
    return index_dir.parent


def test_silently_lost_points_are_reported_by_verify(vault: Path, lost_points: Path) -> None:
    result = cli("verify", data=lost_points, vault=vault)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "note records without chunk points" in result.stdout
    assert "DRIFT" in result.stdout


def test_silently_lost_points_are_repaired_by_the_start_up_sync(vault: Path, lost_points: Path) -> None:
    client = start(vault, lost_points)
    try:
        wait_until(lambda: idle(client), "start-up sync")
        for query, path in (
            ("basmati", "Shopping list.md"),
            ("PostgreSQL", "Projects/Database migration.md"),
        ):
            found = client.post("/search", json={"query": query, "mode": "keyword"}).json()
            assert found["results"][0]["note_path"] == path
        assert client.get("/index/verify").json()["consistent"] is True
    finally:
        client.__exit__(None, None, None)


def test_a_deleted_link_shard_is_found_by_verify_and_repaired_at_start(vault: Path, index_dir: Path) -> None:
    # qdrant-edge just starts an empty shard where one was deleted: the links would read as none at all.
    shutil.rmtree(index_dir / "g1" / "obsidian_links")
    result = cli("verify", data=index_dir.parent, vault=vault)
    assert result.returncode == 3, (result.stdout, result.stderr)
    assert "1 notes whose stored links do not match their record" in result.stdout
    client = start(vault, index_dir.parent)
    try:
        wait_until(lambda: idle(client), "start-up sync")
        links = client.get("/note/Links.md/links").json()
        assert sorted(link["note_path"] for link in links["outlinks"]) == [
            "Finance/Sreenivas.md",
            "Shopping list.md",
        ]
        assert client.get("/index/verify").json()["consistent"] is True
    finally:
        client.__exit__(None, None, None)
