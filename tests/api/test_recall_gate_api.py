"""A model without shipped recall weights gets a gate fitted on the vault: after its first index, kept across
a restart, fitted again on demand, and said in /index/status. The model here is the bag-of-words test
embedder under a name no calibration knows; tests/api/test_stand_in_gate.py does the same with a real one."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.recall.calibration_probes import CHITCHAT, OTHER_DOMAINS
from backend.entrypoints.app import create_app
from tests.api.conftest import fitted_gate, recall_block, wait_for_job
from tests.application.fakes import FakeEmbedder

VAULT = {
    "Projects/Boat.md": "# Boat\n\nThe hull work cost £4,200; I borrowed £1,500 from Dad to pay for it.\n",
    "People/Dad.md": "# Dad\n\nLent me £1,500 for the boat's hull in May.\n",
    "Garden.md": "# Garden\n\nPlanted garlic and broad beans in October.\n",
    "Bees.md": "# Bees\n\nThe second hive swarmed in June; caught it in the plum tree.\n",
}


def _client(root: Path) -> TestClient:
    settings = load_settings(
        vault_path=root / "vault", data_dir=root / "data", watch=False, recall_gate_fit=True
    )
    services = build_services(settings, embedder=FakeEmbedder(64, "unknown-embed", spread=True))
    return TestClient(create_app(settings, services=services), raise_server_exceptions=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    for path, text in VAULT.items():
        (tmp_path / "vault" / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "vault" / path).write_text(text, encoding="utf-8")
    return tmp_path


@pytest.fixture
def client(root: Path) -> Iterator[TestClient]:
    with _client(root) as client:
        assert wait_for_job(client)["job"]["phase"] == "done"
        yield client


def test_the_first_index_fits_a_gate_that_recalls_the_answer_and_nothing_for_chit_chat(
    client: TestClient, root: Path
) -> None:
    gate = fitted_gate(client)
    assert gate["model"] == "unknown-embed"
    assert gate["probes"] == len(CHITCHAT) + len(OTHER_DOMAINS)
    assert gate["chunks"] >= len(VAULT)
    assert json.loads((root / "data" / "recall_gate.json").read_text())["embedder"] == "unknown-embed"

    answer = recall_block(client, "did I borrow money to pay for the hull work?")
    assert answer["sources"]
    assert answer["sources"][0]["note_path"] in ("Projects/Boat.md", "People/Dad.md")
    for turn in ("hi", "thanks a lot, that helps", "what time is it?", "谢谢"):
        assert recall_block(client, turn)["sources"] == [], turn


def test_a_restart_serves_the_kept_gate_without_fitting_again(client: TestClient, root: Path) -> None:
    fitted = fitted_gate(client)
    client.__exit__(None, None, None)
    with _client(root) as again:
        status = again.get("/index/status").json()
        assert status["recall_calibration"] == fitted  # in force at once, from the file
        wait_for_job(again)
        assert again.get("/index/status").json()["recall_calibration"]["fitted_at"] == fitted["fitted_at"]


def test_calibrate_fits_again_on_demand_and_shows_its_progress(client: TestClient, root: Path) -> None:
    fitted_gate(client)
    (root / "data" / "recall_gate.json").unlink()
    response = client.post("/index/calibrate")
    assert response.status_code == 202
    job = wait_for_job(client)["job"]
    assert (job["kind"], job["phase"]) == ("calibrate", "done")
    assert job["done"] == job["total"] == len(CHITCHAT) + len(OTHER_DOMAINS)
    assert (root / "data" / "recall_gate.json").exists()


def test_a_keyword_only_index_says_its_weights_are_the_keyword_ones(tmp_path: Path, root: Path) -> None:
    settings = load_settings(
        vault_path=root / "vault", data_dir=tmp_path / "kw", watch=False, embedding_provider="none"
    )
    with TestClient(create_app(settings)) as client:
        wait_for_job(client)
        assert client.get("/index/status").json()["recall_calibration"]["source"] == "keyword"


def test_with_the_automatic_fit_off_the_gate_is_fitted_only_on_demand(root: Path) -> None:
    settings = load_settings(
        vault_path=root / "vault", data_dir=root / "data", watch=False, recall_gate_fit=False
    )
    services = build_services(settings, embedder=FakeEmbedder(64, "unknown-embed", spread=True))
    with TestClient(create_app(settings, services=services)) as client:
        wait_for_job(client)
        assert client.get("/index/status").json()["recall_calibration"]["source"] == "keyword"
        assert not (root / "data" / "recall_gate.json").exists()
        assert client.post("/index/calibrate").status_code == 202
        assert wait_for_job(client)["recall_calibration"]["source"] == "fitted"
