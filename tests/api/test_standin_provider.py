"""The service over a model served by HTTP, end to end: EMBEDDING_PROVIDER=ollama and =openai against the
stand-in server (scripts/measure/evaluation/stand_in_server.py), which serves REAL all-MiniLM-L6-v2 vectors
under the name nomic-embed-text: a model whose documentation gives both a query and a document instruction, so
both must reach it. Indexing, search and recall through it, the instructions on the wire, a changed document
instruction rebuilt while searches keep answering, and the server going down and coming back."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.application.ports import Embedder
from backend.bootstrap import build_services
from backend.config import Settings, load_settings
from backend.entrypoints.app import create_app
from scripts.measure.evaluation.stand_in_server import StandInServer, in_process
from tests.api.conftest import fitted_gate, recall_block, wait_for_job
from tests.vault_files import tiny_vault

SERVED = "nomic-embed-text"
QUERY, DOCUMENT = "search_query: ", "search_document: "
# no word in common with the note ("I owe Sreenivas 1200 rupees for the tickets"): found by meaning
BY_MEANING = "money I borrowed from a friend to pay for travel"


@pytest.fixture(scope="module")
def minilm() -> Iterator[Embedder]:
    model = in_process("minilm")
    yield model
    model.close()


@pytest.fixture
def server(minilm: Embedder) -> Iterator[StandInServer]:
    with StandInServer(minilm, model_name=SERVED) as running:
        yield running


def settings_for(tmp_path: Path, server: StandInServer, provider: str, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "vault_path": tiny_vault(tmp_path),
        "data_dir": tmp_path / "data",
        "embedding_provider": provider,
        "embedding_model": SERVED,
        "embedding_dimension": 384,  # MiniLM's, not the real nomic-embed-text's 768
        "ollama_url": server.url,
        "openai_base_url": server.openai_url,
        "ollama_max_retries": 0,  # a refused connection is final here; no backoff to wait through
        "watch": False,
    }
    values.update(overrides)
    return load_settings(**values)


@contextmanager
def indexed(
    tmp_path: Path, server: StandInServer, provider: str, **overrides: object
) -> Iterator[tuple[TestClient, dict]]:
    """A service over the stand-in once its index job is done: its client, and its status then."""
    with TestClient(create_app(settings_for(tmp_path, server, provider, **overrides))) as client:
        yield client, wait_for_job(client)


def until(check: Callable[[], dict | None], what: str, timeout: float = 60.0) -> dict:
    """Ask again until `check` answers (each ask is a request to the service: the event it waits for)."""
    deadline = time.monotonic() + timeout
    while (answer := check()) is None:
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen in {timeout}s")
        time.sleep(0.05)
    return answer


@pytest.mark.parametrize("provider", ["ollama", "openai"])
def test_index_search_and_recall_through_the_server_with_the_models_instructions(
    tmp_path: Path, server: StandInServer, provider: str
) -> None:
    with indexed(tmp_path, server, provider, recall_gate_fit=True) as (client, status):
        assert status["dense_pending"] == 0
        embedder = status["embedder"]
        assert (embedder["provider"], embedder["state"]) == (provider, "ready")
        assert (embedder["query_instruction"], embedder["document_instruction"]) == (QUERY, DOCUMENT)
        assert embedder["texts_sent"] == len(server.documents)  # what the model was sent, said
        gate = fitted_gate(client)  # nomic-embed-text has no shipped weights: a gate fitted on the vault
        assert gate["model"] == "nomic-embed-text"

        answer = client.post("/search", json={"query": BY_MEANING, "mode": "dense"}).json()
        assert answer["results"][0]["note_path"] == "Sreenivas.md"
        hybrid = client.post("/search", json={"query": "basmati lemons"}).json()
        assert (hybrid["status"], hybrid["mode"]) == ("healthy", "hybrid")
        assert hybrid["results"][0]["note_path"] == "Shopping list.md"
        recalled = recall_block(client, "How much do I owe Sreenivas?")
        assert recalled["sources"][0]["note_path"] == "Sreenivas.md"

    # every note's text went with the document instruction, every question with the query instruction
    assert server.documents
    assert all(text.startswith(DOCUMENT) for text in server.documents)
    assert any(text == QUERY + BY_MEANING for text in server.queries)
    assert not any(text.startswith(QUERY) for text in server.documents)


def test_the_server_going_down_answers_by_keyword_and_says_so_then_comes_back(
    tmp_path: Path, server: StandInServer
) -> None:
    settings = settings_for(tmp_path, server, "openai")
    services = build_services(settings)
    services.supervisor.catch_up_interval = 0  # probe on every search instead of every 30 s
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as client:
        wait_for_job(client)
        server.stop()

        down = client.post("/search", json={"query": "basmati lemons"}).json()
        assert (down["status"], down["mode"]) == ("degraded", "keyword")
        assert down["results"][0]["note_path"] == "Shopping list.md"
        assert any("EMBEDDER_UNAVAILABLE" in warning for warning in down["warnings"])
        assert client.get("/index/status").json()["embedder"]["healthy"] is False

        server.start()  # the same port: the service finds it again by itself

        def healthy() -> dict | None:
            answer = client.post("/search", json={"query": BY_MEANING}).json()
            return answer if answer["status"] == "healthy" else None

        back = until(healthy, "search by meaning again once the server is back")
        assert (back["mode"], back["warnings"]) == ("hybrid", [])
        assert back["results"][0]["note_path"] == "Sreenivas.md"


def test_a_new_document_instruction_rebuilds_while_searches_keep_answering(
    tmp_path: Path, server: StandInServer
) -> None:
    # an index built before the documents got their instruction (EMBEDDING_DOCUMENT_INSTRUCTION= : none)
    with indexed(tmp_path, server, "ollama", embedding_document_instruction="") as (_, built):
        assert built["embedder"]["document_instruction"] == ""
    assert not any(text.startswith(DOCUMENT) for text in server.documents)

    server.hold()  # the rebuild's document requests wait: the service is caught mid-rebuild
    try:
        with TestClient(create_app(settings_for(tmp_path, server, "ollama"))) as client:
            assert server.holding.wait(60)
            status = client.get("/index/status").json()
            assert status["generation"] == built["generation"]
            assert "re-embedding" in status["model_change"]
            assert "search_document" in status["model_change"]
            # the old generation answers meanwhile, by meaning too (its queries still reach the server)
            meanwhile = client.post("/search", json={"query": BY_MEANING}).json()
            assert (meanwhile["status"], meanwhile["mode"]) == ("healthy", "hybrid")
            assert meanwhile["results"][0]["note_path"] == "Sreenivas.md"

            server.release()
            done = wait_for_job(client)
            assert (done["job"]["kind"], done["job"]["phase"]) == ("rebuild", "done")
            assert done["model_change"] is None
            assert done["generation"] != built["generation"]
            assert done["embedder"]["document_instruction"] == DOCUMENT
            after = client.post("/search", json={"query": BY_MEANING, "mode": "dense"}).json()
            assert after["results"][0]["note_path"] == "Sreenivas.md"
    finally:
        server.release()
    assert server.documents[-1].startswith(DOCUMENT)


def test_a_new_query_instruction_applies_at_once_and_re_embeds_nothing(
    tmp_path: Path, server: StandInServer
) -> None:
    with indexed(tmp_path, server, "openai", embedding_query_instruction="") as (client, built):
        client.post("/search", json={"query": BY_MEANING})
    assert not server.queries  # no instruction: the stand-in took the question for a document
    sent = server.texts

    with indexed(tmp_path, server, "openai") as (client, status):
        assert (status["generation"], status["model_change"]) == (built["generation"], None)
        assert status["embedder"]["query_instruction"] == QUERY
        answer = client.post("/search", json={"query": BY_MEANING, "mode": "dense"}).json()
        assert answer["results"][0]["note_path"] == "Sreenivas.md"

    assert list(server.queries) == [QUERY + BY_MEANING]
    assert server.texts == sent + 1  # the question only: no note was embedded again
