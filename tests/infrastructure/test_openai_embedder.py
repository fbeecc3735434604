"""The OpenAI-compatible embedder and the instructions, against the stand-in server (a real HTTP server,
scripts/measure/evaluation/stand_in_server.py) serving the fast bag-of-words model: what a user of llama.cpp,
LM Studio, vLLM or text-embeddings-inference would meet. respx only for a server without /models, which the
stand-in has."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import numpy as np
import pytest
import respx

from backend.domain.errors import EmbedderUnavailableError, EmbeddingModelMismatchError, ModelNotFoundError
from backend.domain.index.embedding_instructions import known_instructions
from backend.infrastructure.embedders.instructed import InstructedEmbedder
from backend.infrastructure.embedders.ollama import OllamaEmbedder
from backend.infrastructure.embedders.openai_compatible import OpenAICompatibleEmbedder
from scripts.measure.evaluation.stand_in_server import StandInServer
from tests.application.fakes import FakeEmbedder

MODEL = "nomic-embed-text"
DIMENSION = 768  # nomic-embed-text's known size: answers are checked against it


@pytest.fixture
def server() -> Iterator[StandInServer]:
    with StandInServer(FakeEmbedder(DIMENSION, "fake"), model_name=MODEL) as running:
        yield running


def openai(server: StandInServer, **options: object) -> OpenAICompatibleEmbedder:
    return OpenAICompatibleEmbedder(base_url=server.openai_url, model=MODEL, max_retries=0, **options)  # type: ignore[arg-type]


def test_vectors_come_back_in_the_order_of_the_texts(server: StandInServer) -> None:
    texts = ["lemons and basmati", "a walk in the park", "tax return 2024"]
    fake = FakeEmbedder(DIMENSION, "fake")

    vectors = openai(server, batch_size=2).embed_documents(texts)

    # the stand-in answers each batch last item first: the embedder puts them back by `index`
    expected = [np.asarray(v) / np.linalg.norm(v) for v in fake.embed_documents(texts)]
    assert np.allclose(vectors, expected)
    assert server.requests == 2
    assert server.texts == 3


@pytest.mark.parametrize("kind", [OllamaEmbedder, OpenAICompatibleEmbedder])
def test_the_model_gets_its_instructions_queries_and_documents_each_their_own(
    server: StandInServer, kind: type[OllamaEmbedder] | type[OpenAICompatibleEmbedder]
) -> None:
    url = server.url if kind is OllamaEmbedder else server.openai_url
    instructions = known_instructions(MODEL)
    assert instructions is not None
    embedder = InstructedEmbedder(kind(base_url=url, model=MODEL, max_retries=0), instructions)

    embedder.embed_documents(["Shopping list: lemons"])
    embedder.embed_query("what do I need to buy")

    assert list(server.documents) == ["search_document: Shopping list: lemons"]
    assert list(server.queries) == ["search_query: what do I need to buy"]


def test_a_refused_key_names_the_setting_and_the_right_key_is_let_in() -> None:
    with StandInServer(FakeEmbedder(DIMENSION), model_name=MODEL, api_key="s3cret") as server:
        with pytest.raises(EmbedderUnavailableError) as refused:
            openai(server, api_key="wrong").embed_query("hello")
        assert "EMBEDDING_API_KEY" in (refused.value.suggestion or "")
        assert "401" in refused.value.detail
        assert "s3cret" not in refused.value.detail
        assert "wrong" not in refused.value.detail

        assert len(openai(server, api_key="s3cret").embed_query("hello")) == DIMENSION


def test_a_model_the_server_does_not_serve_is_not_found(server: StandInServer) -> None:
    embedder = OpenAICompatibleEmbedder(base_url=server.openai_url, model="bge-m3", max_retries=0)

    with pytest.raises(ModelNotFoundError) as missing:
        embedder.embed_query("hello")

    assert "bge-m3" in missing.value.detail


def test_a_base_url_without_its_v1_says_where_to_look(server: StandInServer) -> None:
    with pytest.raises(EmbedderUnavailableError) as wrong:
        OpenAICompatibleEmbedder(base_url=server.url, model=MODEL, max_retries=0).embed_query("hello")

    assert "OPENAI_BASE_URL" in (wrong.value.suggestion or "")


def test_vectors_of_another_size_than_the_models_are_refused() -> None:
    with StandInServer(FakeEmbedder(32), model_name=MODEL) as server:  # 32, not nomic's 768
        with pytest.raises(EmbeddingModelMismatchError) as mismatch:
            openai(server).embed_query("hello")

    assert "768" in mismatch.value.detail
    assert "32" in mismatch.value.detail


def test_health_follows_the_server_down_and_back_on_the_same_port(server: StandInServer) -> None:
    embedder = openai(server)
    port = server.port
    assert embedder.health()

    server.stop()
    assert not embedder.health()
    with pytest.raises(EmbedderUnavailableError):
        embedder.embed_query("hello")

    server.start()
    assert server.port == port
    assert embedder.health()
    assert len(embedder.embed_query("hello")) == DIMENSION


def test_a_server_without_models_is_asked_to_embed_instead() -> None:
    base = "http://tei.test/v1"
    with respx.mock(base_url=base) as tei:  # text-embeddings-inference has no /v1/models
        tei.get("/models").mock(return_value=httpx.Response(404))
        tei.post("/embeddings").mock(
            return_value=httpx.Response(200, json={"data": [{"index": 0, "embedding": [0.5] * DIMENSION}]})
        )
        assert OpenAICompatibleEmbedder(base_url=base, model=MODEL).health()
