"""`POST /search` and `POST /context` the short way: a well-formed JSON question goes straight to the
search, without FastAPI's request machinery (routing by model, dependencies, validating the answer again
before dumping it), which cost ~0.3 ms of a 4-5 ms keyword answer over HTTP.

The FastAPI routes stay: each documents its operation (OpenAPI, the agent tools) and answers every request the
short way does not take, so both ways answer alike by construction. The short way takes only a body FastAPI
would read as this JSON too (`application/json`, parsed as FastAPI parses it) and that validates as the
route's model exactly as FastAPI validates it; anything else (no body, another media type, malformed JSON, a
field out of range) is routed again, body and all, past the short way to the FastAPI route, whose 422 is the
one answer. Errors of the search itself propagate to the app's handlers, as they do from the route. The
guards (key, host, limits, CORS) wrap the whole app, so they apply to both ways.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import Message, Receive, Scope, Send

from backend.api.context_schemas import ContextRequest
from backend.api.schemas import SearchRequest
from backend.api.vault_answers import context_vaults
from backend.api.vault_search import search_vaults
from backend.vault_set import Library

JSON = "application/json"


DECLINED = "kb.lean_declined"  # set in the scope of a request the short way hands to the FastAPI route


class LeanRoute:
    """An ASGI app answering one operation the short way, or through the app's own route for it."""

    def __init__(
        self,
        model: type[BaseModel],
        answer: Callable[[Library, Any], Awaitable[tuple[bytes, dict[str, str]]]],
    ) -> None:
        self._model = model
        self._answer = answer

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        if request.headers.get("content-type") != JSON:  # FastAPI reads other types by other rules
            await _declined(scope, receive, send)
            return
        body = await request.body()
        try:
            asked = self._model.model_validate(json.loads(body))  # as FastAPI: json.loads, then the model
        except (ValueError, ValidationError):
            await _declined(scope, _replayed(body), send)
            return
        library: Library = request.app.state.library
        content, headers = await self._answer(library, asked)  # each vault asked in the thread pool
        await Response(content, media_type=JSON, headers=headers)(scope, receive, send)


class _ShortWay(Route):
    """The route to a `LeanRoute`, out of the way of a request it declined."""

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if scope.get(DECLINED):
            return Match.NONE, {}
        return super().matches(scope)


async def _declined(scope: Scope, receive: Receive, send: Send) -> None:
    """Route the request again, past the short way: to the FastAPI route, as if there were no short way."""
    scope[DECLINED] = True
    await scope["app"].router(scope, receive, send)


def _replayed(body: bytes) -> Receive:
    """A `receive` giving the body already read (the FastAPI route reads it again)."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def _search(library: Library, asked: SearchRequest) -> tuple[bytes, dict[str, str]]:
    answer, timing = await search_vaults(library, asked)
    return answer.model_dump_json().encode(), {"Server-Timing": timing}


async def _context(library: Library, asked: ContextRequest) -> tuple[bytes, dict[str, str]]:
    return (await context_vaults(library, asked)).model_dump_json().encode(), {}


def install_lean_routes(app: FastAPI) -> None:
    """Put the short ways to `POST /search` and `POST /context` before their FastAPI routes."""
    ways = (("/search", LeanRoute(SearchRequest, _search)), ("/context", LeanRoute(ContextRequest, _context)))
    for path, lean in reversed(ways):
        app.router.routes.insert(0, _ShortWay(path, lean, methods=["POST"], include_in_schema=False))
