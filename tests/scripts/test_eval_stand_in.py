"""`make eval STAND_IN=minilm`: an evaluation through the stand-in server, as the Makefile runs it, prints the
same table as in-process, asked with the gate fitted on the vault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.config import REPO_ROOT
from scripts.measure.evaluation.stand_in import main

EXAMPLE = REPO_ROOT / "tests" / "data" / "example-vault"


@pytest.mark.slow
def test_the_makefiles_command_evaluates_through_the_server_with_a_fitted_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALL_GATE_FIT", "true")  # as a user's service: the suite turns it off
    users_cache = tmp_path / "users-cache"  # where the user's own services keep their vectors
    monkeypatch.setenv("EMBEDDING_CACHE_DIR", str(users_cache))
    code = main(
        [
            "--serve",
            "minilm",
            "--",
            "eval",
            "--set",
            str(EXAMPLE),
            "--mode",
            "dense",
            "--data-dir",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert out.startswith("# all-MiniLM-L6-v2 served as mxbai-embed-large over ollama's API")
    assert "example-vault" in out
    assert any(line.split()[:1] == ["dense"] for line in out.splitlines())
    assert "texts" in out.splitlines()[-1]
    gate = json.loads((tmp_path / "example-vault" / "recall_gate.json").read_text())
    assert gate["embedder"] == "mxbai-embed-large"  # the questions were asked of the fitted gate
    # MiniLM's vectors under the name mxbai-embed-large stay with the evaluation: in the user's cache a real
    # mxbai-embed-large service would be given them, and a later `STAND_IN=e5` run MiniLM's
    assert not users_cache.exists() or not any(users_cache.iterdir())
    assert any((tmp_path / "embedding-cache-minilm").iterdir())
