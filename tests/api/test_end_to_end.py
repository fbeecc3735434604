"""The README's promise, end to end: the embedded defaults (edge Qdrant + MiniLM on onnxruntime) index the
example vault in the background and answer plain-language questions with the right note first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT, load_settings
from backend.domain.ranking.confidence import RECALL_FLOOR
from backend.entrypoints.app import create_app
from backend.infrastructure.embedders.onnx_minilm import DEFAULT_VARIANT
from tests.api.conftest import wait_for_job

QUERIES = json.loads((Path(__file__).parent.parent / "data" / "example_vault_queries.json").read_text())


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = load_settings(vault_path=EXAMPLE_VAULT, data_dir=tmp_path_factory.mktemp("e2e"))
    with TestClient(create_app(settings)) as c:
        status = wait_for_job(c, timeout=600)
        assert status["job"]["phase"] == "done", status["job"]
        yield c


def _ranked_notes(client: TestClient, query: str, mode: str) -> list[str]:
    body = client.post("/search", json={"query": query, "top_k": 20, "mode": mode}).json()
    assert body["status"] == "healthy", body
    return list(dict.fromkeys(r["note_path"] for r in body["results"]))


def test_the_whole_example_vault_is_indexed_with_the_default_model(client: TestClient) -> None:
    status = client.get("/index/status").json()
    # the ONNX variant is part of the model's name, so vectors of two variants never share an index
    assert status["embedding_model"] == f"all-MiniLM-L6-v2-{DEFAULT_VARIANT}"
    assert status["embedding_dimension"] == 384
    on_disk = [p for p in EXAMPLE_VAULT.rglob("*.md") if not any(part.startswith(".") for part in p.parts)]
    assert status["indexed_notes"] == len(on_disk)
    assert status["failed_files"] == []


def test_the_readme_question_finds_the_ledger_first(client: TestClient) -> None:
    body = client.post("/search", json={"query": "how much do I owe Sreenivas?", "top_k": 1}).json()
    assert body["results"][0]["note_path"] == "Finance/Money with Sreenivas.md"
    assert body["mode"] == "hybrid"


@pytest.mark.parametrize("case", QUERIES, ids=[q["query"][:40] for q in QUERIES])
def test_hybrid_puts_the_expected_note_in_the_top_ten(client: TestClient, case: dict) -> None:
    # measured 15 of 16 in the top five: the fusion defaults lean on the keyword side (chosen on two dev sets,
    # docs/measurements.md), and "which night ... four hours of sleep" is a paraphrase only dense finds (7th)
    assert case["expected_note"] in _ranked_notes(client, case["query"], "hybrid")[:10]


def test_hybrid_answers_most_questions_with_the_right_note_first(client: TestClient) -> None:
    # measured 12 of 16 (docs/measurements.md). Hybrid against each single mode is measured on SciFact and
    # LoCoMo (`make eval`), where hundreds of judged queries make the comparison meaningful.
    misses = [
        q["query"] for q in QUERIES if _ranked_notes(client, q["query"], "hybrid")[:1] != [q["expected_note"]]
    ]
    assert len(misses) <= len(QUERIES) // 3, misses


CHITCHAT_FILE = Path(__file__).parent.parent / "data" / "chitchat_turns.txt"
CHITCHAT = [line.strip() for line in CHITCHAT_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


def _recalled(client: TestClient, text: str) -> list[dict]:
    """What the OpenClaw recall would be given for this turn (its defaults)."""
    body = {"messages": [{"role": "user", "content": text}], "max_chars": 1500, "max_chunks": 3}
    answer = client.post("/context", json={**body, "min_confidence": RECALL_FLOOR, "quoted": True}).json()
    assert answer["status"] == "healthy", answer
    return list(answer["sources"])


@pytest.mark.parametrize("turn", CHITCHAT)
def test_small_talk_recalls_nothing(client: TestClient, turn: str) -> None:
    assert _recalled(client, turn) == []


def test_the_readme_question_recalls_the_ledger(client: TestClient) -> None:
    sources = _recalled(client, "how much do I owe Sreenivas?")
    assert sources[0]["note_path"] == "Finance/Money with Sreenivas.md"
    assert all(source["confidence"] >= RECALL_FLOOR for source in sources)


def test_most_questions_recall_their_note(client: TestClient) -> None:
    # measured 10 of 16 at the default floor (scripts/measure/calibration/recall.py); the rest recall nothing,
    # or another note, rather than noise for every turn
    missed = [q["query"] for q in QUERIES if q["expected_note"] not in _recalled_notes(client, q["query"])]
    assert len(missed) <= len(QUERIES) // 2, missed


def _recalled_notes(client: TestClient, text: str) -> list[str]:
    return [source["note_path"] for source in _recalled(client, text)]
