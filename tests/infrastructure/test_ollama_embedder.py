"""OllamaEmbedder against a mocked Ollama HTTP API (respx): the only thing faked is Ollama itself."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator

import httpx
import pytest
import respx

from backend.application.ports import Embedder
from backend.domain.errors import EmbedderUnavailableError, EmbeddingModelMismatchError, ModelNotFoundError
from backend.infrastructure.embedders.ollama import OllamaEmbedder, known_dimension

BASE_URL = "http://ollama.test:11434"
MODEL = "house-embed"  # not in KNOWN_DIMENSIONS: its size is learned from the answers


def raw_vector(text: str) -> list[float]:
    """Deterministic, deliberately unnormalised 3-d vector that identifies `text`."""
    number = int(text.rsplit("-", 1)[-1]) if text.rsplit("-", 1)[-1].isdigit() else 7
    return [3.0, float(number + 1), 2.0]


def unit(vector: list[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector]


def embed_reply(
    vector_for: Callable[[str], list[float]] = raw_vector,
) -> Callable[[httpx.Request], httpx.Response]:
    def reply(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        vectors = [vector_for(text) for text in body["input"]]
        return httpx.Response(200, json={"model": body["model"], "embeddings": vectors})

    return reply


def sent_inputs(route: respx.Route) -> list[list[str]]:
    return [json.loads(call.request.content)["input"] for call in route.calls]


@pytest.fixture
def ollama() -> respx.MockRouter:
    return respx.MockRouter(base_url=BASE_URL, assert_all_called=False)


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def make_embedder(ollama: respx.MockRouter, sleeps: list[float]) -> Iterator[Callable[..., OllamaEmbedder]]:
    created: list[OllamaEmbedder] = []

    def make(**overrides: object) -> OllamaEmbedder:
        options: dict[str, object] = {
            "base_url": BASE_URL,
            "model": MODEL,
            "transport": httpx.MockTransport(ollama.handler),
            "sleep": sleeps.append,
        }
        options.update(overrides)
        embedder = OllamaEmbedder(**options)  # type: ignore[arg-type]
        created.append(embedder)
        return embedder

    yield make
    for embedder in created:
        embedder.close()


def test_satisfies_the_embedder_port(make_embedder: Callable[..., OllamaEmbedder]) -> None:
    # Checked on the class: on Python 3.11 `isinstance(obj, Embedder)` evaluates the `dimension`
    # property, which would send a probe request to Ollama.
    members = {"model_name", "dimension", "embed_documents", "embed_query", "health", "close"}
    assert members <= {name for name in dir(Embedder) if not name.startswith("_")}
    assert all(hasattr(OllamaEmbedder, name) for name in members)
    assert make_embedder().model_name == MODEL


def test_130_texts_go_out_as_batches_of_64_64_2_and_come_back_in_order(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply())
    texts = [f"note-{i}" for i in range(130)]

    vectors = make_embedder(batch_size=64, concurrency=1).embed_documents(texts)

    batches = sent_inputs(route)
    assert [len(b) for b in batches] == [64, 64, 2]
    assert [t for batch in batches for t in batch] == texts
    assert len(vectors) == 130
    for text, vector in zip(texts, vectors, strict=True):
        assert vector == pytest.approx(unit(raw_vector(text)))


def test_request_names_the_model_and_asks_ollama_to_truncate_long_inputs(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply())

    make_embedder().embed_query("what did I write about tides?")

    body = json.loads(route.calls.last.request.content)
    assert body == {"model": MODEL, "input": ["what did I write about tides?"], "truncate": True}


def test_no_texts_means_no_request(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply())
    assert make_embedder().embed_documents([]) == []
    assert not route.called


def test_dimension_is_learned_from_the_first_response(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply(lambda _: [0.5] * 1024))
    embedder = make_embedder()

    embedder.embed_documents(["a", "b"])

    assert embedder.dimension == 1024
    assert route.call_count == 1  # no extra probe once a real response told us


def test_dimension_is_probed_once_when_asked_before_any_embedding(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply(lambda _: [1.0] * 384))
    embedder = make_embedder()

    assert embedder.dimension == 384
    assert embedder.dimension == 384
    assert sent_inputs(route) == [["dimension probe"]]


def test_vectors_are_l2_normalised(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    ollama.post("/api/embed").mock(
        return_value=httpx.Response(200, json={"embeddings": [[3.0, 4.0], [0.0, -2.0]]})
    )

    vectors = make_embedder().embed_documents(["x", "y"])

    assert vectors == [pytest.approx([0.6, 0.8]), pytest.approx([0.0, -1.0])]
    assert all(math.isclose(math.hypot(*v), 1.0) for v in vectors)


def test_a_500_is_retried_with_backoff_and_then_succeeds(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder], sleeps: list[float]
) -> None:
    route = ollama.post("/api/embed").mock(
        side_effect=[
            httpx.Response(500, json={"error": "llama runner process has terminated"}),
            httpx.Response(503, text="overloaded"),
            httpx.Response(200, json={"embeddings": [[0.0, 2.0]]}),
        ]
    )

    vector = make_embedder(backoff_seconds=0.5).embed_query("hello")

    assert vector == pytest.approx([0.0, 1.0])
    assert route.call_count == 3
    assert sleeps == [0.5, 1.0]


def test_a_400_is_not_retried(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder], sleeps: list[float]
) -> None:
    route = ollama.post("/api/embed").mock(
        return_value=httpx.Response(400, json={"error": "input length exceeds the context length"})
    )

    with pytest.raises(EmbedderUnavailableError) as caught:
        make_embedder().embed_query("too long")

    assert route.call_count == 1
    assert sleeps == []
    assert "400" in caught.value.detail
    assert "exceeds the context length" in caught.value.detail


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, {"error": f'model "{MODEL}" not found, try pulling it first'}),
        (404, {"error": "not found"}),
        (400, {"error": f"model '{MODEL}' not found"}),
        (500, {"error": f'model "{MODEL}" not found, try pulling it first'}),
    ],
)
def test_missing_model_raises_model_not_found_with_the_pull_command(
    ollama: respx.MockRouter,
    make_embedder: Callable[..., OllamaEmbedder],
    sleeps: list[float],
    status: int,
    body: dict[str, str],
) -> None:
    route = ollama.post("/api/embed").mock(return_value=httpx.Response(status, json=body))

    with pytest.raises(ModelNotFoundError) as caught:
        make_embedder().embed_documents(["a"])

    assert MODEL in caught.value.detail
    assert f"ollama pull {MODEL}" in caught.value.suggestion
    assert caught.value.code == "MODEL_NOT_FOUND"
    assert route.call_count == 1
    assert sleeps == []


def test_suggestion_names_the_configured_model(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    ollama.post("/api/embed").mock(return_value=httpx.Response(404, json={"error": "model not found"}))

    with pytest.raises(ModelNotFoundError) as caught:
        make_embedder(model="nomic-embed-text").embed_query("q")

    assert "ollama pull nomic-embed-text" in caught.value.suggestion


def test_timeouts_are_retried_then_reported_as_unavailable(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder], sleeps: list[float]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=httpx.ReadTimeout("read timed out"))

    with pytest.raises(EmbedderUnavailableError) as caught:
        make_embedder(max_retries=3, backoff_seconds=0.5).embed_query("q")

    assert route.call_count == 4
    assert sleeps == [0.5, 1.0, 2.0]
    assert "timed out" in caught.value.detail
    assert caught.value.recoverable


def test_unreachable_server_is_retried_then_reported_as_unavailable(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder], sleeps: list[float]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=httpx.ConnectError("connection refused"))

    with pytest.raises(EmbedderUnavailableError) as caught:
        make_embedder(max_retries=2).embed_query("q")

    assert route.call_count == 3
    assert len(sleeps) == 2
    assert BASE_URL in caught.value.detail
    assert "reach" in caught.value.detail


def test_persistent_5xx_ends_as_unavailable(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    ollama.post("/api/embed").mock(return_value=httpx.Response(502, text="bad gateway"))

    with pytest.raises(EmbedderUnavailableError, match="502"):
        make_embedder(max_retries=1).embed_query("q")


@pytest.mark.parametrize(
    ("response", "expected_detail"),
    [
        (httpx.Response(200, text="<html>proxy error</html>"), "not JSON"),
        (httpx.Response(200, json={"model": MODEL}), "'embeddings'"),
        (httpx.Response(200, json=[[0.1, 0.2]]), "'embeddings'"),
        (httpx.Response(200, json={"embeddings": "nope"}), "'embeddings'"),
        (httpx.Response(200, json={"embeddings": [[0.1, 0.2], "x"]}), "#1"),
        (httpx.Response(200, json={"embeddings": [[0.1, 0.2], []]}), "#1"),
        (httpx.Response(200, json={"embeddings": [[0.1, 0.2], [0.1, 0.2, 0.3]]}), "different dimensions"),
    ],
)
def test_malformed_responses_become_unavailable_with_a_clear_detail(
    ollama: respx.MockRouter,
    make_embedder: Callable[..., OllamaEmbedder],
    response: httpx.Response,
    expected_detail: str,
) -> None:
    ollama.post("/api/embed").mock(return_value=response)

    with pytest.raises(EmbedderUnavailableError) as caught:
        make_embedder().embed_documents(["a", "b"])

    assert expected_detail in caught.value.detail


def test_short_batch_becomes_unavailable(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    ollama.post("/api/embed").mock(return_value=httpx.Response(200, json={"embeddings": [[0.1, 0.2]]}))

    with pytest.raises(EmbedderUnavailableError) as caught:
        make_embedder().embed_documents(["a", "b", "c"])

    assert "1 embeddings for 3 inputs" in caught.value.detail


def test_dimension_change_between_batches_becomes_unavailable(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    ollama.post("/api/embed").mock(
        side_effect=[
            httpx.Response(200, json={"embeddings": [[1.0, 0.0]]}),
            httpx.Response(200, json={"embeddings": [[1.0, 0.0, 0.0]]}),
        ]
    )
    embedder = make_embedder(batch_size=1, concurrency=1)  # one after the other: the 2-d answer is first

    with pytest.raises(EmbedderUnavailableError, match="3-dimensional.*had 2"):
        embedder.embed_documents(["a", "b"])
    assert embedder.dimension == 2


def test_health_is_true_when_ollama_lists_the_model(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.get("/api/tags").mock(
        return_value=httpx.Response(
            200,
            json={
                "models": [
                    {"name": "all-minilm:latest"},
                    {"name": f"{MODEL}:latest", "model": f"{MODEL}:latest"},
                ]
            },
        )
    )

    assert make_embedder(health_timeout=1.5).health() is True
    assert route.calls.last.request.extensions["timeout"]["read"] == 1.5


@pytest.mark.parametrize(
    "reply",
    [
        httpx.Response(200, json={"models": [{"name": "all-minilm:latest"}]}),
        httpx.Response(200, json={"models": []}),
        httpx.Response(500, json={"error": "boom"}),
        httpx.Response(200, text="not json"),
        httpx.ConnectError("connection refused"),
        httpx.ConnectTimeout("timed out"),
    ],
)
def test_health_is_false_and_never_raises_when_ollama_cannot_serve_the_model(
    ollama: respx.MockRouter,
    make_embedder: Callable[..., OllamaEmbedder],
    sleeps: list[float],
    reply: httpx.Response | Exception,
) -> None:
    route = ollama.get("/api/tags")
    if isinstance(reply, Exception):
        route.mock(side_effect=reply)
    else:
        route.mock(return_value=reply)

    assert make_embedder().health() is False
    assert route.call_count == 1  # a cheap probe: no retries
    assert sleeps == []


# -- the dimension known before Ollama answers ------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "size"),
    [
        ("mxbai-embed-large", 1024),
        ("mxbai-embed-large:latest", 1024),
        ("mxbai-embed-large:335m", 1024),
        ("nomic-embed-text:v1.5", 768),
        ("library/all-minilm", 384),
    ],
)
def test_a_well_known_model_has_its_dimension_without_asking_ollama(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder], model: str, size: int
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=httpx.ConnectError("down"))

    assert make_embedder(model=model).dimension == size
    assert not route.called
    assert known_dimension(model) == size


def test_an_unknown_model_has_no_known_dimension() -> None:
    assert known_dimension("house-embed") is None
    assert known_dimension("snowflake-arctic-embed:22m") is None  # its tags differ in size: not guessed


def test_a_given_dimension_is_used_without_asking_ollama(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply())
    embedder = make_embedder(dimension=3)

    assert embedder.dimension == 3
    assert not route.called
    assert len(embedder.embed_query("note-1")) == 3  # the answer agrees: used


def test_an_answer_of_another_size_than_expected_is_refused_as_a_model_mismatch(
    ollama: respx.MockRouter, make_embedder: Callable[..., OllamaEmbedder], sleeps: list[float]
) -> None:
    route = ollama.post("/api/embed").mock(side_effect=embed_reply(lambda _: [0.5] * 768))
    embedder = make_embedder(model="mxbai-embed-large")  # expected 1024: someone serves another model

    with pytest.raises(EmbeddingModelMismatchError) as caught:
        embedder.embed_documents(["a", "b"])

    assert caught.value.code == "EMBEDDING_MODEL_MISMATCH"
    assert "768" in caught.value.detail
    assert "1024" in caught.value.detail
    assert "EMBEDDING_DIMENSION=768" in caught.value.suggestion
    assert route.call_count == 1  # not retried: asking again gives the same size
    assert sleeps == []
    assert embedder.dimension == 1024  # still what the index expects
