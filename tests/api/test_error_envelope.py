"""One error shape everywhere: every documented error response, routing errors, every domain error code, and
unexpected failures all answer `error_code`, `detail`, `recoverable`, `suggestion` with the right status."""

from __future__ import annotations

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from backend.api.errors import STATUS_BY_CODE, install_error_handlers
from backend.domain import errors as domain
from tests.api.conftest import AppFactory

ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}
ENVELOPE_REF = "#/components/schemas/ErrorBody"


@pytest.fixture
def client(make_client: AppFactory) -> TestClient:
    return make_client()


def _operations(schema: dict) -> list[tuple[str, str, dict]]:
    return [(method, path, op) for path, ops in schema["paths"].items() for method, op in ops.items()]


def test_every_documented_error_response_is_the_envelope(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    operations = _operations(schema)
    assert len(operations) >= 6
    for method, path, op in operations:
        errors = {status: r for status, r in op["responses"].items() if status[0] in "45"}
        assert "500" in errors, f"{method} {path} does not document 500"
        if path != "/health":
            assert "401" in errors, f"{method} {path} does not document 401 (API_KEY)"
        if op.get("parameters") or op.get("requestBody"):
            assert "422" in errors, f"{method} {path} does not document 422"
        for status, response in errors.items():
            content = response["content"]["application/json"]
            assert content["schema"] == {"$ref": ENVELOPE_REF}, (method, path, status)
            assert set(content["example"]) == ERROR_KEYS, (method, path, status)
            assert response["description"].startswith("Error codes:"), (method, path, status)
    # FastAPI's own 422 body (a `detail` list) is never advertised
    assert "HTTPValidationError" not in schema["components"]["schemas"]


def test_unknown_route_and_wrong_method_use_the_envelope(client: TestClient) -> None:
    missing = client.get("/no/such/endpoint")
    assert missing.status_code == 404
    assert set(missing.json()) == ERROR_KEYS
    assert missing.json()["error_code"] == "NOT_FOUND"
    wrong = client.get("/search")
    assert wrong.status_code == 405
    assert set(wrong.json()) == ERROR_KEYS
    assert wrong.json()["error_code"] == "METHOD_NOT_ALLOWED"
    assert "POST" in wrong.headers["allow"]


def test_invalid_body_is_one_line_validation_error(client: TestClient) -> None:
    response = client.post("/search", json={"query": "milk", "top_k": 500})
    assert response.status_code == 422
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert body["error_code"] == "VALIDATION_ERROR"
    assert body["detail"].startswith("top_k:")
    assert body["recoverable"] is True
    not_json = client.post("/search", content=b"{not json", headers={"content-type": "application/json"})
    assert not_json.status_code == 422
    assert not_json.json()["error_code"] == "VALIDATION_ERROR"


def _all_subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_all_subclasses(sub)]
    return found


def test_every_domain_error_code_has_a_status() -> None:
    codes = {cls.code for cls in _all_subclasses(domain.KnowledgeBridgeError)}
    assert codes <= set(STATUS_BY_CODE)


# The codes issue 7 names, with the status an agent must see.
EXPECTED = [
    (domain.IndexNotReadyError, 503, True),
    (domain.IndexUnavailableError, 503, True),
    (domain.IndexCorruptedError, 503, True),
    (domain.EmbedderUnavailableError, 503, True),
    (domain.ModelNotFoundError, 503, True),
    (domain.NoteNotFoundError, 404, False),
    (domain.ReindexInProgressError, 409, True),
    (domain.SecurityViolationError, 400, False),
    (domain.UnauthorizedError, 401, True),
    (domain.InvalidRequestError, 422, True),
    (domain.EmbeddingModelMismatchError, 409, True),
    (domain.MemoryNotFoundError, 404, False),
    (domain.StoreError, 500, False),
]


@pytest.fixture(scope="module")
def raising_client() -> TestClient:
    """A bare app with our handlers and routes that raise: the mapping, seen over HTTP."""
    app = FastAPI()
    install_error_handlers(app)
    by_name = {cls.__name__: cls for cls, _, _ in EXPECTED}

    @app.get("/raise/{name}")
    def raise_it(name: str) -> None:
        raise by_name[name](f"{name} happened")

    @app.get("/crash")
    def crash() -> None:
        raise RuntimeError("internal detail /home/user/secret-path line 42")

    return TestClient(app, raise_server_exceptions=False)


@pytest.mark.parametrize(("error", "status", "recoverable"), EXPECTED, ids=lambda v: getattr(v, "code", v))
def test_each_code_answers_its_status_in_the_envelope(
    raising_client: TestClient, error: type[domain.KnowledgeBridgeError], status: int, recoverable: bool
) -> None:
    response = raising_client.get(f"/raise/{error.__name__}")
    assert response.status_code == status
    body = response.json()
    assert set(body) == ERROR_KEYS
    assert body["error_code"] == error.code
    assert body["detail"] == f"{error.__name__} happened"
    assert body["recoverable"] is recoverable
    assert body["suggestion"]


def test_index_corrupted_suggests_a_rebuild(raising_client: TestClient) -> None:
    body = raising_client.get("/raise/IndexCorruptedError").json()
    assert "rebuild" in body["suggestion"].lower()


def test_unauthorized_names_the_scheme(raising_client: TestClient) -> None:
    assert raising_client.get("/raise/UnauthorizedError").headers["www-authenticate"] == "Bearer"


def test_an_unexpected_failure_leaks_no_trace(raising_client: TestClient) -> None:
    response = raising_client.get("/crash")
    assert response.status_code == 500
    assert response.json()["error_code"] == "INTERNAL_ERROR"
    assert "secret-path" not in response.text
    assert "Traceback" not in response.text
    assert "RuntimeError" not in response.text
