"""`python -m backend mcp`, spawned by the MCP SDK's own stdio client as OpenClaw spawns a stdio server: with
the service running it relays to it (API key included, `remember` there); with no service it opens the index
itself, read-only."""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from backend.bootstrap import build_services
from backend.config import EXAMPLE_VAULT, REPO_ROOT, load_settings
from backend.entrypoints.app import create_app
from backend.entrypoints.mcp_stdio import relay
from scripts.measure.service import ServiceProcess, free_port
from tests import live_server

KEY = "stdio-test-key"
READ_TOOLS = {"search", "get_note", "note_links", "index_status", "build_context", "list_memories"}


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A temp copy of the example vault, indexed by keyword (no embedder), and its data folder."""
    vault = tmp_path_factory.mktemp("stdio-vault") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    data = tmp_path_factory.mktemp("stdio-data")
    services = build_services(load_settings(vault_path=vault, data_dir=data, embedding_provider="none"))
    try:
        services.supervisor.open(start_indexing=False)
        services.indexer.sync()
    finally:
        services.close()
    return vault, data


def spawn(vault: Path, data: Path, port: int, work: Any) -> Any:
    environment = {
        **os.environ,
        "VAULT_PATH": str(vault),
        "DATA_DIR": str(data),
        "EMBEDDING_PROVIDER": "none",
        "PORT": str(port),
        "API_KEY": KEY,
        "WATCH": "false",
    }
    return in_stdio_session(environment, work)


def in_stdio_session(environment: dict[str, str], work: Any) -> Any:
    """`work(session)` in a session with `python -m backend mcp` spawned with this environment (the whole of
    it), as OpenClaw spawns a stdio server."""
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "backend", "mcp"], env=environment, cwd=str(REPO_ROOT)
    )

    async def main() -> Any:
        async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            return await work(session)

    return anyio.run(main)


async def search_and_list(session: ClientSession) -> tuple[set[str], dict[str, Any], Any]:
    tools = {tool.name for tool in (await session.list_tools()).tools}
    found = await session.call_tool("search", {"query": "how much do I owe Sreenivas?", "top_k": 1})
    missing = await session.call_tool("get_note", {"path": "No such note.md"})
    return tools, found.structured_content or {}, missing


def test_with_no_service_it_serves_the_index_read_only(indexed: tuple[Path, Path]) -> None:
    tools, found, missing = spawn(*indexed, free_port(), search_and_list)
    assert tools == READ_TOOLS  # remember and forget write: they need the service
    assert found["results"][0]["note_path"] == "Finance/Money with Sreenivas.md"
    assert missing.is_error is True
    assert json.loads(missing.content[0].text)["error_code"] == "NOTE_NOT_FOUND"


def test_with_the_service_running_it_relays_to_it(indexed: tuple[Path, Path]) -> None:
    vault, data = indexed
    settings = load_settings(
        vault_path=vault, data_dir=data, embedding_provider="none", watch=False, api_key=KEY
    )

    async def work(session: ClientSession) -> Any:
        listed = await search_and_list(session)
        fact = {
            "key": "balance",
            "value": "I owe Sreenivas €79.50.",
            "source": "Finance/Money with Sreenivas.md",
        }
        remembered = await session.call_tool("remember", fact)
        return listed, remembered

    with live_server.serving(create_app(settings)) as base:
        port = int(base.rsplit(":", 1)[1])
        (tools, found, missing), remembered = spawn(vault, data, port, work)
    assert tools == READ_TOOLS | {"remember", "forget"}
    assert found["results"][0]["note_path"] == "Finance/Money with Sreenivas.md"
    assert json.loads(missing.content[0].text)["error_code"] == "NOTE_NOT_FOUND"
    assert remembered.structured_content["created"] is True


def test_it_finds_the_service_of_its_vault_whatever_port(indexed: tuple[Path, Path]) -> None:
    """PORT says nothing (OpenClaw spawns the server with the settings it was given): the record the service
    wrote in the vault's data dir says where it listens."""
    vault, data = indexed
    env = {"EMBEDDING_PROVIDER": "none", "WATCH": "false", "API_KEY": KEY}

    async def tools(session: ClientSession) -> set[str]:
        return {tool.name for tool in (await session.list_tools()).tools}

    with ServiceProcess(vault, data, env=env) as service:
        service.wait_ready()
        # relayed: remember and forget write through the service
        assert spawn(vault, data, free_port(), tools) == READ_TOOLS | {"remember", "forget"}


@pytest.fixture
def wrong_key_service(indexed: tuple[Path, Path]) -> Iterator[int]:
    vault, data = indexed
    settings = load_settings(
        vault_path=vault, data_dir=data, embedding_provider="none", watch=False, api_key="another-key"
    )
    with live_server.serving(create_app(settings)) as base:
        yield int(base.rsplit(":", 1)[1])


