"""DNS rebinding and cross-site requests without API_KEY, over a real socket with raw header lines.

A page on `evil.example` that rebinds its name to 127.0.0.1 reaches the service with `Host: evil.example`;
a page on any site can POST to 127.0.0.1 without a preflight (`Origin: http://evil.example`). Both are refused
with 403 FOREIGN_REQUEST, whatever the route; loopback names, ALLOWED_HOSTS and CORS_ORIGINS pass, and with
API_KEY a keyed client calling the service by another name (a container on a Compose network) is served.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from tests.live_server import indexed, serving, wait_until

NOTE = "/note/Finance/Money%20with%20Sreenivas.md"


@contextmanager
def service(data: Path, **settings: object) -> Iterator[str]:
    values: dict[str, object] = {
        "vault_path": EXAMPLE_VAULT,
        "data_dir": data,
        "embedding_provider": "none",
        "watch": False,
        "allowed_hosts": [],  # not the suite's `testserver` (tests/conftest.py)
    }
    app = create_app(load_settings(**(values | settings)))
    with serving(app) as base:
        wait_until(lambda: indexed(base, {"Authorization": "Bearer k"}), "the first indexing")
        yield base


@pytest.fixture(scope="module")
def open_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """No API_KEY; a LAN name and a browser app allowed besides the loopback names."""
    data = tmp_path_factory.mktemp("open") / "data"
    with service(
        data, allowed_hosts=["kb.lan", "NAS.local"], cors_origins=["http://app.example:3000"]
    ) as base:
        yield base


@pytest.fixture(scope="module")
def keyed_service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with service(tmp_path_factory.mktemp("keyed") / "data", api_key="k") as base:
        yield base


def raw(base: str, method: str, path: str, headers: dict[str, str], body: bytes = b"") -> tuple[int, dict]:
    """Send exactly these header lines (Host included) and return the status and the JSON body."""
    url = urlsplit(base)
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers.items())]
    lines += [f"Content-Length: {len(body)}", "Connection: close", "", ""]
    with socket.create_connection((url.hostname, url.port), timeout=30) as sock:
        sock.sendall("\r\n".join(lines).encode() + body)
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, payload = data.partition(b"\r\n\r\n")
    status = int(head.split()[1])
    try:
        return status, json.loads(payload) if payload else {}
    except json.JSONDecodeError:
        return status, {"raw": payload.decode(errors="replace")}


def assert_refused(status: int, body: dict) -> None:
    assert status == 403, body
    assert body["error_code"] == "FOREIGN_REQUEST"
    assert set(body) == {"error_code", "detail", "recoverable", "suggestion"}
    assert body["recoverable"] is False


SEARCH = json.dumps({"query": "Sreenivas"}).encode()
JSON = {"Content-Type": "application/json"}


def test_a_foreign_host_name_is_refused_on_every_route(open_service: str) -> None:
    base = open_service
    port = urlsplit(base).port
    evil = {"Host": f"evil.example:{port}"}
    for method, path, body in [
        ("GET", NOTE, b""),
        ("GET", "/notes", b""),
        ("GET", "/openapi.json", b""),
        ("GET", "/index/status", b""),
        ("POST", "/search", SEARCH),
        ("POST", "/index/rebuild", b""),
        ("POST", "/mcp", b"{}"),
        ("GET", "/no/such/route", b""),
    ]:
        assert_refused(*raw(base, method, path, evil | JSON, body))
    assert raw(base, "GET", "/health", evil)[0] == 200  # a liveness probe by any name

    for host in ("localhost", "127.0.0.1", "[::1]", "LOCALHOST.", "app.localhost", "127.0.0.2"):
        status, body = raw(base, "GET", NOTE, {"Host": f"{host}:{port}"})
        assert status == 200, (host, body)
        assert "Sreenivas" in body["content"]


def test_a_foreign_page_cannot_post_or_read(open_service: str) -> None:
    base = open_service
    host = {"Host": f"127.0.0.1:{urlsplit(base).port}"}
    # a form-like POST without a body, as a page sends it without any preflight
    assert_refused(*raw(base, "POST", "/index/rebuild", host | {"Origin": "http://evil.example"}))
    assert_refused(*raw(base, "POST", "/search", host | JSON | {"Origin": "null"}, SEARCH))
    assert_refused(*raw(base, "GET", "/notes", host | {"Origin": "https://evil.example:8443"}))
    # the service's own pages (API docs on a loopback name) and clients without Origin are served
    own = {"Origin": f"http://localhost:{urlsplit(base).port}"}
    assert raw(base, "POST", "/search", host | JSON | own, SEARCH)[0] == 200
    assert raw(base, "POST", "/search", host | JSON, SEARCH)[0] == 200


def test_allowed_hosts_and_cors_origins_are_let_in(open_service: str) -> None:
    base = open_service
    port = urlsplit(base).port
    for headers in (
        {"Host": f"kb.lan:{port}"},
        {"Host": "nas.local"},
        {"Host": f"kb.lan:{port}", "Origin": f"http://kb.lan:{port}"},
        {"Host": f"localhost:{port}", "Origin": "http://app.example:3000"},
    ):
        assert raw(base, "POST", "/search", headers | JSON, SEARCH)[0] == 200, headers
    assert_refused(*raw(base, "POST", "/search", {"Host": "kb.lan.evil.example"} | JSON, SEARCH))
    assert_refused(*raw(base, "POST", "/search", {"Host": "kb.lan", "Origin": "http://app.example"}, SEARCH))


@pytest.mark.parametrize("host", ["backend:8000", "evil.example"])
def test_with_an_api_key_the_key_decides(keyed_service: str, host: str) -> None:
    base = keyed_service
    keyed = {"Host": host, "Authorization": "Bearer k"}
    status, body = raw(base, "GET", NOTE, keyed)
    assert status == 200
    assert "Sreenivas" in body["content"]
    assert raw(base, "POST", "/search", keyed | JSON | {"Origin": "http://agent"}, SEARCH)[0] == 200
    assert raw(base, "GET", NOTE, {"Host": host})[0] == 401
