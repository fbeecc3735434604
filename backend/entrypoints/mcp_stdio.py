"""`python -m backend mcp`: the MCP tools on stdin/stdout, for clients that spawn their servers (`openclaw mcp
add kb --command .venv/bin/python --arg -m --arg backend --arg mcp`).

When the service of the vault runs (found as the CLI finds it: the record in the vault's data dir, the one
service recorded under ./data when no vault is named, else HOST:PORT: infrastructure/running_service.py),
every JSON-RPC message is relayed to its `/mcp` (stateless streamable HTTP with JSON answers: one POST per
message, the answer is the reply), with API_KEY as the bearer key, so the running service stays the one owner
of the index. Otherwise the index is opened here, read-only: no indexing, no watcher, and no `remember` nor
`forget` (they write; they need the service). When neither works (several services and no vault named, an
index another process holds, an index that cannot be read), every request is answered with an error saying why
and what to do: a client shows that error (OpenClaw: "MCP error -32002: ..."), where a process that exits
shows only that the connection closed.

With VAULTS (several vaults) the service of every vault is one: it is found by the record in the first vault's
data dir, and served here it is every vault's index, read-only, as the service serves them (`vaults` to
search, `vault` for a note).

stdout carries the protocol only; logs go to stderr.
"""

from __future__ import annotations

import json
import logging
import sys
from typing import IO, Any

import anyio
import httpx

from backend.api.mcp_advice import mcp_suggestion
from backend.config import Settings
from backend.domain.errors import IndexNotReadyError, KnowledgeBridgeError
from backend.infrastructure.running_service import describe, find_running_service

log = logging.getLogger(__name__)

ACCEPT = "application/json, text/event-stream"


def _rpc_error(message_id: Any, code: int, text: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": text}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": message_id, "error": error}


def relay(base: str, settings: Settings, stdin: IO[str], stdout: IO[str]) -> None:
    """One POST to the service's /mcp per line; its JSON answer is the reply (notifications get 202)."""
    headers = {"accept": ACCEPT, "content-type": "application/json"}
    if settings.api_key:
        headers["authorization"] = f"Bearer {settings.api_key}"
    with httpx.Client(base_url=base, headers=headers, timeout=300) as client:
        for line in stdin:
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except json.JSONDecodeError as exc:
                reply: Any = _rpc_error(None, -32700, f"parse error: {exc}")
            else:
                reply = _forward(client, message)
            if reply is not None:
                stdout.write(json.dumps(reply) + "\n")
                stdout.flush()


def _forward(client: httpx.Client, message: Any) -> Any:
    message_id = message.get("id") if isinstance(message, dict) else None
    # a request has an id, a notification none; 0 is an id (OpenClaw's TypeScript SDK numbers requests from 0)
    is_request = message_id is not None
    try:
        response = client.post("/mcp", json=message)
    except httpx.HTTPError as exc:
        return (
            _rpc_error(message_id, -32000, f"Knowledge Bridge did not answer: {exc}") if is_request else None
        )
    if response.status_code == 202 or not response.content:
        return None  # a notification or a response from us: nothing comes back
    body = response.json()
    if response.is_success or "jsonrpc" in body:
        return body
    # refused before MCP (401 without the right API_KEY, 413, ...): the envelope as the error's data, its
    # advice for this client (which sends API_KEY as the header, and calls no route)
    if isinstance(body.get("suggestion"), str):
        advice = STDIO_ADVICE.get(body.get("error_code"), mcp_suggestion(body["suggestion"]))
        body = {**body, "suggestion": advice}
    return (
        _rpc_error(message_id, -32001, body.get("detail", response.reason_phrase), body)
        if is_request
        else None
    )


def serve_local(settings: Settings) -> None:
    """Every vault's index opened in this process, read-only, served over stdio."""
    from backend.api.mcp_server import build_mcp_server
    from backend.api.routes.health import VERSION
    from backend.bootstrap import Services, build_services
    from backend.vault_set import Library

    def open_read_only(own: Settings) -> Services:
        services = build_services(own)
        try:
            services.supervisor.open(start_indexing=False)
        except BaseException:
            services.close()
            raise
        return services

    # one vault: its failure stops here, as before; several: the vaults that open serve, as the service's do
    library = Library.open(settings, open_read_only)
    try:
        never = [n for n, s in library.each() if not s.index.complete and s.index.indexed_notes == 0]
        if never and len(never) == len(library.services):
            # read-only, nothing here will ever index it: "wait for the first indexing" would wait forever
            raise IndexNotReadyError(
                f"the vault {', '.join(never)} has not been indexed, and no service runs for it",
                suggestion=NO_SERVICE,
            )
        mcp = build_mcp_server(lambda: library, settings, version=VERSION, read_only=True)
        anyio.run(mcp.run_stdio_async)
    finally:
        library.close()


UNUSABLE = -32002  # a server error of JSON-RPC's reserved range: the server cannot serve at all

# what this client does about a refusal the service's envelope words for a client sending HTTP itself
STDIO_ADVICE = {
    "UNAUTHORIZED": "Set API_KEY, where `python -m backend mcp` runs (its environment or .env), to the key "
    "the service was started with.",
}

NO_SERVICE = (
    "Start the service for the vault (`make run` or `python -m backend serve`): it indexes the vault, and "
    "this command then relays to it. Over stdio alone the index is only read."
)


def refuse(reason: str, stdin: IO[str], stdout: IO[str]) -> None:
    """Answer every request with `reason` (notifications get nothing), until the client closes stdin."""
    for line in stdin:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(message, dict) and message.get("id") is not None and "method" in message:
            stdout.write(json.dumps(_rpc_error(message["id"], UNUSABLE, reason)) + "\n")
            stdout.flush()


def refuse_setting(problem: Exception) -> None:
    """A setting that keeps this process from serving (a VAULT_PATH that is no folder), in every reply."""
    reason = f"Knowledge Bridge: {problem}. What to do: fix it in the MCP server's command or environment."
    refuse(reason, sys.stdin, sys.stdout)


def run(settings: Settings) -> int:
    from backend.vault_set import vault_settings

    try:
        # one service serves every vault of VAULTS and records itself in each vault's data dir: the first's
        first = next(iter(vault_settings(settings).values()))
        found = find_running_service(first).service
        if found is not None:
            log.info("relaying MCP over stdio to %s", describe(found))
            relay(found.url, settings, sys.stdin, sys.stdout)
            return 0
        log.info(
            "no running service for the vault %s: serving MCP over stdio from %s, read-only",
            ", ".join(str(p) for p in settings.vaults.values()) or settings.vault_path,
            first.data_dir if not settings.vaults else "each vault's data dir",
        )
        serve_local(settings)
    except KnowledgeBridgeError as exc:
        reason = f"Knowledge Bridge ({exc.code}): {exc.detail}"
        reason += "" if reason.endswith((".", "!", "?")) else "."
        if exc.suggestion:
            reason += f" What to do: {mcp_suggestion(exc.suggestion)}"
        log.error("%s", reason)
        refuse(reason, sys.stdin, sys.stdout)
        return 1
    return 0
