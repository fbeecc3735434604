"""An Ollama look-alike on loopback for tests that run the service in its own process (where respx cannot
reach): `POST /api/embed` answers deterministic bag-of-words vectors (tests.application.fakes), and
`GET /api/tags` lists the model. `hold_after` makes every embed request past that many wait at `gate`, so a
test can catch the service in the middle of indexing."""

from __future__ import annotations

import json
import threading
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tests.application.fakes import FakeEmbedder

MODEL = "fake-embed"


class FakeOllama(AbstractContextManager["FakeOllama"]):
    def __init__(self, *, dimension: int = 32, hold_after: int | None = None) -> None:
        self.hold_after = hold_after
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
        with self._lock:
            turn = self.answered
            self.answered += 1
            self.texts += len(texts)
        if self.hold_after is not None and turn >= self.hold_after:
            self.holding.set()
            self.gate.wait(timeout=300)
        return self._vectors.embed_documents(texts)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: object) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
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
                self._send(200, {"model": MODEL, "embeddings": fake._embed(texts)})

        return Handler
