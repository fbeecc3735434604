"""The HTTP edge: who may call (API_KEY), how much a request may carry (MAX_REQUEST_BYTES, MAX_URL_BYTES), and
which browser pages may read the answers (CORS_ORIGINS).

Plain ASGI middlewares around the whole app rather than route dependencies, so nothing can be added behind
them by mistake: the API, `/mcp`, the schema and docs (`/openapi.json`, `/docs`, `/redoc`) and unknown paths
all need the key; only `/health` stays open (a liveness probe has no key). Refusals are the error envelope.

Order, outermost first: CORS (a browser's preflight carries no key, and a refusal must still be readable by
the page that is allowed to call us), the key (an unknown caller learns nothing, not even our size limits,
and no body is read for it), then the size limits.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from typing import Any

from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.api.errors import domain_error_response
from backend.config import Settings
from backend.domain.errors import (
    KnowledgeBridgeError,
    RequestTooLargeError,
    SecurityViolationError,
    UnauthorizedError,
    UrlTooLongError,
)

OPEN_PATHS = frozenset({"/health"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
BEARER_SCHEME = "bearerAuth"  # its name in the OpenAPI schema's securitySchemes

# What a browser page on an allowed origin may send and read (the MCP transport's headers included).
CORS_METHODS = ("GET", "POST", "DELETE")
CORS_HEADERS = ("Authorization", "Content-Type", "Accept", "Mcp-Protocol-Version", "Mcp-Session-Id")
CORS_EXPOSED = ("Server-Timing", "WWW-Authenticate", "Mcp-Session-Id")


def check_api_key(authorization: str | None, expected: str | None) -> None:
    """Raise UnauthorizedError unless `authorization` is `Bearer <expected>` (nothing is needed when
    `expected` is None). The scheme name is case-insensitive (RFC 9110 §11.1), the key is not."""
    if not expected:
        return
    scheme, _, token = (authorization or "").strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise UnauthorizedError("missing API key: send `Authorization: Bearer <key>`")
    if not _same(token.strip(), expected):
        raise UnauthorizedError("wrong API key")


def _same(supplied: str, expected: str) -> bool:
    # Compared as digests of one length, in constant time: how long the comparison takes says nothing about
    # the key, not even its length.
    return hmac.compare_digest(
        hashlib.sha256(supplied.encode()).digest(), hashlib.sha256(expected.encode()).digest()
    )


async def _refuse(exc: KnowledgeBridgeError, scope: Scope, receive: Receive, send: Send) -> None:
    await domain_error_response(exc)(scope, receive, send)


class ApiKeyMiddleware:
    def __init__(self, app: ASGIApp, *, api_key: str) -> None:
        self.app = app
        self.api_key = api_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        try:
            check_api_key(Headers(scope=scope).get("authorization"), self.api_key)
        except UnauthorizedError as exc:
            if scope["type"] == "websocket":  # none served today; refused all the same (policy violation)
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _refuse(exc, scope, receive, send)
            return
        await self.app(scope, receive, send)


class RequestLimitsMiddleware:
    """413 REQUEST_TOO_LARGE for a body over `max_body` bytes — at once when Content-Length says so, or as
    soon as a streamed (chunked) body passes it — 414 URL_TOO_LONG for a path plus query over `max_url`, and
    400 SECURITY_VIOLATION for a control character in the (decoded) URL path: Starlette's `{path:path}`
    pattern would silently drop a trailing `%0A`, so the path check would not see what was sent.

    The body is read here, up to the limit, and handed on whole: every route reads its whole body anyway, and
    the app never sees a request it would have to abandon halfway."""

    def __init__(self, app: ASGIApp, *, max_body: int, max_url: int) -> None:
        self.app = app
        self.max_body = max_body
        self.max_url = max_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        url = len(scope.get("raw_path") or scope["path"].encode()) + len(scope.get("query_string", b""))
        if url > self.max_url:
            too_long = UrlTooLongError(f"path and query string longer than {self.max_url} bytes")
            await _refuse(too_long, scope, receive, send)
            return
        if _CONTROL.search(scope["path"]):
            await _refuse(SecurityViolationError("control character in the URL path"), scope, receive, send)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_body:
            await _refuse(self._too_large(), scope, receive, send)
            return
        body = await self._read_body(receive)
        if body is None:
            await _refuse(self._too_large(), scope, receive, send)
            return
        await self.app(scope, _replay(body, receive), send)

    def _too_large(self) -> RequestTooLargeError:
        return RequestTooLargeError(f"request body larger than {self.max_body} bytes")

    async def _read_body(self, receive: Receive) -> Message | None:
        """The whole body as one message (or the disconnect that cut it short); None past the limit."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return {"type": "http.request", "body": b"".join(parts), "more_body": False}


def _replay(first: Message, receive: Receive) -> Receive:
    pending = [first]

    async def replayed() -> Message:
        if pending:
            return pending.pop()
        return await receive()  # after the body: the disconnect, when it comes

    return replayed


class _Cors(CORSMiddleware):
    """Starlette's CORS, except that a request it would refuse gets no CORS answer at all: the app answers it
    as without CORS (an envelope, not Starlette's plain-text 400), and the browser, finding no
    Access-Control-Allow-Origin, keeps the answer from the page."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is None or not self.is_allowed_origin(origin):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS" and "access-control-request-method" in headers:
            response = self.preflight_response(request_headers=headers)
            if response.status_code != 200:
                await self.app(scope, receive, send)
                return
            await response(scope, receive, send)
            return
        await self.simple_response(scope, receive, send, request_headers=headers)


def install_guards(app: FastAPI, settings: Settings) -> None:
    """Wrap `app` in the edge middlewares the settings ask for (added innermost first)."""
    app.add_middleware(
        RequestLimitsMiddleware, max_body=settings.max_request_bytes, max_url=settings.max_url_bytes
    )
    if settings.api_key:
        app.add_middleware(ApiKeyMiddleware, api_key=settings.api_key)
    if settings.cors_origins:
        app.add_middleware(
            _Cors,
            allow_origins=settings.cors_origins,
            allow_methods=CORS_METHODS,
            allow_headers=CORS_HEADERS,
            expose_headers=CORS_EXPOSED,
            allow_credentials=False,  # the key travels in a header, never in a cookie
        )


def document_security(schema: dict[str, Any]) -> dict[str, Any]:
    """The OpenAPI schema of a service with an API key: the bearer scheme, required by every operation but
    /health, so clients (and the schema-driven tests) know to send it."""
    components = schema.setdefault("components", {})
    components.setdefault("securitySchemes", {})[BEARER_SCHEME] = {
        "type": "http",
        "scheme": "bearer",
        "description": "The service's API_KEY.",
    }
    for path, operations in schema.get("paths", {}).items():
        for operation in operations.values():
            operation["security"] = [] if path in OPEN_PATHS else [{BEARER_SCHEME: []}]
    return schema
