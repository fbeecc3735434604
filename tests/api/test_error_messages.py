"""Errors that say what to fix: every 422 names the field and the rule, bad JSON says where it breaks, a body
sent without a JSON content type says to send one; the OpenAPI schema lists only codes a route can answer,
and docs/api.md explains every code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.api.errors import NOT_ON_HTTP, ROUTING_CODES, STATUS_BY_CODE

API_DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    from backend.config import load_settings
    from backend.entrypoints.app import create_app

    settings = load_settings(data_dir=tmp_path_factory.mktemp("data"), embedding_provider="none", watch=False)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        yield client  # type: ignore[misc]


JSON = {"content-type": "application/json"}


@pytest.mark.parametrize(
    ("request_kwargs", "detail"),
    [
        ({"json": {}}, "query: required"),
        ({"json": {"query": "x" * 2001}}, "query: at most 2000 characters"),
        ({"json": {"query": ""}}, "query: must not be empty"),
        ({"json": {"query": "milk", "top_k": 99}}, "top_k: at most 50"),
        ({"json": {"query": "milk", "top_k": 0}}, "top_k: at least 1"),
        ({"json": {"query": "milk", "mode": "fuzzy"}}, "mode: must be 'hybrid', 'dense' or 'keyword'"),
        ({"json": {"query": "milk", "colour": 1}}, "colour: not a field of this request"),
        ({"json": [1]}, "request body: must be a JSON object"),
        (
            {"content": '{"query": "milk",}', "headers": JSON},
            "request body: invalid JSON at line 1, column 18: Expecting property name",
        ),
        (
            {"content": '{\n  "query": "milk"\n  "top_k": 3\n}', "headers": JSON},
            "request body: invalid JSON at line 3, column 3: Expecting ',' delimiter",
        ),
        (
            {"content": '{"query": "milk"}'},
            "request body: send the body as JSON with the header `Content-Type: application/json` "
            "(got no Content-Type)",
        ),
        (
            {"content": '{"query": "milk"}', "headers": {"content-type": "text/plain"}},
            "`Content-Type: application/json` (got text/plain)",
        ),
    ],
)
def test_a_bad_search_request_says_which_field_and_which_rule(
    client: TestClient, request_kwargs: dict, detail: str
) -> None:
    response = client.post("/search", **request_kwargs)
    assert response.status_code == 422
    assert response.json()["error_code"] == "VALIDATION_ERROR"
    assert detail in response.json()["detail"]


def test_query_parameters_are_named_too(client: TestClient) -> None:
    assert client.get("/notes?limit=0").json()["detail"] == "limit: at least 1"
    assert client.get("/notes?limit=9999").json()["detail"] == "limit: at most 500"


def _codes_by_route(client: TestClient) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = {}
    for path, ops in client.get("/openapi.json").json()["paths"].items():
        for method, op in ops.items():
            for status, response in op["responses"].items():
                if status[0] in "45":
                    listed = response["description"].removeprefix("Error codes: ").split(", ")
                    found.setdefault((method, path), set()).update(listed)
                    assert response["content"]["application/json"]["example"]["error_code"] in listed
    return found


def test_openapi_lists_only_codes_the_route_can_answer(client: TestClient) -> None:
    codes = _codes_by_route(client)
    search = codes[("post", "/search")]
    assert "EMBEDDING_MODEL_MISMATCH" in search
    assert not search & {"TARGET_NOT_EMPTY", "REINDEX_IN_PROGRESS", "MEMORY_NOT_FOUND", "NOTE_NOT_FOUND"}
    assert "REINDEX_IN_PROGRESS" in codes[("post", "/index/rebuild")]
    assert codes[("get", "/health")] <= {
        "INTERNAL_ERROR",
        "SECURITY_VIOLATION",
        "REQUEST_TOO_LARGE",
        "URL_TOO_LONG",
    }
    assert all("TARGET_NOT_EMPTY" not in listed for listed in codes.values())


def test_every_code_is_explained_in_the_error_table(client: TestClient) -> None:
    table = {
        code: row
        for row in API_DOC.read_text(encoding="utf-8").splitlines()
        if row.startswith("| `")
        for code in re.findall(r"`([A-Z_]+)`", row.split("|")[1])
    }
    every = set(STATUS_BY_CODE) | set(ROUTING_CODES.values()) | NOT_ON_HTTP
    every |= {code for listed in _codes_by_route(client).values() for code in listed}
    missing = every - set(table)
    assert not missing, f"docs/api.md's error table does not explain {sorted(missing)}"
    for code, status in STATUS_BY_CODE.items():
        if code not in NOT_ON_HTTP:
            assert f"| {status}" in table[code], (code, status)
