"""How much a request may carry: bodies over MAX_REQUEST_BYTES (declared, or streamed in chunks) answer 413
REQUEST_TOO_LARGE before any route runs, URLs over MAX_URL_BYTES answer 414 URL_TOO_LONG, always in the error
envelope; through the TestClient and over a real socket to uvicorn, where a huge upload is cut short."""

from __future__ import annotations

import json
import select
import socket
from collections.abc import Iterable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from tests import live_server
from tests.api.conftest import AppFactory, wait_for_job

ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}
MIB = 1024 * 1024
FACT = {"key": "k", "value": "v", "source": "Home.md"}


def refused(response: object, status: int, code: str) -> None:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert set(body) == ERROR_KEYS
    assert body["error_code"] == code
    assert body["recoverable"] is True


@pytest.fixture
def small(make_client: AppFactory) -> TestClient:
    client = make_client(max_request_bytes=4096)
    wait_for_job(client)
    return client


def test_a_declared_body_over_the_limit_is_refused_and_nothing_happens(small: TestClient) -> None:
    response = small.post("/memory", json={**FACT, "value": "x" * 5000})
    refused(response, 413, "REQUEST_TOO_LARGE")
    assert "4096" in response.json()["detail"]
    assert small.get("/memory").json()["total"] == 0  # the route never ran
    assert small.post("/memory", json=FACT).status_code == 201


def test_a_streamed_body_is_counted_as_it_arrives(small: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": "milk", "pad": "'
        for _ in range(10):
            yield b"x" * 1024
        yield b'"}'

    response = small.post("/search", content=chunks(), headers={"content-type": "application/json"})
    refused(response, 413, "REQUEST_TOO_LARGE")


def test_a_streamed_body_within_the_limit_reaches_the_route_whole(small: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"query": '
        yield b'"milk", "top_k": 2'
        yield b"}"

    response = small.post("/search", content=chunks(), headers={"content-type": "application/json"})
    assert response.status_code == 200, response.text
    assert response.json()["query"] == "milk"


def test_the_default_limit_is_one_mebibyte_to_the_byte(make_client: AppFactory) -> None:
    client = make_client()
    wait_for_job(client)
    head, tail = b'{"query": "milk"', b"}"
    exactly = head + b" " * (MIB - len(head) - len(tail)) + tail  # JSON whitespace: a valid 1 MiB body
    headers = {"content-type": "application/json"}
    assert len(exactly) == load_settings().max_request_bytes == MIB
    assert client.post("/search", content=exactly, headers=headers).status_code == 200
    refused(client.post("/search", content=exactly + b" ", headers=headers), 413, "REQUEST_TOO_LARGE")


def test_urls_over_the_limit_are_414(make_client: AppFactory) -> None:
    client = make_client(max_url_bytes=2048)
    refused(client.get("/notes", params={"folder": "a" * 2100}), 414, "URL_TOO_LONG")
    refused(client.get("/note/" + "a" * 2100 + ".md"), 414, "URL_TOO_LONG")
    refused(client.get("/health", params={"x": "a" * 2100}), 414, "URL_TOO_LONG")
    # under the URL limit, the path check has its own, shorter one
    assert client.get("/note/" + "a" * 1100 + ".md").json()["error_code"] == "SECURITY_VIOLATION"


def test_the_key_is_checked_before_the_size(make_client: AppFactory) -> None:
    client = make_client(api_key="k3y", max_request_bytes=4096)
    denied = client.post("/memory", json={**FACT, "value": "x" * 5000})
    assert denied.status_code == 401  # an unknown caller learns nothing, not even the limit
    allowed = client.post(
        "/memory", json={**FACT, "value": "x" * 5000}, headers={"Authorization": "Bearer k3y"}
    )
    assert allowed.status_code == 413


# -- over a real socket ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    settings = load_settings(
        vault_path=EXAMPLE_VAULT,
        data_dir=tmp_path_factory.mktemp("limits") / "data",
        embedding_provider="none",
        watch=False,
        max_url_bytes=8192,  # a request line over it still fits uvicorn's 16 KiB for line and headers
    )
    with live_server.serving(create_app(settings)) as base:
        url = urlsplit(base)
        yield url.hostname or "127.0.0.1", url.port or 80


def exchange(address: tuple[str, int], head: bytes, body_chunks: Iterable[bytes] = ()) -> tuple[int, int]:
    """Send `head` then the chunks until the server answers; (status, body bytes sent before it did)."""
    with socket.create_connection(address, timeout=30) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)  # little hidden in our own buffer
        sock.sendall(head)
        sent = 0
        for chunk in body_chunks:
            if select.select([sock], [], [], 0)[0]:
                break  # the answer is there: stop uploading
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                break  # the server answered and stopped reading
            sent += len(chunk)
        answer = b""
        while b"\r\n\r\n" not in answer:
            data = sock.recv(65536)
            if not data:
                break
            answer += data
    status = int(answer.split(b" ", 2)[1])
    return status, sent


def test_a_huge_declared_upload_is_refused_before_a_byte_of_it_is_sent(server: tuple[str, int]) -> None:
    head = (
        b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"content-length: 104857600\r\n\r\n"
    )
    status, _ = exchange(server, head)  # the server answers although the 100 MB never come
    assert status == 413


def test_a_chunked_upload_is_cut_short_once_it_passes_the_limit(server: tuple[str, int]) -> None:
    head = (
        b"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"transfer-encoding: chunked\r\n\r\n"
    )
    piece = b"x" * 16384

    def chunks() -> Iterator[bytes]:
        for _ in range(128 * MIB // len(piece)):  # 128 MiB on offer
            yield b"%x\r\n%s\r\n" % (len(piece), piece)

    status, sent = exchange(server, head, chunks())
    assert status == 413
    # answered just past the 1 MiB limit (~1.2 MB sent, measured); the margin is the server's receive
    # buffer, which Linux may grow to 32 MiB
    assert sent < 64 * MIB


def test_a_long_request_line_over_the_socket_is_414_in_the_envelope(server: tuple[str, int]) -> None:
    line = b"GET /notes?folder=" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    with socket.create_connection(server, timeout=30) as sock:
        sock.sendall(line)
        answer = b""
        while data := sock.recv(65536):
            answer += data
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.split(b" ", 2)[1] == b"414"
    assert json.loads(body)["error_code"] == "URL_TOO_LONG"


def test_settings_bound_the_limits(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="MAX_REQUEST_BYTES"):
        load_settings(max_request_bytes=10)
    with pytest.raises(Exception, match="MAX_URL_BYTES"):
        load_settings(max_url_bytes=10)
