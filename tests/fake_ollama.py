"""An Ollama look-alike on loopback for tests that run the service in its own process (where respx cannot
reach): `POST /api/embed` answers deterministic bag-of-words vectors (tests.application.fakes), and
`GET /api/tags` lists the model. `hold_after` makes every embed request past that many wait at `gate`, so a
test can catch the service in the middle of indexing.

As a busy or slow server (pacing, issue 45): `seconds_a_text` makes each request take that long a text, as
a model on a CPU does, `parallel` requests at a time (Ollama's OLLAMA_NUM_PARALLEL; the others queue);
`max_queue` refuses a request past that many waiting or working with 503 "server busy" and Retry-After
`retry_after` (Ollama's OLLAMA_MAX_QUEUE); `refuse(n, status, retry_after)` refuses the next n requests."""

from __future__ import annotations

import json
import threading
import time
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.application.fakes import FakeEmbedder

MODEL = "fake-embed"


class FakeOllama(AbstractContextManager["FakeOllama"]):
    def __init__(
        self,
        *,
        dimension: int = 32,
        hold_after: int | None = None,
        seconds_a_text: float = 0.0,
        parallel: int | None = None,
        max_queue: int | None = None,
        retry_after: str | None = "1",
    ) -> None:
        self.hold_after = hold_after
        self.seconds_a_text = seconds_a_text
        self.max_queue = max_queue
        self.retry_after = retry_after
        self._working = threading.BoundedSemaphore(parallel) if parallel else None
        self._refusals: list[tuple[int, str | None]] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.refused: list[float] = []  # when each refusal was sent (time.monotonic)
        self.requests: list[tuple[float, int]] = []  # (when it arrived, texts) of each request answered
        self.gate = threading.Event()
        self.holding = threading.Event()  # set while a request waits at the gate
        self.answered = 0
        self.texts = 0  # texts asked for, over every request
        self._lock = threading.Lock()
        self._vectors = FakeEmbedder(dimension, MODEL)
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-ollama", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def env(self) -> dict[str, str]:
        return {"EMBEDDING_PROVIDER": "ollama", "OLLAMA_URL": self.url, "EMBEDDING_MODEL": MODEL}

    def refuse(self, count: int, status: int = 503, retry_after: str | None = "1") -> None:
        with self._lock:
            self._refusals += [(status, retry_after)] * count

    def _admit(self) -> tuple[int, str | None] | None:
        """A refusal for this request (status, Retry-After), or None when it is taken."""
        with self._lock:
            if self._refusals:
                refusal = self._refusals.pop(0)
            elif self.max_queue is not None and self.in_flight >= self.max_queue:
                refusal = (503, self.retry_after)
            else:
                self.in_flight += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
                return None
            self.refused.append(time.monotonic())
            return refusal

    def release(self) -> None:
        self.hold_after = None
        self.gate.set()

    def close(self) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _embed(self, texts: list[str]) -> list[list[float]]:
        arrived = time.monotonic()
        try:
            with self._lock:
                turn = self.answered
                self.answered += 1
                self.texts += len(texts)
                self.requests.append((arrived, len(texts)))
            if self.hold_after is not None and turn >= self.hold_after:
                self.holding.set()
                self.gate.wait(timeout=300)
            if self.seconds_a_text:
                if self._working is not None:
                    self._working.acquire()
                try:  # the model's time: what the server is for, so a test has nothing to await instead
                    time.sleep(self.seconds_a_text * len(texts))
                finally:
                    if self._working is not None:
                        self._working.release()
            return self._vectors.embed_documents(texts)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: object, retry_after: str | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                if retry_after is not None:
                    self.send_header("Retry-After", retry_after)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:
                    pass  # the client was killed while we held it

            def do_GET(self) -> None:  # noqa: N802 - the http.server API
                if self.path == "/api/tags":
                    self._send(200, {"models": [{"name": f"{MODEL}:latest", "model": f"{MODEL}:latest"}]})
                else:
                    self._send(404, {"error": "not found"})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                if self.path != "/api/embed" or body.get("model") != MODEL:
                    self._send(404, {"error": f'model "{body.get("model")}" not found, try pulling it first'})
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                refusal = fake._admit()
                if refusal is not None:
                    error = "server busy, please try again.  maximum pending requests exceeded"
                    self._send(refusal[0], {"error": error}, retry_after=refusal[1])
                    return
                self._send(200, {"model": MODEL, "embeddings": fake._embed(texts)})

        return Handler
