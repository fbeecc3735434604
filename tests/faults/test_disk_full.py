"""A full disk: writes are refused with STORAGE_FULL, the old index keeps answering, nothing is lost, and
the next sync after space is freed catches up.

Two real mechanisms, no mocked file system:
* the guard's margin set above the free space of the test's own disk (runs everywhere);
* a real full disk: a small tmpfs mounted for the test and filled to ENOSPC, with the CLI in its own
  processes (qdrant-edge writing into a full tmpfs kills its process with SIGBUS, which must not be the
  test runner). Needs root and permission to mount; skipped otherwise.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import load_settings
from backend.entrypoints.app import create_app
from scripts.measure.service import ServiceProcess
from tests.backend_cli import run_backend
from tests.vault_files import write, write_notes

REPO = Path(__file__).resolve().parents[2]
MB = 1024 * 1024
ENV = {"EMBEDDING_PROVIDER": "none", "MIN_FREE_DISK_MB": "2", "WATCH": "false"}
NOTES = {
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n",
    "Projects/Plan.md": "# Plan\n\nWe move from MySQL to PostgreSQL in March.\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


def start(vault: Path, data: Path, **settings: object) -> TestClient:
    values = {"vault_path": vault, "data_dir": data, "embedding_provider": "none", "watch": False}
    client = TestClient(create_app(load_settings(**(values | settings))), raise_server_exceptions=False)
    client.__enter__()
    return client


def finished_job(client: TestClient, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = client.get("/index/status").json()["job"]
        if job is not None and job["finished_at"] is not None:
            return job
        assert time.monotonic() < deadline, f"job did not finish: {job}"
        time.sleep(0.05)


def top(client: TestClient, query: str) -> str | None:
    results = client.post("/search", json={"query": query, "mode": "keyword"}).json()["results"]
    return results[0]["note_path"] if results else None


def test_below_the_free_space_margin_writes_are_refused_and_the_old_index_serves(
    vault: Path, tmp_path: Path
) -> None:
    data = tmp_path / "data"
    client = start(vault, data)
    try:
        assert finished_job(client)["phase"] == "done"
        free_mb = shutil.disk_usage(data).free // MB
        # The test's disk cannot be filled, so the margin is raised above its free space instead.
        client.app.state.library.default.catalog.keep_free((free_mb + 1024) * MB)  # type: ignore[attr-defined]
        (vault / "Shopping list.md").write_text("# Shopping list\n\n- quince jam\n")
        write(vault, "New.md", "# New\n\nPomegranate molasses.\n")

        assert client.post("/index/sync").status_code == 202
        job = finished_job(client)
        assert job["phase"] == "failed"
        assert "MIN_FREE_DISK_MB" in job["error"]
        assert top(client, "basmati") == "Shopping list.md"  # the old text still answers
        assert top(client, "pomegranate") is None

        assert client.post("/index/rebuild").status_code == 202
        rebuild = finished_job(client)
        assert rebuild["phase"] == "failed"
        assert "MIN_FREE_DISK_MB" in rebuild["error"]
        assert top(client, "basmati") == "Shopping list.md"
        assert client.get("/index/status").json()["indexed_notes"] == len(NOTES)

        client.app.state.library.default.catalog.keep_free(0)  # type: ignore[attr-defined]
        assert client.post("/index/sync").status_code == 202
        assert finished_job(client)["phase"] == "done"
        assert top(client, "quince") == "Shopping list.md"
        assert top(client, "pomegranate") == "New.md"
        assert client.get("/index/verify").json()["consistent"] is True
    finally:
        client.__exit__(None, None, None)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "disk"
    mount.mkdir()
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", str(mount)], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def cli(*args: str, vault: Path, data: Path) -> subprocess.CompletedProcess[str]:
    return run_backend(*args, "--vault", str(vault), "--data-dir", str(data), env=ENV)


def fill(disk: Path) -> Path:
    filler = disk / "filler"
    with filler.open("wb") as fh, contextlib.suppress(OSError):  # ENOSPC ends it
        while True:
            fh.write(b"\0" * (256 * 1024))
            fh.flush()
    assert shutil.disk_usage(disk).free < MB
    return filler


def wait_for_job(service: ServiceProcess, job_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        job = service.get("/index/status").json()["job"]
        if job["id"] == job_id and job["finished_at"] is not None:
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.05)


def test_a_really_full_disk_gives_storage_full_and_the_running_service_keeps_answering(
    vault: Path, small_disk: Path
) -> None:
    data = small_disk / "data"
    with ServiceProcess(vault, data, env=ENV) as service:
        assert service.wait_idle()["indexed_notes"] == len(NOTES)
        filler = fill(small_disk)
        (vault / "Shopping list.md").write_text("# Shopping list\n\n- quince jam\n")

        job = wait_for_job(service, service.post("/index/sync").json()["job_id"])
        assert job["phase"] == "failed"
        assert "MIN_FREE_DISK_MB" in job["error"]
        found = service.post("/search", json={"query": "basmati", "mode": "keyword"})
        assert found.status_code == 200
        assert found.json()["results"][0]["note_path"] == "Shopping list.md"  # the old index, intact
        assert service.alive  # an error, not a SIGBUS death

        # a second process cannot even make an index on the full disk: it says so instead of dying (a read
        # of a data dir never indexed makes none: INDEX_NOT_READY, so this asks to index)
        offline = cli("index", vault=vault, data=small_disk / "other-data")
        assert offline.returncode == 1, (offline.returncode, offline.stderr)
        assert "STORAGE_FULL" in offline.stderr

        filler.unlink()
        job = wait_for_job(service, service.post("/index/sync").json()["job_id"])
        assert job["phase"] == "done", job
        found = service.post("/search", json={"query": "quince", "mode": "keyword"}).json()
        assert found["results"][0]["note_path"] == "Shopping list.md"
        assert service.get("/index/verify").json()["consistent"] is True


def test_a_start_on_a_full_disk_serves_storage_full_until_there_is_room(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = start(vault, data)
    assert finished_job(first)["phase"] == "done"
    first.__exit__(None, None, None)
    free_mb = shutil.disk_usage(data).free // MB
    if free_mb + 1024 > 1024**2:
        pytest.skip("more than a terabyte free: the margin setting cannot go above it")
    client = start(vault, data, min_free_disk_mb=free_mb + 1024)  # loading the index itself would write
    try:
        assert client.get("/health").status_code == 200
        for response in (client.get("/index/status"), client.post("/search", json={"query": "basmati"})):
            assert response.status_code == 507
            body = response.json()
            assert (body["error_code"], body["recoverable"]) == ("STORAGE_FULL", True)
            assert "MIN_FREE_DISK_MB" in body["detail"]
        client.app.state.library.default.catalog.keep_free(0)  # type: ignore[attr-defined]
        assert top(client, "basmati") == "Shopping list.md"  # room again: the next request opens the index
    finally:
        client.__exit__(None, None, None)
