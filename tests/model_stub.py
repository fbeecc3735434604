"""A model provider on loopback for agent turns without a real model: an OpenAI-compatible
`/v1/chat/completions` (streamed or not) that records each request and answers one fixed reply."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

REPLY = "Stub reply."
MODEL = "echo"


class ModelStub:
    def __init__(self, server: ThreadingHTTPServer) -> None:
        self.server = server
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    @property
    def base_url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def provider(self) -> dict[str, Any]:
        """Its `models.providers.<id>` entry in openclaw.json."""
        return {
            "baseUrl": self.base_url,
            "api": "openai-completions",
            "apiKey": "not-a-real-key",
            "models": [
                {
                    "id": MODEL,
                    "name": "Stub",
                    "reasoning": False,
                    "input": ["text"],
                    "contextWindow": 128000,
                    "maxTokens": 4096,
                }
            ],
        }

    def configure(self, settings: dict[str, Any]) -> None:
        """Into openclaw.json's `settings`: the stub as a provider, its model every agent's default."""
        settings["models"] = {"providers": {"stub": self.provider()}}
        settings["agents"] = {"defaults": {"model": {"primary": f"stub/{MODEL}"}}}

    def record(self, body: dict[str, Any]) -> None:
        with self.lock:
            self.requests.append(body)

    def asked(self, text: str) -> dict[str, Any]:
        """The last request whose latest user message holds `text`."""
        with self.lock:
            for body in reversed(self.requests):
                if text in last_user_text(body):
                    return body
        raise AssertionError(f"no model request asked {text!r}")


def message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the turn's own user message (OpenClaw adds its internal-context message after it)."""
    users = [message_text(m) for m in body.get("messages", []) if m.get("role") == "user"]
    own = [text for text in users if "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>" not in text]
    return own[-1] if own else ""


def system_text(body: dict[str, Any]) -> str:
    return "\n".join(
        message_text(m) for m in body.get("messages", []) if m.get("role") in ("system", "developer")
    )


def tool_names(body: dict[str, Any]) -> set[str]:
    return {tool["function"]["name"] for tool in body.get("tools", []) if "function" in tool}


def _chunk(delta: dict[str, Any], finish: str | None) -> bytes:
    chunk = {
        "id": "stub-1",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if finish:
        chunk["usage"] = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    return f"data: {json.dumps(chunk)}\n\n".encode()


def _handler(stub: ModelStub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            return

        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self._json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            stub.record(body)
            if not body.get("stream"):
                message = {"role": "assistant", "content": REPLY}
                self._json(
                    {
                        "id": "stub-1",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": MODEL,
                        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
                    }
                )
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.write(_chunk({"role": "assistant", "content": REPLY}, None))
            self.wfile.write(_chunk({}, "stop"))
            self.wfile.write(b"data: [DONE]\n\n")

        def _json(self, answer: dict[str, Any]) -> None:
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    return Handler


@contextmanager
def serving() -> Iterator[ModelStub]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), BaseHTTPRequestHandler)
    stub = ModelStub(server)
    server.RequestHandlerClass = _handler(stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def model() -> Iterator[ModelStub]:
    """The stub, for the agent turns of a test module (a fixture of every test: tests/conftest.py)."""
    with serving() as stub:
        yield stub
