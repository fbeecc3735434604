"""Which browser pages may read the answers: without CORS_ORIGINS no CORS header is ever sent (a page on
another origin cannot read anything); with it, only the listed origins get them, preflights included, and a
page that is allowed can read a 401 too."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.config import SettingsError, load_settings
from tests.api.conftest import AppFactory

APP = "http://localhost:3000"
EVIL = "http://evil.example"
KEY = "cors-key"


def preflight(client: TestClient, origin: str, headers: str = "authorization, content-type") -> object:
    return client.options(
        "/search",
        headers={
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": headers,
        },
    )


def cors_headers(response: object) -> dict[str, str]:
    return {k: v for k, v in response.headers.items() if k.lower().startswith("access-control-")}  # type: ignore[attr-defined]


def test_without_cors_origins_no_cors_header_is_ever_sent(make_client: AppFactory) -> None:
    client = make_client()
    for origin in (APP, EVIL, "null"):
        answer = client.get("/notes", headers={"Origin": origin})
        # a page on a loopback origin is served, one elsewhere refused (guards.py: no API_KEY, no rebinding)
        assert answer.status_code == (200 if origin == APP else 403)
        assert cors_headers(answer) == {}
        refused = preflight(client, origin)
        assert refused.status_code == (405 if origin == APP else 403)  # the app's own answer, an envelope
        assert refused.json()["error_code"] in ("METHOD_NOT_ALLOWED", "FOREIGN_REQUEST")
        assert cors_headers(refused) == {}


def test_only_the_configured_origins_are_allowed(make_client: AppFactory) -> None:
    client = make_client(cors_origins=[APP])
    allowed = preflight(client, APP)
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == APP
    assert "POST" in allowed.headers["access-control-allow-methods"]
    assert "authorization" in allowed.headers["access-control-allow-headers"].lower()
    assert "access-control-allow-credentials" not in allowed.headers  # bearer keys, never cookies
    simple = client.post("/search", json={"query": "milk"}, headers={"Origin": APP})
    assert simple.headers["access-control-allow-origin"] == APP
    assert "Server-Timing" in simple.headers["access-control-expose-headers"]

    for origin in (EVIL, "http://localhost:3001", "https://localhost:3000", "null"):
        assert cors_headers(preflight(client, origin)) == {}, origin
        assert cors_headers(client.get("/notes", headers={"Origin": origin})) == {}, origin


def test_a_preflight_asking_for_more_than_allowed_gets_no_cors_answer(make_client: AppFactory) -> None:
    client = make_client(cors_origins=[APP])
    asks_a_header = preflight(client, APP, headers="x-custom-header")
    assert cors_headers(asks_a_header) == {}
    assert asks_a_header.json()["error_code"] == "METHOD_NOT_ALLOWED"
    put = client.options("/search", headers={"Origin": APP, "Access-Control-Request-Method": "PUT"})
    assert cors_headers(put) == {}


def test_with_a_key_the_preflight_passes_and_the_page_can_read_a_401(make_client: AppFactory) -> None:
    client = make_client(cors_origins=[APP], api_key=KEY)
    assert preflight(client, APP).status_code == 200  # a browser never sends the key on a preflight
    denied = client.post("/search", json={"query": "milk"}, headers={"Origin": APP})
    assert denied.status_code == 401
    assert denied.headers["access-control-allow-origin"] == APP
    assert "WWW-Authenticate" in denied.headers["access-control-expose-headers"]
    served = client.post(
        "/search", json={"query": "milk"}, headers={"Origin": APP, "Authorization": f"Bearer {KEY}"}
    )
    assert served.status_code != 401
    assert served.headers["access-control-allow-origin"] == APP
    assert cors_headers(preflight(client, EVIL)) == {}
    assert preflight(client, EVIL).status_code == 401  # not allowed: the preflight is just a request


def test_a_star_allows_any_origin(make_client: AppFactory) -> None:
    client = make_client(cors_origins=["*"])
    assert preflight(client, EVIL).headers["access-control-allow-origin"] == "*"


def test_origins_come_from_a_comma_separated_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CORS_ORIGINS", f"{APP}, https://notes.example.org:8443")
    assert load_settings().cors_origins == [APP, "https://notes.example.org:8443"]
    monkeypatch.setenv("CORS_ORIGINS", "")
    assert load_settings().cors_origins == []


@pytest.mark.parametrize("origin", [f"{APP}/", "localhost:3000", "http://localhost:3000/app", "ftp://x"])
def test_an_origin_no_browser_would_send_is_refused_at_start(
    monkeypatch: pytest.MonkeyPatch, origin: str
) -> None:
    monkeypatch.setenv("CORS_ORIGINS", origin)
    with pytest.raises(SettingsError, match="CORS_ORIGINS"):
        load_settings()