def test_a_wrong_key_is_an_error_naming_it(indexed: tuple[Path, Path], wrong_key_service: int) -> None:
    async def work(session: ClientSession) -> Any:
        return await session.list_tools()

    with pytest.raises(ExceptionGroup) as refused:  # initialize itself is refused, with our 401 envelope
        spawn(*indexed, wrong_key_service, work)
    assert refused.group_contains(MCPError, match="wrong API key", depth=2)
    error = refused.value.exceptions[0].exceptions[0]
    assert error.error.data["error_code"] == "UNAUTHORIZED"


def relayed(base: str, api_key: str | None, *messages: dict[str, Any]) -> list[dict[str, Any]]:
    """What `python -m backend mcp` writes back when it relays `messages` (one a line) to `base`."""
    settings = load_settings(embedding_provider="none", api_key=api_key)
    stdin = io.StringIO("".join(json.dumps(message) + "\n" for message in messages))
    stdout = io.StringIO()
    relay(base, settings, stdin, stdout)
    return [json.loads(line) for line in stdout.getvalue().splitlines()]


# OpenClaw's client (the TypeScript MCP SDK) numbers its requests from 0: its `initialize` is request 0
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "openclaw", "version": "2026.9.6"},
    },
}


def test_request_zero_refused_by_the_service_gets_its_error(wrong_key_service: int) -> None:
    """Otherwise OpenClaw waits out its 5 s initialize timeout instead of reading "wrong API key"."""
    [reply] = relayed(f"http://127.0.0.1:{wrong_key_service}", KEY, INITIALIZE)
    assert reply["id"] == 0
    assert reply["error"]["data"]["error_code"] == "UNAUTHORIZED"
    assert "wrong API key" in reply["error"]["message"]
    # what this client can do: set API_KEY where it runs (it said to send an Authorization header)
    assert reply["error"]["data"]["suggestion"].startswith("Set API_KEY, where `python -m backend mcp` runs")


def test_request_zero_to_a_service_gone_gets_an_error() -> None:
    [reply] = relayed(f"http://127.0.0.1:{free_port()}", KEY, INITIALIZE)
    assert reply["id"] == 0
    assert "did not answer" in reply["error"]["message"]


def test_notifications_get_no_reply_even_when_refused(wrong_key_service: int) -> None:
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert relayed(f"http://127.0.0.1:{wrong_key_service}", KEY, initialized) == []


def test_an_index_it_cannot_open_is_an_error_the_client_shows(indexed: tuple[Path, Path]) -> None:
    """No service recorded for the vault, and another process holds its index: the client's `initialize`
    gets the reason and what to do (OpenClaw shows "MCP error -32002: ..."), not a closed connection."""
    vault, data = indexed
    holder = build_services(load_settings(vault_path=vault, data_dir=data, embedding_provider="none"))
    holder.supervisor.open(start_indexing=False)  # this process holds the embedded index; it records nothing
    try:
        with pytest.raises(BaseException) as raised:  # noqa: PT011 - anyio wraps it in an exception group
            spawn(vault, data, free_port(), lambda session: None)
    finally:
        holder.close()
    (refused,) = [error for error in _leaves(raised.value) if isinstance(error, MCPError)]
    assert refused.error.code == -32002
    assert "INDEX_UNAVAILABLE" in refused.error.message
    assert "in use by another process" in refused.error.message
    assert "What to do:" in refused.error.message


def _refused(vault: Path, data: Path) -> MCPError:
    """The error the client's `initialize` gets from `python -m backend mcp` over this vault and data dir."""
    with pytest.raises(BaseException) as raised:  # noqa: PT011 - anyio wraps it in an exception group
        spawn(vault, data, free_port(), lambda session: None)
    (refused,) = [error for error in _leaves(raised.value) if isinstance(error, MCPError)]
    assert refused.error.code == -32002
    return refused


def test_a_vault_path_that_is_no_folder_is_an_error_the_client_shows(tmp_path: Path) -> None:
    # not a closed connection with the reason on stderr, which a client spawning us never shows
    refused = _refused(tmp_path / "no such vault", tmp_path / "data")
    assert "VAULT_PATH" in refused.error.message
    assert "What to do:" in refused.error.message


def test_a_vault_never_indexed_without_a_service_says_to_start_it(tmp_path: Path) -> None:
    # read-only over stdio nothing will ever index it: "wait for the first indexing" would wait forever
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nA note.\n")
    refused = _refused(vault, tmp_path / "data")
    assert "INDEX_NOT_READY" in refused.error.message
    assert "Start the service" in refused.error.message


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]
