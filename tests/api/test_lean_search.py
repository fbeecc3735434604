"""`POST /search` and `POST /context` the short way (backend/api/lean_search.py) answer exactly as their
FastAPI routes do: the same bodies for good questions, the same errors for bad ones (the routes' own)."""

from __future__ import annotations

import json
import re

import pytest
from fastapi.testclient import TestClient
from starlette.routing import Route

from backend.api.lean_search import LeanRoute
from tests.api.conftest import AppFactory, wait_for_job

SEARCHES = [
    {"query": "Sreenivas", "top_k": 3},
    {"query": "how much do I owe", "top_k": 5, "include_related": True},
    {"query": "decision", "mode": "keyword", "max_chunks_per_note": 1, "group_by": "note"},
    {"query": "project", "tags": ["nonexistent-tag"], "folders": ["Projects"]},
    {"query": "Sreenivas", "explain": True},
]
BAD_SEARCHES = [
    b"",  # no body
    b'{"query": "x"',  # malformed JSON
    b'{"query": ""}',  # an empty question
    b'{"query": "x", "top_k": 0}',  # out of range
    b'{"query": "x", "surprise": 1}',  # an unknown field
    b'["query"]',  # not an object
    b'{"query": "x", "paths": ["../outside.md"]}',  # outside the vault: the search refuses it
]
CONTEXTS = [
    {"query": "How much do I owe Sreenivas?"},
    {"messages": [{"role": "user", "content": "what did we decide about the database?"}], "max_chars": 600},
    {"query": "health", "exclude_categories": ["health"], "explain": True},
]
BAD_CONTEXTS = [
    b"{}",  # neither a question nor messages
    b'{"query": "x", "max_chars": 1}',
    b'{"messages": [{"role": "robot", "content": "x"}]}',
    b'{"query": "x", "folders": ["/../../etc"]}',
]
OPERATIONS = {
    "/search": (SEARCHES, BAD_SEARCHES),
    "/context": (CONTEXTS, BAD_CONTEXTS),
}


def _without_short_way(client: TestClient) -> list[object]:
    routes = client.app.router.routes  # type: ignore[attr-defined]
    taken = [r for r in routes if isinstance(r, Route) and isinstance(r.endpoint, LeanRoute)]
    assert sorted(r.path for r in taken) == ["/context", "/search"]  # the short ways are installed
    for route in taken:
        routes.remove(route)
    return taken


def _comparable(body: dict[str, object]) -> dict[str, object]:
    """A search answer without the fields that differ from one asking to the next (its own timings)."""
    body = dict(body)
    body.pop("search_time_ms", None)
    body.pop("stages", None)
    return body


def _asked(
    client: TestClient, path: str, body: bytes, content_type: str = "application/json"
) -> tuple[int, dict, str]:
    answer = client.post(path, content=body, headers={"content-type": content_type})
    timing = answer.headers.get("server-timing", "")
    return answer.status_code, answer.json(), re.sub(r"dur=[0-9.]+", "dur=", timing)


@pytest.mark.parametrize("path", list(OPERATIONS))
def test_both_ways_answer_alike(make_client: AppFactory, path: str) -> None:
    client = make_client()
    wait_for_job(client)
    good_ones, bad_ones = OPERATIONS[path]
    asked = [(json.dumps(q).encode(), "application/json") for q in good_ones]
    asked += [(body, "application/json") for body in bad_ones]
    asked += [
        (json.dumps(good_ones[0]).encode(), kind)
        for kind in ("text/plain", "application/json; charset=utf-8")
    ]
    short = [_asked(client, path, body, kind) for body, kind in asked]
    _without_short_way(client)
    route = [_asked(client, path, body, kind) for body, kind in asked]
    assert [status for status, _, _ in short] == [status for status, _, _ in route]
    assert [_comparable(body) for _, body, _ in short] == [_comparable(body) for _, body, _ in route]
    assert [timing for _, _, timing in short] == [timing for _, _, timing in route]
    good, bad = short[: len(good_ones)], short[len(good_ones) : len(good_ones) + len(bad_ones)]
    assert all(status == 200 for status, _, _ in good)
    assert all(status in (400, 422) for status, _, _ in bad)
    assert all(set(body) == {"error_code", "detail", "recoverable", "suggestion"} for _, body, _ in bad)


def test_a_good_question_takes_the_short_way(make_client: AppFactory) -> None:
    client = make_client()
    wait_for_job(client)
    route = next(r for r in _without_short_way(client) if r.path == "/search")  # type: ignore[attr-defined]
    taken: list[bytes] = []
    lean: LeanRoute = route.endpoint  # type: ignore[attr-defined,assignment]
    answer = lean._answer

    async def counted(library: object, asked: object) -> tuple[bytes, dict[str, str]]:
        content, headers = await answer(library, asked)  # type: ignore[arg-type]
        taken.append(content)
        return content, headers

    lean._answer = counted
    client.app.router.routes.insert(0, route)  # type: ignore[attr-defined]
    good = client.post("/search", json={"query": "Sreenivas"})
    bad = client.post("/search", json={"query": ""})
    assert good.status_code == 200
    assert bad.status_code == 422
    assert len(taken) == 1
    assert json.loads(taken[0]) == good.json()
