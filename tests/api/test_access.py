"""Who may call the service: with API_KEY set, every route of the app — walked from the app itself, so a route
added tomorrow is walked too — plus /mcp, the docs and the schema and unknown paths, refuses every wrong way
of presenting the key with the 401 envelope; /health stays open, and so do GETs of the look-inside page and
its files, which hold no data (tests/api/test_page.py)."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient

from backend.api import guards
from backend.config import SettingsError, load_settings
from backend.domain.errors import UnauthorizedError
from tests.api.conftest import AppFactory

KEY = "kb-Access-Key-0123456789"
ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}
EXTRA_PATHS = ["/mcp", "/docs", "/redoc", "/openapi.json", "/docs/oauth2-redirect", "/no/such/route"]

# Every wrong way to present the key: (name, headers, query string)
WRONG = [
    ("no header", {}, ""),
    ("wrong key", {"Authorization": "Bearer not-the-key"}, ""),
    ("last character differs", {"Authorization": f"Bearer {KEY[:-1]}X"}, ""),
    ("one character short", {"Authorization": f"Bearer {KEY[:-1]}"}, ""),
    ("one character long", {"Authorization": f"Bearer {KEY}0"}, ""),
    ("lowercase bearer, wrong key", {"Authorization": "bearer not-the-key"}, ""),
    ("empty key", {"Authorization": "Bearer "}, ""),
    ("scheme only", {"Authorization": "Bearer"}, ""),
    ("key without scheme", {"Authorization": KEY}, ""),
    ("basic scheme", {"Authorization": "Basic " + base64.b64encode(f"x:{KEY}".encode()).decode()}, ""),
    ("X-API-Key header", {"X-API-Key": KEY}, ""),  # dropped: Bearer is the one way in
    ("key in the query string", {}, f"api_key={KEY}&key={KEY}&token={KEY}"),
    ("key as a cookie", {"Cookie": f"api_key={KEY}"}, ""),
]
RIGHT = [
    {"Authorization": f"Bearer {KEY}"},
    {"Authorization": f"bearer {KEY}"},  # the scheme is case-insensitive (RFC 9110 11.1); the key is not
    {"Authorization": f"BEARER   {KEY}  "},
]


@pytest.fixture
def client(make_client: AppFactory) -> TestClient:
    return make_client(api_key=KEY)


def every_route(client: TestClient) -> list[tuple[str, str]]:
    """(method, concrete path) of every route the app serves, every OpenAPI operation, and EXTRA_PATHS."""
    found: set[tuple[str, str]] = set()
    for route in iter_route_contexts(client.app.routes):  # type: ignore[attr-defined]
        assert route.path, route
        methods = route.methods or {"GET", "POST", "DELETE"}  # /mcp takes any method
        for method in methods:
            found.add((method, re.sub(r"\{[^}]+\}", "Home.md", route.path)))
    schema = client.get("/openapi.json", headers=RIGHT[0]).json()
    for path, operations in schema["paths"].items():
        for method in operations:
            found.add((method.upper(), re.sub(r"\{[^}]+\}", "Home.md", path)))
    for path in EXTRA_PATHS:
        found |= {("GET", path), ("POST", path)}
    return sorted(found)


def test_every_route_refuses_every_wrong_key(client: TestClient) -> None:
    routes = every_route(client)
    walked = {path for _, path in routes}
    assert {"/search", "/context", "/note/Home.md", "/notes", "/memory", "/index/rebuild", "/mcp"} <= walked
    assert {"/docs", "/redoc", "/openapi.json"} <= walked
    refused = 0
    for method, path in routes:
        if path == "/health" or guards.is_page({"method": method, "path": path}):
            continue
        for name, headers, query in WRONG:
            url = f"{path}?{query}" if query else path
            response = client.request(method, url, headers=headers, json={"query": "milk"})
            assert response.status_code == 401, (method, path, name, response.status_code)
            assert response.headers["www-authenticate"] == "Bearer"
            if method != "HEAD":  # a HEAD answer has no body
                assert set(response.json()) == ERROR_KEYS, (method, path, name)
                assert response.json()["error_code"] == "UNAUTHORIZED"
            refused += 1
    assert refused >= len(WRONG) * 20  # every route, every wrong key: nothing skipped by accident


def test_the_right_key_passes_the_gate_everywhere(client: TestClient) -> None:
    for method, path in every_route(client):
        if path in ("/index/rebuild", "/index/sync"):
            continue  # would start jobs; passing the gate is shown on the other routes
        for headers in RIGHT:
            response = client.request(method, path, headers=headers)
            assert response.status_code != 401, (method, path, headers, response.text)
    docs = client.get("/docs", headers=RIGHT[0])
    assert docs.status_code == 200
    assert "swagger" in docs.text.lower()


def test_health_stays_open_and_says_nothing_more(client: TestClient) -> None:
    for name, headers, _ in WRONG:
        response = client.get("/health", headers=headers)
        assert response.status_code == 200, name
        answer = response.json()
        assert set(answer) == {"status", "version", "instance"}
        assert re.fullmatch(r"[0-9a-f]{16}", answer["instance"])  # a random name of this run, nothing else


def test_the_schema_declares_the_bearer_key_when_one_is_set(make_client: AppFactory, tmp_path: Path) -> None:
    schema = make_client(api_key=KEY).get("/openapi.json", headers=RIGHT[0]).json()
    assert schema["components"]["securitySchemes"][guards.BEARER_SCHEME] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The service's API_KEY.",
    }
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            expected = [] if path == "/health" else [{guards.BEARER_SCHEME: []}]
            assert operation["security"] == expected, (method, path)
    open_schema = make_client(data_dir=tmp_path / "open").get("/openapi.json").json()
    assert "securitySchemes" not in open_schema.get("components", {})
    assert all("security" not in op for ops in open_schema["paths"].values() for op in ops.values())


def test_without_a_key_nothing_asks_for_one(make_client: AppFactory) -> None:
    client = make_client()
    assert client.get("/notes").status_code == 200
    assert client.get("/openapi.json").status_code == 200


def test_keys_are_compared_in_constant_time_whatever_their_length(monkeypatch: pytest.MonkeyPatch) -> None:
    compared: list[tuple[int, int]] = []
    real = guards.hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((len(a), len(b)))
        return real(a, b)

    monkeypatch.setattr(guards.hmac, "compare_digest", spy)
    for supplied in ("x", KEY[:-1], KEY * 10):
        with pytest.raises(UnauthorizedError):
            guards.check_api_key(f"Bearer {supplied}", KEY)
    guards.check_api_key(f"Bearer {KEY}", KEY)
    assert compared == [(32, 32)] * 4  # digests of one length: no early exit on a length mismatch


@pytest.mark.parametrize(
    ("name", "value"),
    [("API_KEY", "has a space"), ("API_KEY", "clé-accentuée"), ("API_KEY", "tab\tinside")],
)
def test_a_key_that_no_header_can_carry_is_refused_at_start(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        load_settings(**{name.lower(): value})


def test_a_blank_key_means_no_key() -> None:
    assert load_settings(api_key="  ").api_key is None
