"""The service configured for Ollama (EMBEDDING_PROVIDER=ollama, wired from the settings) when Ollama is down
or lacks the model: it starts, indexes by keyword, says what is wrong in /index/status and in searches, and
catches up by itself once Ollama serves the model. Ollama is a real closed loopback port, or respx."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import respx
from fastapi.testclient import TestClient

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests.api.conftest import wait_for_job
from tests.ports import refused_url
from tests.vault_files import tiny_vault

MODEL = "mxbai-embed-large"


def settings_for(tmp_path: Path, ollama_url: str, **overrides: object):
    values: dict[str, object] = {
        "vault_path": tiny_vault(tmp_path),
        "data_dir": tmp_path / "data",
        "embedding_provider": "ollama",
        "ollama_url": ollama_url,
        "ollama_max_retries": 0,  # a refused connection is final here; no backoff to wait through
        "watch": False,
    }
    values.update(overrides)
    return load_settings(**values)


def test_the_service_starts_and_indexes_by_keyword_while_ollama_is_down(tmp_path: Path) -> None:
    settings = settings_for(tmp_path, refused_url())

    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        status = wait_for_job(client)
        assert status["job"]["phase"] == "done"  # Ollama being down did not fail the first index
        assert status["indexed_notes"] == 2
        assert status["dense_pending"] == 2
        assert status["embedding_dimension"] == 1024  # known without Ollama: the index was created
        assert status["embedder"]["healthy"] is False
        assert status["embedder"]["error"]["error_code"] == "EMBEDDER_UNAVAILABLE"
        assert settings.ollama_url in status["embedder"]["error"]["detail"]

        answer = client.post("/search", json={"query": "basmati lemons"}).json()
        assert answer["status"] == "degraded"
        assert answer["mode"] == "keyword"
        assert answer["results"][0]["note_path"] == "Shopping list.md"
        assert any("EMBEDDER_UNAVAILABLE" in warning for warning in answer["warnings"])


def embed_reply(request: httpx.Request) -> httpx.Response:
    texts = json.loads(request.content)["input"]
    vectors = [[1.0 + (len(text) + i) % 5 for i in range(1024)] for text in texts]
    return httpx.Response(200, json={"model": MODEL, "embeddings": vectors})


def test_a_missing_model_is_reported_with_the_pull_command_and_heals_once_pulled(tmp_path: Path) -> None:
    url = "http://ollama.test:11434"
    settings = settings_for(tmp_path, url)
    with respx.mock(base_url=url, assert_all_called=False) as ollama:
        embed = ollama.post("/api/embed")
        tags = ollama.get("/api/tags")
        embed.mock(return_value=httpx.Response(404, json={"error": f'model "{MODEL}" not found'}))
        tags.mock(return_value=httpx.Response(200, json={"models": [{"name": "all-minilm:latest"}]}))
        services = build_services(settings)
        services.supervisor.catch_up_interval = 0  # probe on every search instead of every 30 s
        services.supervisor.open()
        with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as client:
            status = wait_for_job(client)
            assert status["job"]["phase"] == "done"
            assert status["dense_pending"] == 2
            error = status["embedder"]["error"]
            assert error["error_code"] == "MODEL_NOT_FOUND"
            assert f"ollama pull {MODEL}" in error["suggestion"]
            assert status["embedder"]["healthy"] is False  # /api/tags does not list the model

            answer = client.post("/search", json={"query": "basmati lemons"}).json()
            assert answer["status"] == "degraded"
            assert any("MODEL_NOT_FOUND" in w and f"ollama pull {MODEL}" in w for w in answer["warnings"])

            # remembered facts work meanwhile: stored without a dense vector, found by their words
            fact = {"key": "rice-brand", "value": "buy the aged basmati", "source": "Shopping list.md"}
            assert client.post("/memory", json=fact).status_code in (200, 201)
            recalled = client.post("/search", json={"query": "aged basmati", "include_memory": True})
            assert recalled.status_code == 200, recalled.text
            assert [m["key"] for m in recalled.json()["memories"]] == ["rice-brand"]
            assert any("MODEL_NOT_FOUND" in w for w in recalled.json()["warnings"])

            # `ollama pull mxbai-embed-large` happened: the next search notices and the notes catch up
            tags.mock(return_value=httpx.Response(200, json={"models": [{"name": f"{MODEL}:latest"}]}))
            embed.mock(side_effect=embed_reply)
            client.post("/search", json={"query": "basmati lemons"})
            healed = wait_for_job(client)
            assert healed["dense_pending"] == 0
            assert (healed["embedder"]["healthy"], healed["embedder"]["error"]) == (True, None)
            again = client.post("/search", json={"query": "basmati lemons"}).json()
            assert (again["status"], again["mode"], again["warnings"]) == ("healthy", "hybrid", [])
