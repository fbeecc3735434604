"""The MCP endpoint's HTTP side: both transports an MCP client may speak at `/mcp`, in the same app.

- `POST /mcp`: streamable HTTP (stateless, JSON responses), what current clients send.
- `GET /mcp` with `Accept: text/event-stream` and no `Mcp-Protocol-Version`/`Mcp-Session-Id` header: the
  legacy HTTP+SSE transport, OpenClaw's default (`openclaw mcp add NAME --url .../mcp` without
  `--transport`, through the TypeScript SDK's `SSEClientTransport`). The stream opens with an `endpoint`
  event naming `/mcp/messages?session_id=...`, where the client POSTs its messages; the answers come back
  on the stream.
- Any other `GET /mcp` (a browser, `curl`, a streamable HTTP client asking for a server-to-client stream a
  stateless server never sends) answers `405` at once with our error envelope: it never hangs.

Host and Origin checks (DNS rebinding) are not the SDK's here: `guards.HostGuardMiddleware` wraps every route,
`/mcp` included, so one rule decides for the whole service (with `API_KEY` the key; without it loopback names,
`ALLOWED_HOSTS` and same-site pages). The SDK's own list would be a second, narrower copy of that rule that
refused names the guard lets in (`127.0.0.2`, `*.localhost`, `ALLOWED_HOSTS=*`).
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

MCP_PATH = "/mcp"
MESSAGES_PATH = "/mcp/messages"  # where a legacy SSE client POSTs (named by the stream's `endpoint` event)
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


# the service's HostGuardMiddleware checks Host and Origin for every route (see the module's docstring)
NO_SDK_HOST_CHECK = TransportSecuritySettings(enable_dns_rebinding_protection=False)


def _headers(scope: Scope) -> dict[str, str]:
    return {name.decode("latin-1").lower(): value.decode("latin-1") for name, value in scope["headers"]}


class McpEndpoint:
    """`/mcp`: POST (and DELETE) to the SDK's stateless streamable HTTP app, GET as described above."""

    def __init__(self, mcp: MCPServer) -> None:
        mcp.streamable_http_app(
            streamable_http_path=MCP_PATH,
            stateless_http=True,  # every request stands alone: nothing lost on a restart, any worker answers
            json_response=True,
            transport_security=NO_SDK_HOST_CHECK,
        )
        self._streamable = StreamableHTTPASGIApp(mcp.session_manager)
        self.sse = SseServerTransport(MESSAGES_PATH, security_settings=NO_SDK_HOST_CHECK)
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


def mcp_routes(mcp: MCPServer) -> list[Route]:
    """`/mcp` and `/mcp/messages` (exact paths: no redirect, and unknown paths keep our 404 envelope)."""
    endpoint = McpEndpoint(mcp)
    return [
        Route(MCP_PATH, endpoint=endpoint),
        Route(MESSAGES_PATH, endpoint=_Asgi(endpoint.sse.handle_post_message), methods=["POST"]),
    ]
