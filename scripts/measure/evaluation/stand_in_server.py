"""A stand-in embedding server on loopback that returns REAL vectors: a real HTTP server speaking Ollama's
`POST /api/embed` + `GET /api/tags` and the OpenAI-compatible `POST /v1/embeddings` + `GET /v1/models`,
answering with an in-process model (all-MiniLM-L6-v2 or multilingual-e5-small) under whatever name it is
told to serve (`mxbai-embed-large`, `nomic-embed-text`...).

It reads the instructions as a server running that model would receive them: a text opening with the served
name's query instruction (backend/domain/index/embedding_instructions.py) is embedded as a query (the
in-process `embed_query`), the instruction taken off; any other text as a document (`embed_documents`), its
document instruction taken off when it has one. So the service's search quality through it is the in-process
model's when the instructions arrive, and measurably worse when they do not.

It counts requests and texts, keeps the last texts it saw of each kind, can require an API key, can hold
requests with documents (`hold`/`release`: a service caught mid-rebuild), and can be stopped and started
again on the same port (the server going down and coming back).

    python -m scripts.measure.evaluation.stand_in_server --model-name mxbai-embed-large --serve e5 \
        --port 11434

In tests: `with StandInServer(model, model_name="nomic-embed-text") as server: server.env("openai")`.
The faster bag-of-words look-alike of Ollama is tests/fake_ollama.py.
"""

from __future__ import annotations

import argparse
import json
import os
import threading
from collections import deque
from contextlib import AbstractContextManager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from backend.application.ports import Embedder
from backend.domain.index.embedding_instructions import Instructions, base_name, known_instructions

SERVED = {"minilm": "all-MiniLM-L6-v2", "e5": "multilingual-e5-small"}
_KEPT = 1000  # texts of each kind kept for a test to look at


