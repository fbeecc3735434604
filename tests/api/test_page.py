"""The look-inside page over HTTP: GET / and its files load without the API key (they hold no data) under a
strict Content-Security-Policy, while everything with data still needs the key; without a key the Host and
Origin rule guards the page as it guards the API."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.api.routes.page import CONTENT_SECURITY_POLICY, page_files
from tests.api.conftest import AppFactory

KEY = "kb-Page-Key-0123456789"
STRICT_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


@pytest.fixture
def keyed(make_client: AppFactory) -> TestClient:
    return make_client(api_key=KEY)


def _assets(client: TestClient) -> list[str]:
    html = client.get("/").text
    return [f"/page/{name}" for name in page_files() if name != "index.html" and f"/page/{name}" in html] + [
        f"/page/{name}" for name in page_files() if name.endswith(".js") and name != "main.js"
    ]


def test_the_page_and_its_files_load_without_the_key_under_a_strict_csp(keyed: TestClient) -> None:
    assert CONTENT_SECURITY_POLICY == STRICT_CSP  # the policy, word for word
    page = keyed.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert KEY not in page.text
    for url in ["/", *_assets(keyed)]:
        answer = keyed.get(url)
        assert answer.status_code == 200, url
        assert answer.headers["content-security-policy"] == STRICT_CSP, url
        assert answer.headers["x-content-type-options"] == "nosniff", url
        assert answer.headers["x-frame-options"] == "DENY", url
    assert keyed.get("/page/main.js").headers["content-type"].startswith("text/javascript")
    assert keyed.get("/page/style.css").headers["content-type"].startswith("text/css")


def test_the_data_behind_the_page_still_needs_the_key(keyed: TestClient) -> None:
    assert keyed.get("/index/status").status_code == 401
    assert keyed.post("/search", json={"query": "Sreenivas"}).status_code == 401
    assert keyed.post("/", json={}).status_code == 401  # only a GET of the page is open
    assert keyed.get("/page/sub/main.js").status_code == 401  # one file name after /page/, nothing deeper
    answer = keyed.get("/index/status", headers={"Authorization": f"Bearer {KEY}"})
    assert answer.status_code == 200


def test_only_the_pages_own_files_are_served(keyed: TestClient) -> None:
    for name in ("nope.js", "%2E%2E", "page.py", "..%5Cpage.py"):
        answer = keyed.get(f"/page/{name}")
        assert answer.status_code == 404, name
        assert answer.json()["error_code"] == "NOT_FOUND"
    # an encoded slash makes it more than a file name: not the page's, so the key is asked for
    assert keyed.get("/page/..%2Froutes%2Fpage.py").status_code == 401
    assert keyed.get("/page/index.html").status_code == 404  # the page itself is at /


def test_without_a_key_the_page_keeps_the_host_and_origin_rule(make_client: AppFactory) -> None:
    client = make_client()
    assert client.get("/").status_code == 200
    rebound = client.get("/", headers={"Host": "evil.example"})
    assert rebound.status_code == 403
    assert rebound.json()["error_code"] == "FOREIGN_REQUEST"
    foreign = client.get("/page/main.js", headers={"Origin": "https://evil.example"})
    assert foreign.status_code == 403
