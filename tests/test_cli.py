"""`python -m backend ...` as a user runs it: a real process, a real temp vault, the embedded store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from scripts.service_process import ServiceProcess
from tests.backend_cli import run_backend

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / "Projects").mkdir(parents=True)
    (root / "Projects" / "Database migration.md").write_text(
        "---\ntags: [work]\n---\n# Database migration\n\n## Decision\n\nWe move from MySQL to PostgreSQL.\n"
    )
    (root / "Shopping list.md").write_text("# Shopping list\n\n- oat milk\n- basmati rice\n")
    return root


def run(*args: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    return run_backend(*args, "--data-dir", str(tmp_path / "data"))


def test_index_then_search_then_status(vault: Path, tmp_path: Path) -> None:
    indexed = run("index", "--vault", str(vault), tmp_path=tmp_path)
    assert indexed.returncode == 0, indexed.stderr
    assert "indexed 2 notes" in indexed.stdout

    found = run("search", "PostgreSQL", "--vault", str(vault), tmp_path=tmp_path)
    assert found.returncode == 0, found.stderr
    assert "1. " in found.stdout
    assert "Projects/Database migration.md" in found.stdout.splitlines()[1]

    status = run("status", "--vault", str(vault), tmp_path=tmp_path)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["indexed_notes"] == 2


def test_rebuild_starts_over_and_keeps_no_removed_note(vault: Path, tmp_path: Path) -> None:
    assert run("index", "--vault", str(vault), tmp_path=tmp_path).returncode == 0
    (vault / "Shopping list.md").unlink()
    rebuilt = run("index", "--rebuild", "--vault", str(vault), tmp_path=tmp_path)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert "indexed 1 notes" in rebuilt.stdout


def test_eval_prints_the_metrics_for_each_mode_asked(vault: Path, tmp_path: Path) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "1", "text": "PostgreSQL migration"}\n{"id": "2", "text": "basmati rice"}\n')
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        "query_id\tnote\trelevance\n1\tProjects/Database migration.md\t1\n2\tShopping list.md\t1\n"
    )
    result = run(
        "eval", "--vault", str(vault), "--queries", str(queries), "--qrels", str(qrels),
        "--mode", "keyword", "--json", tmp_path=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (scores,) = json.loads(result.stdout)
    assert scores["mode"] == "keyword"
    assert scores["queries"] == 2
    assert scores["ndcg_10"] == pytest.approx(1.0)
    assert scores["hit_3"] == pytest.approx(1.0)


def test_a_missing_vault_is_one_clear_line(tmp_path: Path) -> None:
    result = run("index", "--vault", str(tmp_path / "nope"), tmp_path=tmp_path)
    assert result.returncode == 2
    assert "VAULT_PATH" in result.stderr
    assert "Traceback" not in result.stderr


def test_verify_asks_the_running_service_and_reports_drift(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "served"
    env = {"EMBEDDING_PROVIDER": "none", "WATCH": "false"}
    with ServiceProcess(vault, data, env=env) as service:
        service.wait_idle()
        ask = {**os.environ, **env, "PORT": str(service.port)}
        command = [sys.executable, "-m", "backend", "verify", "--vault", str(vault), "--data-dir", str(data)]
        clean = subprocess.run(command, cwd=REPO, env=ask, capture_output=True, text=True, timeout=120)
        assert clean.returncode == 0, clean.stderr  # the store is the service's: only HTTP can answer
        assert "consistent" in clean.stdout
        (vault / "Shopping list.md").unlink()  # the watcher is off: the index keeps the note
        drift = subprocess.run(command, cwd=REPO, env=ask, capture_output=True, text=True, timeout=120)
        assert drift.returncode == 3, drift.stderr
        assert "1 indexed notes no longer on disk" in drift.stdout
        assert "Shopping list.md" in drift.stdout
