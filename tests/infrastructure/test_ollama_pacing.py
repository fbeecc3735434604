"""The Ollama embedder paced by what a real local server answers (tests/fake_ollama.py): refusals with
Retry-After, a server queue that is full, answers slower than the timeout, and a search's query while
indexing is told to wait."""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from backend.infrastructure.embedders.ollama import OllamaEmbedder
from backend.infrastructure.embedders.pacing import Pacer, retry_seconds
from tests.application.fakes import FakeEmbedder
from tests.fake_ollama import MODEL, FakeOllama

TEXTS = [f"note {i} about topic {i % 7}" for i in range(40)]


def _expected(texts: list[str]) -> list[list[float]]:
    return [pytest.approx(v, abs=1e-6) for v in FakeEmbedder(32, MODEL).embed_documents(texts)]


def _embedder(server: FakeOllama, **options: object) -> OllamaEmbedder:
    settings: dict = {"batch_size": 8, "concurrency": 2, "backoff_seconds": 0.0, "max_retries": 3} | options
    return OllamaEmbedder(base_url=server.url, model=MODEL, dimension=32, **settings)


def test_a_busy_answer_with_retry_after_is_waited_out_and_the_call_still_succeeds() -> None:
    with FakeOllama() as server:
        server.refuse(1, status=503, retry_after="1")
        embedder = _embedder(server, concurrency=1)
        vectors = embedder.embed_documents(TEXTS[:8])
        embedder.close()
        assert vectors == _expected(TEXTS[:8])
        refused_at, (answered_at, _) = server.refused[0], server.requests[0]
        assert answered_at - refused_at >= 0.95  # asked to wait a second: it did, not only its own backoff


def test_too_many_requests_is_retried_not_reported_as_a_rejected_request() -> None:
    with FakeOllama() as server:
        server.refuse(2, status=429, retry_after=None)
        embedder = _embedder(server, concurrency=1)
        assert embedder.embed_documents(TEXTS[:8]) == _expected(TEXTS[:8])
        embedder.close()


def test_a_full_server_queue_lowers_the_requests_in_flight_instead_of_failing_batches() -> None:
    """Ollama refuses past OLLAMA_MAX_QUEUE: the embedder at 4 requests in flight against a server taking
    one at a time learns to send one, every vector arrives, and refusals stop after the first few."""
    with FakeOllama(seconds_a_text=0.005, parallel=1, max_queue=1, retry_after="0.2") as server:
        embedder = _embedder(server, concurrency=4, batch_size=4)
        assert embedder.embed_documents(TEXTS) == _expected(TEXTS)
        first_refusals = len(server.refused)
        assert embedder.embed_documents([f"more {t}" for t in TEXTS]) == _expected(
            [f"more {t}" for t in TEXTS]
        )
        embedder.close()
        assert 1 <= first_refusals <= 4
        assert len(server.refused) == first_refusals  # paced: the second call was never refused


def test_never_more_requests_in_flight_than_configured() -> None:
    with FakeOllama(seconds_a_text=0.01) as server:
        embedder = _embedder(server, concurrency=2, batch_size=2)
        embedder.embed_documents(TEXTS)
        callers = [
            threading.Thread(target=embedder.embed_documents, args=([f"{n} {t}" for t in TEXTS],))
            for n in range(3)
        ]  # the indexer and the watcher at once share the same limit
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join()
        embedder.close()
        assert server.peak_in_flight <= 2


def test_a_batch_that_times_out_is_sent_again_in_smaller_requests() -> None:
    """A slow model (0.1 s a text) and a 1 s timeout: 16 texts a request never answer in time; the
    embedder halves the request until it does, and keeps the smaller size for the next call."""
    with FakeOllama(seconds_a_text=0.1) as server:
        embedder = _embedder(server, batch_size=16, concurrency=1, timeout=httpx.Timeout(1.0, connect=1.0))
        assert embedder.embed_documents(TEXTS[:16]) == _expected(TEXTS[:16])
        later = len(server.requests)
        assert embedder.embed_documents(TEXTS[16:32]) == _expected(TEXTS[16:32])
        embedder.close()
        sizes = [texts for _, texts in server.requests]
        assert sizes[0] == 16
        assert max(sizes[1:]) <= 8
        assert all(size * 0.1 < 1.0 for size in sizes[later:])  # the next call: no request timed out


def test_a_query_does_not_wait_behind_the_indexings_pause() -> None:
    """The server asked the indexing to wait 5 s: a search's query still answers at once."""
    with FakeOllama() as server:
        server.refuse(1, status=503, retry_after="5")
        embedder = _embedder(server, concurrency=1)
        indexing = threading.Thread(target=embedder.embed_documents, args=(TEXTS[:8],))
        indexing.start()
        deadline = time.monotonic() + 5
        while not server.refused and time.monotonic() < deadline:
            time.sleep(0.01)  # polling the server's record: the refusal has no event of its own to await
        started = time.monotonic()
        vector = embedder.embed_query("what about topic 3")
        assert time.monotonic() - started < 1.0
        assert indexing.is_alive()  # still waiting out the 5 s
        indexing.join()
        embedder.close()
        assert vector == pytest.approx(FakeEmbedder(32, MODEL).embed_query("what about topic 3"), abs=1e-6)


def test_quick_answers_grow_the_batch_and_the_requests_back_to_what_is_configured() -> None:
    pacer = Pacer(max_in_flight=4, max_batch=64, timeout_seconds=100.0)
    pacer.record(seconds=100.0, timed_out=True)
    pacer.record(seconds=1.0, status=503, retry_after="0")
    assert (pacer.state().in_flight_allowed, pacer.batch_size()) == (1, 32)
    for _ in range(3):
        pacer.record(seconds=1.0, status=200)
    # the batch is back; two in flight were refused, so one it stays until PROBE_AFTER answers came back well
    assert (pacer.state().in_flight_allowed, pacer.batch_size()) == (1, 64)
    for _ in range(40):
        pacer.record(seconds=1.0, status=200)
    assert pacer.state().in_flight_allowed == 4
    pacer.record(seconds=60.0, status=200)  # slow, not yet timed out: smaller before it does
    assert pacer.batch_size() == 32


@pytest.mark.parametrize(
    ("header", "seconds"),
    [("3", 3.0), ("0.5", 0.5), (None, None), ("soon", None), ("-4", 0.0), ("100000", 300.0)],
)
def test_retry_after_is_read_as_seconds_capped(header: str | None, seconds: float | None) -> None:
    assert retry_seconds(header) == seconds