class StandInServer(AbstractContextManager["StandInServer"]):
    def __init__(
        self,
        model: Embedder,
        *,
        model_name: str = "mxbai-embed-large",
        instructions: Instructions | None = None,
        port: int = 0,
        api_key: str | None = None,
    ) -> None:
        """`model` makes the vectors; `model_name` is the name served (others answer "not found");
        `instructions`: those the server recognises (None: the served name's from the table, or none)."""
        self.model = model
        self.model_name = model_name
        self.instructions = instructions or known_instructions(model_name) or Instructions()
        self.api_key = api_key
        self.requests = 0
        self.texts = 0
        self.queries: deque[str] = deque(maxlen=_KEPT)  # texts embedded as queries, as received
        self.documents: deque[str] = deque(maxlen=_KEPT)  # texts embedded as documents, as received
        self._lock = threading.Lock()
        self._held = False
        self._gate = threading.Event()
        self.holding = threading.Event()  # set once a request with documents waits at the gate
        self._port = port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.start()

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def url(self) -> str:
        """Ollama's base URL (OLLAMA_URL)."""
        return f"http://127.0.0.1:{self._port}"

    @property
    def openai_url(self) -> str:
        """The OpenAI-compatible API's root (OPENAI_BASE_URL)."""
        return f"{self.url}/v1"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> None:
        """Listen (again): on the same port as before once it has had one."""
        if self._server is not None:
            return
        server = ThreadingHTTPServer(("127.0.0.1", self._port), self._handler())
        server.daemon_threads = True
        self._port = int(server.server_address[1])
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, name="standin-embedder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop listening: connections are refused until `start`."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def hold(self) -> None:
        """Keep every request with documents in it waiting until `release` (queries still answer): a test
        catches the service in the middle of (re-)embedding the vault."""
        self._gate.clear()
        self._held = True

    def release(self) -> None:
        self._held = False
        self._gate.set()

    def close(self) -> None:
        self.release()
        self.stop()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def env(self, provider: str = "ollama") -> dict[str, str]:
        """The service's settings that point it at this server with `provider` (ollama or openai)."""
        values = {"EMBEDDING_PROVIDER": provider, "EMBEDDING_MODEL": self.model_name}
        values.update(
            {"OLLAMA_URL": self.url} if provider == "ollama" else {"OPENAI_BASE_URL": self.openai_url}
        )
        if self.api_key:
            values["EMBEDDING_API_KEY"] = self.api_key
        return values

    # -- embedding -------------------------------------------------------------------------------

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Vectors in the order of `texts`: queries one at a time, the documents in one call."""
        query, document = self.instructions.query, self.instructions.document
        vectors: list[list[float] | None] = [None] * len(texts)
        documents: list[int] = []
        with self._lock:
            self.requests += 1
            self.texts += len(texts)
        for position, text in enumerate(texts):
            if query and text.startswith(query):
                self.queries.append(text)
                vectors[position] = self.model.embed_query(text[len(query) :])
            else:
                self.documents.append(text)
                documents.append(position)
        if documents and self._held:
            self.holding.set()
            self._gate.wait(timeout=300)
        bare = [_without(texts[i], document) for i in documents]
        for position, vector in zip(documents, self.model.embed_documents(bare) if bare else [], strict=True):
            vectors[position] = vector
        return [vector for vector in vectors if vector is not None]

    def serves(self, name: object) -> bool:
        return isinstance(name, str) and base_name(name) == base_name(self.model_name)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet: tests read their own output
                return

            def do_GET(self) -> None:
                if not self._authorised():
                    return
                if self.path == "/api/tags":
                    name = (
                        stand_in.model_name if ":" in stand_in.model_name else f"{stand_in.model_name}:latest"
                    )
                    self._send(200, {"models": [{"name": name, "model": name}]})
                elif self.path == "/v1/models":
                    self._send(
                        200, {"object": "list", "data": [{"id": stand_in.model_name, "object": "model"}]}
                    )
                else:
                    self._send(404, {"error": f"no route {self.path}"})

            def do_POST(self) -> None:
                if not self._authorised():
                    return
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                texts = body.get("input")
                texts = [texts] if isinstance(texts, str) else texts
                if self.path not in ("/api/embed", "/v1/embeddings"):
                    self._send(404, {"error": f"no route {self.path}"})
                elif not stand_in.serves(body.get("model")):
                    missing = f'model "{body.get("model")}" not found'
                    openai = self.path.startswith("/v1")
                    self._send(404, {"error": {"message": missing}} if openai else {"error": missing})
                elif not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                    self._send(400, {"error": "input must be a string or a list of strings"})
                elif self.path == "/api/embed":
                    self._send(200, {"model": body["model"], "embeddings": stand_in.embed(texts)})
                else:
                    vectors = stand_in.embed(texts)
                    # last first, as the API allows: the client must put them back in `index` order
                    data = [
                        {"object": "embedding", "index": i, "embedding": vector}
                        for i, vector in reversed(list(enumerate(vectors)))
                    ]
                    self._send(200, {"object": "list", "model": body["model"], "data": data})

            def _authorised(self) -> bool:
                if (
                    stand_in.api_key is None
                    or self.headers.get("Authorization") == f"Bearer {stand_in.api_key}"
                ):
                    return True
                self._send(401, {"error": {"message": "invalid API key"}})
                return False

            def _send(self, status: int, payload: object) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _without(text: str, prefix: str) -> str:
    return text[len(prefix) :] if prefix and text.startswith(prefix) else text


def in_process(serve: str) -> Embedder:
    """The in-process model `serve` names (minilm or e5), found as the service finds it (MODEL_CACHE_DIR,
    ONNX_MODEL_DIR)."""
    from backend.data_dirs import model_cache
    from backend.infrastructure.embedders.onnx_minilm import OnnxE5Embedder, OnnxMiniLMEmbedder

    cache_dir = os.environ.get("MODEL_CACHE_DIR")
    prebuilt = os.environ.get("ONNX_MODEL_DIR")
    kind = OnnxE5Embedder if serve == "e5" else OnnxMiniLMEmbedder
    return kind(
        cache_dir=model_cache(Path(cache_dir) if cache_dir else None, Path.cwd() / "data"),
        prebuilt_dir=Path(prebuilt) if prebuilt else None,
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model-name", default="mxbai-embed-large", help="the name served")
    parser.add_argument(
        "--serve", choices=sorted(SERVED), default="e5", help="the in-process model behind it"
    )
    parser.add_argument("--port", type=int, default=11434)
    parser.add_argument("--api-key", default=os.environ.get("EMBEDDING_API_KEY") or None)
    args = parser.parse_args()
    model = in_process(args.serve)
    server = StandInServer(model, model_name=args.model_name, port=args.port, api_key=args.api_key)
    print(
        f"serving {SERVED[args.serve]} as {args.model_name} (instructions {server.instructions}) on "
        f"{server.url} (Ollama) and {server.openai_url} (OpenAI-compatible); Ctrl-C stops",
        flush=True,
    )
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
        model.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
