"""The HTTP edge: who may call (API_KEY; without it, loopback host names and same-site pages only), how much a
request may carry (MAX_REQUEST_BYTES, MAX_URL_BYTES, REQUEST_BODY_TIMEOUT_SECONDS), how many are worked on at
once (MAX_CONCURRENT_REQUESTS, MAX_LARGE_REQUESTS), and which browser pages may read answers (CORS_ORIGINS).

Plain ASGI middlewares around the whole app rather than route dependencies, so nothing can be added behind
them by mistake: the API, `/mcp`, the schema and docs (`/openapi.json`, `/docs`, `/redoc`) and unknown paths
all need the key; only `/health` stays open (a liveness probe has no key), and the look-inside page's HTML
and files, which hold no data (the page then asks for the key). Refusals are the error envelope.

Order, outermost first: CORS (a browser's preflight carries no key, and a refusal must still be readable by
the page that is allowed to call us), the key or, without one, the host and origin check (an unknown caller
learns nothing, not even our size limits, and no body is read for it), admission (a busy service refuses
before it reads a body), then the size limits.

Without API_KEY, the rule against DNS rebinding and cross-site forgery lives here, in one place: a request
must name the service by a loopback host (`localhost`, `*.localhost`, `127.0.0.0/8`, `[::1]`) or one of
ALLOWED_HOSTS — a page that rebinds `evil.example` to 127.0.0.1 still sends `Host: evil.example` — and a
request sent by a browser page on another site (its `Origin`) must come from such a host or from one of
CORS_ORIGINS: a page may POST a form or a `text/plain` body without a preflight. (Browsers send no Origin on
same-origin GETs, and curl or an agent none at all, so refusing every method costs nobody anything.)
With API_KEY the key decides alone: a keyed client on another host (an agent container calling
`http://backend:8000`) is legitimate, and a page cannot send a key it does not know.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import re
from asyncio import Future, get_running_loop, wait_for
from collections import deque
from typing import Any
from urllib.parse import urlsplit

import anyio
from fastapi import FastAPI
from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend.api.errors import domain_error_response
from backend.config import Settings
from backend.domain.errors import (
    ForeignRequestError,
    KnowledgeBridgeError,
    RequestTimeoutError,
    RequestTooLargeError,
    SecurityViolationError,
    ServerBusyError,
    UnauthorizedError,
    UrlTooLongError,
)

OPEN_PATHS = frozenset({"/health"})
# The look-inside page (routes/page.py) and its files hold no data and must load before the page can ask for
# the key: open to the key check, but, unlike /health, still under the Host/Origin rule without a key.
PAGE_PATH = "/"
PAGE_ASSETS = "/page/"
LARGE_WAIT_SECONDS = 1.0  # a large request waits this long for a large slot before 503 (it reads nothing)
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
    response = domain_error_response(exc)
    # The body of a refused request is never read: closing the connection spares the server reading (and
    # parsing) the rest of it just to keep the connection alive. A flood of 1 MB requests costs little.
    response.headers["Connection"] = "close"
    await response(scope, receive, send)


class ApiKeyMiddleware:
    def __init__(self, app: ASGIApp, *, api_key: str) -> None:
        self.app = app
        self.api_key = api_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS or is_page(scope):
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


def is_page(scope: Scope) -> bool:
    """A GET of the page or one of its files (HEAD too): the only requests served without the key."""
    path = scope["path"]
    if scope.get("method") not in ("GET", "HEAD"):
        return False
    # one file name after the prefix, as the page's route takes it: nothing else can ride on the prefix
    return path == PAGE_PATH or (path.startswith(PAGE_ASSETS) and "/" not in path[len(PAGE_ASSETS) :])


def host_name(authority: str) -> str:
    """The host of a `Host` header or URL authority: lower-case, without port or IPv6 brackets."""
    value = authority.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        return value[1:end] if end > 0 else value
    name, colon, port = value.rpartition(":")
    return name if colon and (port.isdigit() or not port) else value


def is_loopback_host(name: str) -> bool:
    """`localhost` and its subdomains (browsers answer those themselves, never through DNS) and loopback
    addresses: names a rebinding page cannot make a browser send."""
    name = name.rstrip(".")
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class HostGuardMiddleware:
    """Without API_KEY: 403 FOREIGN_REQUEST for a host name that is not ours and for a request from a page
    on a foreign origin (see the module docstring). `/health` stays open, as with a key."""

    def __init__(self, app: ASGIApp, *, allowed_hosts: list[str], cors_origins: list[str]) -> None:
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.hosts = frozenset(host_name(h) for h in allowed_hosts if h != "*")
        self.any_origin = "*" in cors_origins
        self.origins = frozenset(o.lower() for o in cors_origins)

    def allowed_host(self, name: str) -> bool:
        return self.any_host or name in self.hosts or is_loopback_host(name)

    def problem(self, scope: Scope) -> str | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is not None and not self.allowed_host(host_name(host)):
            shown = host if len(host) <= 100 else host[:100] + "…"
            return f"host {shown!r} is not a name of this service (DNS rebinding?)"
        origin = headers.get("origin")
        if origin is None or self.any_origin or origin.lower() in self.origins:
            return None
        try:
            origin_host = urlsplit(origin).hostname
        except ValueError:
            origin_host = None
        if origin_host is not None and self.allowed_host(origin_host):
            return None
        shown = origin if len(origin) <= 100 else origin[:100] + "…"
        return f"request from a page on another origin ({shown!r}) refused (cross-site request)"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket") or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        problem = self.problem(scope)
        if problem is None:
            await self.app(scope, receive, send)
        elif scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
        else:
            await _refuse(ForeignRequestError(problem), scope, receive, send)


class _Slots:
    """At most `size` holders and `queue` waiters, first come first served; never blocks a thread.

    Plain counters and futures of the running loop rather than an asyncio.Semaphore, which binds to the
    first event loop that uses it (test clients each run their own)."""

    def __init__(self, size: int, queue: int) -> None:
        self.size = size
        self.queue = queue
        self.busy = 0
        self.waiters: deque[Future[None]] = deque()

    async def acquire(self, timeout: float | None = None) -> bool:
        """True once a slot is held; False at once when the queue is full too, or after `timeout` seconds
        in the queue."""
        if self.busy < self.size and not self.waiters:
            self.busy += 1
            return True
        if len(self.waiters) >= self.queue:
            return False
        waiter: Future[None] = get_running_loop().create_future()
        self.waiters.append(waiter)
        try:
            await wait_for(waiter, timeout)
        except TimeoutError:
            self._abandon(waiter)
            return False
        except BaseException:
            self._abandon(waiter)
            raise
        return True

    def _abandon(self, waiter: Future[None]) -> None:
        if waiter in self.waiters:
            self.waiters.remove(waiter)
        elif waiter.done() and not waiter.cancelled():
            self.release()  # the slot was handed to us as we gave up: pass it on

    def release(self) -> None:
        while self.waiters:
            waiter = self.waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)  # the slot goes straight to the next waiter
                return
        self.busy -= 1


class AdmissionMiddleware:
    """A bounded pool for the work requests cause: at most `max_running` at once (all but /health), at most
    `max_waiting` more in line, and at most `max_large` with a body over `large_bytes` (or of unknown size),
    which wait for a large slot at most LARGE_WAIT_SECONDS. Past that, 503 SERVER_BUSY with Retry-After,
    decided before any body is read, so a flood of large requests costs the service little and a normal
    search still finds a slot. (The short wait paces a flood: a client refused at once comes straight back,
    and answering it again is what would keep the event loop from the normal requests.)"""

    def __init__(
        self, app: ASGIApp, *, max_running: int, max_waiting: int, large_bytes: int, max_large: int
    ) -> None:
        self.app = app
        self.work = _Slots(max_running, max_waiting)
        self.large = _Slots(max_large, max_waiting)
        self.large_bytes = large_bytes

    def _is_large(self, scope: Scope) -> bool:
        headers = Headers(scope=scope)
        declared = headers.get("content-length")
        if declared is not None:
            return not declared.isdigit() or int(declared) > self.large_bytes
        return "chunked" in headers.get("transfer-encoding", "").lower()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        large = self._is_large(scope)
        if large and not await self.large.acquire(LARGE_WAIT_SECONDS):
            await _refuse(ServerBusyError("too many large requests at once"), scope, receive, send)
            return
        try:
            if not await self.work.acquire():
                await _refuse(ServerBusyError("too many requests at once"), scope, receive, send)
                return
            try:
                await self.app(scope, receive, send)
            finally:
                self.work.release()
        finally:
            if large:
                self.large.release()


class RequestLimitsMiddleware:
    """413 REQUEST_TOO_LARGE for a body over `max_body` bytes — at once when Content-Length says so, or as
    soon as a streamed (chunked) body passes it — 414 URL_TOO_LONG for a path plus query over `max_url`, and
    400 SECURITY_VIOLATION for a control character in the (decoded) URL path: Starlette's `{path:path}`
    pattern would silently drop a trailing `%0A`, so the path check would not see what was sent.

    The body is read here, up to the limit, and handed on whole: every route reads its whole body anyway, and
    the app never sees a request it would have to abandon halfway. A body that has not fully arrived within
    `body_timeout` seconds answers 408 REQUEST_TIMEOUT: a slow client cannot hold a slot for ever."""

    def __init__(self, app: ASGIApp, *, max_body: int, max_url: int, body_timeout: float = 30.0) -> None:
        self.app = app
        self.max_body = max_body
        self.max_url = max_url
        self.body_timeout = body_timeout

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
        try:
            with anyio.fail_after(self.body_timeout):
                body = await self._read_body(receive)
        except TimeoutError:
            late = RequestTimeoutError(f"the request body did not arrive within {self.body_timeout:g} s")
            await _refuse(late, scope, receive, send)
            return
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
        RequestLimitsMiddleware,
        max_body=settings.max_request_bytes,
        max_url=settings.max_url_bytes,
        body_timeout=settings.request_body_timeout_seconds,
    )
    app.add_middleware(
        AdmissionMiddleware,
        max_running=settings.max_concurrent_requests,
        max_waiting=settings.max_queued_requests,
        large_bytes=settings.large_request_bytes,
        max_large=settings.max_large_requests,
    )
    if settings.api_key:
        app.add_middleware(ApiKeyMiddleware, api_key=settings.api_key)
    else:
        app.add_middleware(
            HostGuardMiddleware, allowed_hosts=settings.allowed_hosts, cors_origins=settings.cors_origins
        )
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
