"""OllamaEmbedder sending a call's batches with bounded concurrency, against a mocked Ollama (respx)."""

from __future__ import annotations

import json
import threading

import httpx
import pytest
import respx

from backend.config import Settings
from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.ollama import OllamaEmbedder

BASE_URL = "http://ollama.test:11434"
WAIT = 10.0  # seconds a mocked answer waits for its peers before the test fails instead of hanging


def vector_of(text: str) -> list[float]:
    """A unit vector that names its text: note-17 -> [0, 1] scaled so the index shows in the angle."""
    number = int(text.rsplit("-", 1)[-1])
    return [1.0, float(number)]


def unit(vector: list[float]) -> list[float]:
    norm = (vector[0] ** 2 + vector[1] ** 2) ** 0.5
    return [vector[0] / norm, vector[1] / norm]


class Recorder:
    """Answers /api/embed after a per-batch hook, counting requests in flight."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0
        self.sent: list[list[str]] = []

    def reply(self, request: httpx.Request, before: object = None) -> httpx.Response:
        texts = json.loads(request.content)["input"]
        with self.lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            self.sent.append(texts)
        try:
            if callable(before):
                answer = before(texts)
                if answer is not None:
                    return answer
            return httpx.Response(200, json={"embeddings": [vector_of(t) for t in texts]})
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def ollama() -> respx.MockRouter:
    return respx.MockRouter(base_url=BASE_URL, assert_all_called=False)


def make(ollama: respx.MockRouter, sleeps: list[float] | None = None, **options: object) -> OllamaEmbedder:
    return OllamaEmbedder(
        base_url=BASE_URL,
        model="house-embed",
        transport=httpx.MockTransport(ollama.handler),
        sleep=(sleeps if sleeps is not None else []).append,
        **options,  # type: ignore[arg-type]
    )


def test_the_default_is_two_requests_in_flight() -> None:
    assert Settings().ollama_concurrency == 2
    assert Settings(ollama_concurrency=5).ollama_concurrency == 5  # OLLAMA_CONCURRENCY


def test_batches_overlap_up_to_the_limit_and_vectors_come_back_in_input_order(
    ollama: respx.MockRouter,
) -> None:
    recorder = Recorder()
    # The first batch answers last: it waits until a later batch has been answered, which can only happen
    # when two requests are in flight at once.
    later_answered = threading.Event()

    def hold_first(texts: list[str]) -> None:
        if texts[0] == "note-0":
            assert later_answered.wait(WAIT), "no second request was sent while the first was in flight"
        else:
            later_answered.set()

    ollama.post("/api/embed").mock(side_effect=lambda request: recorder.reply(request, hold_first))
    texts = [f"note-{i}" for i in range(10)]
    embedder = make(ollama, batch_size=2, concurrency=2)
    try:
        vectors = embedder.embed_documents(texts)
    finally:
        embedder.close()

    assert vectors == [pytest.approx(unit(vector_of(t))) for t in texts]
    assert recorder.most_in_flight == 2
    assert sorted(t for batch in recorder.sent for t in batch) == sorted(texts)  # each text sent once
    assert len(recorder.sent) == 5


def test_concurrent_callers_together_stay_within_the_limit(ollama: respx.MockRouter) -> None:
    recorder = Recorder()
    ollama.post("/api/embed").mock(side_effect=recorder.reply)
    embedder = make(ollama, batch_size=1, concurrency=3)
    results: dict[int, list[list[float]]] = {}

    def call(n: int) -> None:
        results[n] = embedder.embed_documents([f"note-{n * 10 + i}" for i in range(6)])

    try:
        threads = [threading.Thread(target=call, args=(n,)) for n in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT)
    finally:
        embedder.close()

    assert recorder.most_in_flight <= 3
    for n in range(4):
        assert results[n] == [pytest.approx(unit(vector_of(f"note-{n * 10 + i}"))) for i in range(6)]


def test_a_failing_batch_is_retried_while_the_others_go_on(ollama: respx.MockRouter) -> None:
    recorder = Recorder()
    failures = {"note-4": 2}  # the third batch answers 503 twice, then succeeds
    lock = threading.Lock()

    def flaky(texts: list[str]) -> httpx.Response | None:
        with lock:
            if failures.get(texts[0], 0) > 0:
                failures[texts[0]] -= 1
                return httpx.Response(503, json={"error": "server busy"})
        return None

    ollama.post("/api/embed").mock(side_effect=lambda request: recorder.reply(request, flaky))
    sleeps: list[float] = []
    texts = [f"note-{i}" for i in range(8)]
    embedder = make(ollama, sleeps, batch_size=2, concurrency=2, backoff_seconds=0.25)
    try:
        vectors = embedder.embed_documents(texts)
    finally:
        embedder.close()

    assert vectors == [pytest.approx(unit(vector_of(t))) for t in texts]
    assert sorted(sleeps) == [0.25, 0.5]  # that batch's own backoff
    assert [batch for batch in recorder.sent if batch[0] == "note-4"] == [["note-4", "note-5"]] * 3


def test_a_batch_that_keeps_failing_fails_the_whole_call_and_unsent_batches_are_dropped(
    ollama: respx.MockRouter,
) -> None:
    recorder = Recorder()
    attempts = {"note-1": 0}
    gave_up = threading.Event()

    def second_batch_down(texts: list[str]) -> httpx.Response | None:
        if texts[0] == "note-1":
            attempts["note-1"] += 1
            if attempts["note-1"] == 2:  # max_retries=1: its last attempt
                gave_up.set()
            return httpx.Response(500, json={"error": "llama runner process has terminated"})
        if not texts[0].startswith("again-"):
            # the other worker's batches wait for the failure, so the queue behind it is still unsent
            assert gave_up.wait(WAIT)
        return None

    ollama.post("/api/embed").mock(side_effect=lambda request: recorder.reply(request, second_batch_down))
    embedder = make(ollama, batch_size=1, concurrency=2, max_retries=1)
    texts = [f"note-{i}" for i in range(40)]
    try:
        with pytest.raises(EmbedderUnavailableError, match="500"):
            embedder.embed_documents(texts)
        sent_before = len(recorder.sent)
        # the embedder stays usable: the next call (Ollama back for that text) answers in full
        again = ["again-2", "again-3", "again-5"]
        assert embedder.embed_documents(again) == [pytest.approx(unit(vector_of(t))) for t in again]
    finally:
        embedder.close()

    # no partial answer reached the caller, and the queued batches behind the failure were never sent
    assert sent_before <= 6  # note-0, note-1 twice, and at most what the other worker took meanwhile
    assert recorder.most_in_flight <= 2


def test_one_at_a_time_when_the_limit_is_one(ollama: respx.MockRouter) -> None:
    recorder = Recorder()
    ollama.post("/api/embed").mock(side_effect=recorder.reply)
    embedder = make(ollama, batch_size=3, concurrency=1)
    texts = [f"note-{i}" for i in range(10)]
    try:
        vectors = embedder.embed_documents(texts)
    finally:
        embedder.close()

    assert recorder.most_in_flight == 1
    assert recorder.sent == [texts[0:3], texts[3:6], texts[6:9], texts[9:10]]
    assert vectors == [pytest.approx(unit(vector_of(t))) for t in texts]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        OllamaEmbedder(base_url=BASE_URL, concurrency=0)
