"""The MCP endpoint's HTTP side: both transports an MCP client may speak at `/mcp`, in the same app.

- `POST /mcp`: streamable HTTP (stateless, JSON responses), what current clients send.
- `GET /mcp` with `Accept: text/event-stream` and no `Mcp-Protocol-Version`/`Mcp-Session-Id` header: the
  legacy HTTP+SSE transport, OpenClaw's default (`openclaw mcp add NAME --url .../mcp` without
  `--transport`, through the TypeScript SDK's `SSEClientTransport`). The stream opens with an `endpoint`
  event naming `/mcp/messages?session_id=...`, where the client POSTs its messages; the answers come back
  on the stream.
- Any other `GET /mcp` (a browser, `curl`, a streamable HTTP client asking for a server-to-client stream a
  stateless server never sends) answers `405` at once with our error envelope: it never hangs.

Host checks (DNS rebinding): with `API_KEY` set every request carries the key, which a page rebound to our
address cannot know, so any Host is accepted (a Compose service name, `backend:8000`). Without a key only
loopback names pass, plus the names in `ALLOWED_HOSTS` when that setting exists.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.sse import SseServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from backend.api.errors import error_response
from backend.api.schemas import ErrorBody
from backend.config import Settings

MCP_PATH = "/mcp"
MESSAGES_PATH = "/mcp/messages"  # where a legacy SSE client POSTs (named by the stream's `endpoint` event)
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
NOT_AN_EVENT_STREAM = ErrorBody(
    error_code="NOT_ACCEPTABLE",
    detail="GET /mcp opens the legacy MCP SSE transport, for `Accept: text/event-stream` only; "
    "MCP clients POST JSON-RPC messages to /mcp (streamable HTTP)",
    recoverable=True,
    suggestion="Point an MCP client at this URL (`openclaw mcp add kb --url <service>/mcp`); "
    "for the plain HTTP API see /docs.",
)
NO_SERVER_STREAM = ErrorBody(
    error_code="METHOD_NOT_ALLOWED",
    detail="this stateless MCP server sends no server-to-client stream: POST requests to /mcp",
    recoverable=True,
    suggestion="POST JSON-RPC messages to /mcp.",
)


def transport_security(settings: Settings) -> TransportSecuritySettings:
    if settings.api_key:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    extra = [str(host) for host in getattr(settings, "allowed_hosts", None) or []]
    hosts = [*LOOPBACK_HOSTS, *extra]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*hosts, *(f"{host}:*" for host in hosts)],
        allowed_origins=[
            f"{scheme}://{host}{port}"
            for scheme in ("http", "https")
            for host in hosts
            for port in ("", ":*")
        ],
    )


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}


class McpEndpoint:
    """`/mcp`: POST (and DELETE) to the SDK's stateless streamable HTTP app, GET as described above."""

    def __init__(self, mcp: MCPServer, settings: Settings) -> None:
        security = transport_security(settings)
        mcp.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,  # every request stands alone: nothing lost on a restart, any worker answers
            json_response=True,
            transport_security=security,
        )
        self._streamable = StreamableHTTPASGIApp(mcp.session_manager)
        self.sse = SseServerTransport(MESSAGES_PATH, security_settings=security)
        self._server = mcp._lowlevel_server  # what the SDK's own sse_app runs on each stream

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "GET":
            await self._streamable(scope, receive, send)
            return
        headers = _headers(scope)
        if "mcp-protocol-version" in headers or "mcp-session-id" in headers:
            # a streamable HTTP client after initialize asks for a stream; 405 is the spec's "none here"
            refusal = error_response(405, NO_SERVER_STREAM, headers={"Allow": "POST"})
        elif "text/event-stream" in headers.get("accept", "").lower():
            await self._legacy_sse(scope, receive, send)
            return
        else:
            refusal = error_response(406, NOT_AN_EVENT_STREAM)
        await refusal(scope, receive, send)

    async def _legacy_sse(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            async with self.sse.connect_sse(scope, receive, send) as (read, write):
                await self._server.run(read, write, self._server.create_initialization_options())
        except ValueError as exc:
            if str(exc) != "Request validation failed":
                raise
            # refused by the host check: the SDK has already answered 421 or 403


class _Asgi:
    """A bound method as a raw ASGI app (Starlette treats a bare method as a request/response endpoint)."""

    def __init__(self, app: Any) -> None:
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)


def mcp_routes(mcp: MCPServer, settings: Settings) -> list[Route]:
    """`/mcp` and `/mcp/messages` (exact paths: no redirect, and unknown paths keep our 404 envelope)."""
    endpoint = McpEndpoint(mcp, settings)
    return [
        Route(MCP_PATH, endpoint=endpoint),
        Route(MESSAGES_PATH, endpoint=_Asgi(endpoint.sse.handle_post_message), methods=["POST"]),
    ]
