"""Requests are read as the OpenAPI schema says, found by the fuzz test (test_fuzz.py): no 0/1 for booleans,
no strings for numbers, no Unix times for days and moments, and a 405 names every method the path answers."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import AppFactory


@pytest.fixture
def client(make_client: AppFactory) -> TestClient:
    return make_client()


@pytest.mark.parametrize(
    ("path", "field", "value"),
    [
        ("/search", "include_related", 0),
        ("/search", "include_memory", "true"),
        ("/search", "top_k", "5"),
        ("/search", "top_k", 5.5),
        ("/search", "top_k", True),
        ("/search", "threshold", "0.5"),
        ("/search", "date_from", 0),
        ("/search", "date_from", "1700000000"),
        ("/context", "max_chars", "4000"),
        ("/context", "include_memory", 1),
    ],
)
def test_a_body_field_of_the_wrong_json_type_is_refused(
    client: TestClient, path: str, field: str, value: object
) -> None:
    response = client.post(path, json={"query": "milk", field: value})
    assert response.status_code == 422, response.text
    assert response.json()["error_code"] == "VALIDATION_ERROR"
    assert field in response.json()["detail"]


def test_json_numbers_are_read_as_json_schema_reads_them(client: TestClient) -> None:
    # 3.0 is an integer to JSON Schema; an integer is a number
    answer = client.post("/search", json={"query": "milk", "top_k": 3.0, "threshold": 0, "mode": "keyword"})
    assert answer.status_code in (200, 503), answer.text  # 503 while the first indexing starts


@pytest.mark.parametrize(("name", "value"), [("modified_since", "0.5"), ("date_from", "20260101")])
def test_query_days_and_moments_are_iso_only(client: TestClient, name: str, value: str) -> None:
    response = client.get("/notes", params={name: value})
    assert response.status_code == 422
    assert name in response.json()["detail"]
    assert client.get("/notes", params={"modified_since": "2026-03-28T09:00:00Z"}).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [("PUT", "/memory", "GET, POST"), ("GET", "/search", "POST"), ("PUT", "/memory/k", "DELETE")],
)
def test_a_405_names_every_method_the_path_answers(
    client: TestClient, method: str, path: str, allowed: str
) -> None:
    response = client.request(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allowed
    assert response.json()["error_code"] == "METHOD_NOT_ALLOWED"
