"""Ollama's multilingual embedding models in production (issue 27): bge-m3 and the like serve a vault in many
languages as mxbai-embed-large serves an English one — the same API calls, their sizes known before Ollama
answers, a question in one language finding a note in another — and an English-only model over a vault
mostly in other languages gets bge-m3 proposed in /index/status. respx plays Ollama."""

from __future__ import annotations

import json
import math
from pathlib import Path

import httpx
import pytest
import respx
from fastapi.testclient import TestClient

from backend.config import Settings, load_settings
from backend.entrypoints.app import create_app
from backend.infrastructure.embedders.ollama import known_dimension
from tests.api.conftest import wait_for_job

URL = "http://ollama.test:11434"
NOTES = {
    "Steuer.md": "# Steuer\n\nDie Steuererklärung muss bis Ende Juli beim Finanzamt sein.\n",
    "拉面.md": "# 拉面\n\n豚骨汤底要煮十二个小时，面条要细。\n",
    "Поездка.md": "# Поездка\n\nВ марте едем в Казань на поезде, билеты уже куплены.\n",
}
# what a multilingual model knows: one direction per meaning, whatever the language
MEANINGS = (("tax", "steuer"), ("ramen", "拉面", "豚骨"), ("trip", "train", "поезд", "поездка"))


def meaning_vector(text: str, size: int) -> list[float]:
    folded = text.casefold()
    vector = [0.05] * size
    for i, words in enumerate(MEANINGS):
        vector[i] += sum(folded.count(word) for word in words)
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector]


def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for name, text in NOTES.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


def ollama_settings(tmp_path: Path, **overrides: object) -> Settings:
    return load_settings(
        vault_path=vault(tmp_path),
        data_dir=tmp_path / "data",
        embedding_provider="ollama",
        ollama_url=URL,
        watch=False,
        **overrides,
    )


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("bge-m3", 1024),
        ("bge-m3:567m", 1024),
        ("snowflake-arctic-embed2", 1024),
        ("paraphrase-multilingual", 768),
        ("embeddinggemma", 768),
        ("mxbai-embed-large", 1024),
    ],
)
def test_multilingual_ollama_models_have_known_sizes(model: str, size: int) -> None:
    # known before Ollama answers: the service starts and indexes by keyword while Ollama is still down
    assert known_dimension(model) == size


@pytest.mark.parametrize("model", ["bge-m3", "paraphrase-multilingual"])
def test_a_multilingual_ollama_model_finds_notes_across_languages(tmp_path: Path, model: str) -> None:
    size = known_dimension(model)
    assert size is not None
    sent: list[str] = []

    def embed(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        assert body["model"] == model
        sent.extend(body["input"])
        vectors = [meaning_vector(text, size) for text in body["input"]]
        return httpx.Response(200, json={"model": model, "embeddings": vectors})

    settings = ollama_settings(tmp_path, embedding_model=model)
    with respx.mock(base_url=URL, assert_all_called=False) as ollama:
        ollama.post("/api/embed").mock(side_effect=embed)
        ollama.get("/api/tags").mock(return_value=httpx.Response(200, json={"models": [{"name": model}]}))
        with TestClient(create_app(settings)) as client:
            status = wait_for_job(client)
            assert (status["dense_pending"], status["embedding_model"]) == (0, model)
            assert status["embedding_dimension"] == size
            assert status["embedder"]["proposal"] is None  # a multilingual model: nothing to propose
            for question, note in (
                ("when is the tax due?", "Steuer.md"),
                ("ramen broth", "拉面.md"),
                ("train trip in March", "Поездка.md"),
            ):
                answer = client.post("/search", json={"query": question, "top_k": 1}).json()
                assert answer["status"] == "healthy", answer
                assert answer["results"][0]["note_path"] == note, question
    assert any("Steuererklärung" in text for text in sent)  # notes went to Ollama as they are written


def test_an_english_only_ollama_model_over_a_multilingual_vault_gets_bge_m3_proposed(tmp_path: Path) -> None:
    settings = ollama_settings(tmp_path)
    with respx.mock(base_url=URL, assert_all_called=False) as ollama:
        ollama.post("/api/embed").mock(
            side_effect=lambda request: httpx.Response(
                200,
                json={"embeddings": [meaning_vector(t, 1024) for t in json.loads(request.content)["input"]]},
            )
        )
        ollama.get("/api/tags").mock(
            return_value=httpx.Response(200, json={"models": [{"name": "mxbai-embed-large:latest"}]})
        )
        with TestClient(create_app(settings)) as client:
            status = wait_for_job(client)
            assert status["embedding_model"] == "mxbai-embed-large"
            proposal = status["embedder"]["proposal"]
            assert "ollama pull bge-m3" in proposal
            assert "EMBEDDING_MODEL=bge-m3" in proposal
            assert status["languages"]["non_english_share"] == 1.0
