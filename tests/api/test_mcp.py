"""The MCP endpoint in a real session: uvicorn serves the app on a free loopback port, and the official SDK's
own clients (streamable HTTP, and the legacy SSE transport OpenClaw uses by default) list the tools with their
safety annotations, call each one, get our error envelope back as tool errors, are refused without the API
key, and never see a secret of the vault. A plain GET never hangs; the Host check follows API_KEY."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp.client.session import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from tests import live_server
from tests.secret_vault import MEMORY_FACT, NOTES, QUERIES, leaks, write_secret_vault

WRITE_TOOLS = {"remember", "forget"}
TOOLS = {"search", "get_note", "note_links", "index_status", "build_context", "list_memories", *WRITE_TOOLS}
KEY = "mcp-test-key"
ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}


@contextmanager
def serving(vault: Path, data: Path, **overrides: object) -> Iterator[str]:
    """The app under uvicorn; yields its base URL once the first indexing is done."""
    settings = load_settings(
        vault_path=vault, data_dir=data, embedding_provider="none", watch=False, **overrides
    )
    headers = {"Authorization": f"Bearer {KEY}"} if overrides.get("api_key") else {}
    with live_server.serving(create_app(settings)) as base:
        live_server.wait_until(lambda: live_server.indexed(base, headers), "the first indexing to finish")
        yield base


def in_session(base: str, work: Callable[[ClientSession], Awaitable[Any]], *, key: str | None = None) -> Any:
    """Run `work` in one initialised MCP session against the service (streamable HTTP)."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=60) as http,
            streamable_http_client(f"{base}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return anyio.run(main)


def in_sse_session(
    base: str, work: Callable[[ClientSession], Awaitable[Any]], *, key: str | None = None
) -> Any:
    """The same over the legacy HTTP+SSE transport: GET /mcp opens the stream, messages go to its endpoint."""

    async def main() -> Any:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        async with (
            sse_client(f"{base}/mcp", headers=headers, timeout=30) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            return await work(session)

    return anyio.run(main)


def payload(result: Any) -> dict:
    """A tool result's JSON: the structured content, which the text content repeats."""
    assert result.structured_content is not None
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(EXAMPLE_VAULT, tmp_path_factory.mktemp("mcp-example")) as base:
        yield base


@pytest.fixture(scope="module")
def secret(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    vault = write_secret_vault(tmp_path_factory.mktemp("mcp-secrets"))
    with serving(vault, tmp_path_factory.mktemp("mcp-secret-data"), api_key=KEY) as base:
        yield base


def test_the_tools_are_listed_with_descriptions_and_schemas(example: str) -> None:
    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in in_session(example, work)}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert len(tool.description or "") > 40
        assert "\n " not in (tool.description or "")  # read by a model: no indentation from our source
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert "A question or keywords" in search["properties"]["query"]["description"]
    # `vault`: several vaults (issue 46); a service of one needs it never
    assert set(tools["get_note"].input_schema["properties"]) == {"path", "start_line", "end_line", "vault"}


_BOUNDS = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "maxItems"}


def _bounds(schema: Any) -> set[tuple[str, Any]]:
    """Every bound a JSON schema sets, wherever it sits (an Optional's anyOf, a list's items)."""
    if isinstance(schema, list):
        return set().union(*(_bounds(item) for item in schema))
    if not isinstance(schema, dict):
        return set()
    found = {(key, value) for key, value in schema.items() if key in _BOUNDS}
    return found.union(*(_bounds(value) for key, value in schema.items() if key not in _BOUNDS))


def test_the_tools_say_the_bounds_the_routes_take(example: str) -> None:
    """An agent reading a tool's schema learns what the route would refuse (top_k 1-50, max_chars
    200-32000) before it calls, not from a VALIDATION_ERROR after."""

    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool.input_schema["properties"] for tool in in_session(example, work)}
    routes = httpx.get(f"{example}/openapi.json", timeout=30).json()["components"]["schemas"]
    compared = 0
    for tool, model in (("search", "SearchRequest"), ("build_context", "ContextRequest")):
        fields = routes[model]["properties"]
        for name, schema in tools[tool].items():
            if name in fields and name != "messages":  # the messages' own schema is a $ref on both sides
                assert _bounds(schema) == _bounds(fields[name]), (tool, name)
                compared += bool(_bounds(schema))
    assert compared >= 8  # top_k, max_chars, max_chunks, query, vaults, threshold ... each bounded
    assert ("minimum", 1) in _bounds(tools["get_note"]["start_line"])
    assert ("maximum", 500) in _bounds(tools["list_memories"]["limit"])


def test_every_tool_answers_in_a_real_session(example: str) -> None:
    async def work(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["status"] = payload(await session.call_tool("index_status", {}))
        found = payload(
            await session.call_tool("search", {"query": "how much do I owe Sreenivas?", "top_k": 3})
        )
        out["search"] = found
        hit = found["results"][0]
        out["hit"] = hit
        window = {"path": hit["note_path"], "start_line": hit["start_line"], "end_line": hit["end_line"]}
        out["note"] = payload(await session.call_tool("get_note", window))
        out["links"] = payload(
            await session.call_tool("note_links", {"path": "Projects/Architecture overview.md"})
        )
        out["context"] = payload(
            await session.call_tool("build_context", {"query": "knee physio exercises", "max_chars": 900})
        )
        fact = {"key": "sreenivas-balance", "value": "I owe Sreenivas €79.50.", "source": hit["note_path"]}
        out["remember"] = payload(await session.call_tool("remember", fact))
        out["recall"] = payload(
            await session.call_tool("search", {"query": "owe Sreenivas", "include_memory": True, "top_k": 1})
        )
        out["kept"] = payload(await session.call_tool("list_memories", {}))
        out["forget"] = payload(await session.call_tool("forget", {"key": "sreenivas-balance"}))
        out["after"] = payload(await session.call_tool("list_memories", {}))
        out["again"] = await session.call_tool("forget", {"key": "sreenivas-balance"})
        return out

    out = in_session(example, work)
    assert out["status"]["indexed_notes"] >= 30
    assert out["search"]["results"]
    assert out["hit"]["note_path"] == "Finance/Money with Sreenivas.md"
    assert out["hit"]["content"] in out["note"]["content"]
    assert (out["note"]["start_line"], out["note"]["end_line"]) == (
        out["hit"]["start_line"],
        out["hit"]["end_line"],
    )
    assert out["links"]["outlinks"]
    assert 0 < out["context"]["chars"] <= 900
    assert out["context"]["context"].startswith("[Health/Knee physio plan.md:")
    assert out["remember"]["created"] is True
    assert [m["key"] for m in out["recall"]["memories"]] == ["sreenivas-balance"]
    assert [(f["key"], f["value"]) for f in out["kept"]["facts"]] == [
        ("sreenivas-balance", "I owe Sreenivas €79.50.")
    ]
    assert out["forget"] == {"key": "sreenivas-balance", "deleted": True}
    assert out["after"]["facts"] == []
    assert out["again"].is_error is True
    again = json.loads(out["again"].content[0].text)
    assert again["error_code"] == "MEMORY_NOT_FOUND"
    assert "list_memories" in again["suggestion"]  # a tool it can call, not GET /memory


@pytest.mark.parametrize(
    ("tool", "arguments", "code"),
    [
        ("get_note", {"path": "No such note.md"}, "NOTE_NOT_FOUND"),
        ("get_note", {"path": "../../etc/passwd"}, "SECURITY_VIOLATION"),
        ("get_note", {"path": "Home.md", "start_line": 9999}, "VALIDATION_ERROR"),
        ("note_links", {"path": "%2e%2e/%2e%2e/etc/passwd"}, "SECURITY_VIOLATION"),
        ("search", {"query": "milk", "top_k": 500}, "VALIDATION_ERROR"),
        ("search", {"query": "milk", "paths": ["/etc/passwd"]}, "SECURITY_VIOLATION"),
        ("build_context", {"max_chars": 4000}, "VALIDATION_ERROR"),
        ("remember", {"key": "k", "value": "v", "source": "Missing.md"}, "NOTE_NOT_FOUND"),
        ("remember", {"key": "a/b", "value": "v", "source": "Home.md"}, "VALIDATION_ERROR"),
        ("search", {"query": "milk", "top_k": "lots"}, "VALIDATION_ERROR"),  # refused by the SDK itself
        ("get_note", {}, "VALIDATION_ERROR"),
        # what the route refuses in a JSON body, the tool refuses too (the SDK took them silently)
        ("search", {"query": "milk", "top_k": "3"}, "VALIDATION_ERROR"),
        ("search", {"query": "milk", "include_related": 1}, "VALIDATION_ERROR"),
        ("search", {"query": "milk", "threshold": "0.5"}, "VALIDATION_ERROR"),
        ("search", {"query": "milk", "date_from": 1767225600}, "VALIDATION_ERROR"),  # a Unix time
        ("build_context", {"query": "milk", "min_confidence": "0.5"}, "VALIDATION_ERROR"),
        ("get_note", {"path": "Home.md", "start_line": 0}, "VALIDATION_ERROR"),
        ("get_note", {"path": "Home.md", "end_line": "5"}, "VALIDATION_ERROR"),
        ("list_memories", {"limit": "5"}, "VALIDATION_ERROR"),
    ],
)
def test_failures_are_tool_errors_with_our_error_code(
    example: str, tool: str, arguments: dict, code: str
) -> None:
    async def work(session: ClientSession) -> Any:
        return await session.call_tool(tool, arguments)

    result = in_session(example, work)
    assert result.is_error is True
    body = json.loads(result.content[0].text)
    assert body["detail"]
    assert set(body) == ERROR_KEYS
    assert body["error_code"] == code
    assert result.structured_content == body


def test_a_failures_suggestion_names_what_an_mcp_client_can_do_and_rest_keeps_the_route(example: str) -> None:
    """The envelope's suggestion named REST routes and /docs, which an MCP client cannot call or read; each
    route is said as a tool or the command to type (backend/api/mcp_advice.py), REST's answer unchanged."""

    async def work(session: ClientSession) -> Any:
        return await session.call_tool("get_note", {"path": "Home.md", "start_line": 9999})

    said = json.loads(in_session(example, work).content[0].text)
    assert said["error_code"] == "VALIDATION_ERROR"
    assert "/docs" not in said["suggestion"]
    assert "tools/list" in said["suggestion"]
    rest = live_server.LOOPBACK.get(f"{example}/note/Home.md", params={"start_line": 9999}).json()
    assert rest["error_code"] == "VALIDATION_ERROR"
    assert rest["suggestion"] == "Fix the request fields named in detail; the schema is at /docs."


def test_a_tool_not_served_is_said_so(example: str) -> None:
    async def work(session: ClientSession) -> Any:
        return await session.call_tool("forget_everything", {"key": "x"})

    result = in_session(example, work)
    assert result.is_error is True
    body = json.loads(result.content[0].text)
    assert set(body) == ERROR_KEYS
    assert body["detail"] == "no tool 'forget_everything' here"  # not "invalid tool arguments"
    assert "tools/list" in body["suggestion"]


def test_search_takes_the_routes_threshold_and_chunks_per_note(example: str) -> None:
    asked = {"query": "database migration decision", "top_k": 10, "threshold": 0.3, "max_chunks_per_note": 1}

    async def work(session: ClientSession) -> Any:
        return payload(await session.call_tool("search", asked))

    results = in_session(example, work)["results"]
    rest = httpx.post(f"{example}/search", json=asked, timeout=60).json()["results"]
    assert [r["chunk_id"] for r in results] == [r["chunk_id"] for r in rest]  # as the route answers
    assert results
    assert all(r["score"] >= 0.3 for r in results)
    paths = [r["note_path"] for r in results]
    assert len(paths) == len(set(paths))  # one chunk a note


def test_search_groups_by_note_and_explains_as_the_route_does(example: str) -> None:
    why_not = "Projects/Database migration.md"
    asked = {"query": "knee physio", "top_k": 3, "group_by": "note", "why_not": why_not}

    async def work(session: ClientSession) -> Any:
        return payload(await session.call_tool("search", asked))

    answer = in_session(example, work)
    rest = httpx.post(f"{example}/search", json=asked, timeout=60).json()
    assert [g["note_path"] for g in answer["groups"]] == [g["note_path"] for g in rest["groups"]]
    assert answer["groups"]
    why = answer["explain"]["why_not"]
    assert why["note_path"] == why_not
    assert why["reason"] == rest["explain"]["why_not"]["reason"]


def test_an_argument_a_tool_does_not_take_is_refused_naming_those_it_takes(example: str) -> None:
    # REST refuses an unknown field; a tool must not drop a misspelt `topk` in silence and answer 5 results
    async def work(session: ClientSession) -> Any:
        return await session.call_tool("search", {"query": "milk", "topk": 1})

    result = in_session(example, work)
    assert result.is_error is True
    body = json.loads(result.content[0].text)
    assert set(body) == ERROR_KEYS
    assert body["error_code"] == "VALIDATION_ERROR"
    assert "'topk'" in body["detail"]
    assert "top_k" in body["suggestion"]


def test_the_api_key_protects_mcp(secret: str) -> None:
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    refused = httpx.post(f"{secret}/mcp", json=request, headers=headers)
    assert refused.status_code == 401
    assert set(refused.json()) == ERROR_KEYS
    assert refused.json()["error_code"] == "UNAUTHORIZED"
    wrong = httpx.post(f"{secret}/mcp", json=request, headers={**headers, "Authorization": "Bearer nope"})
    assert wrong.status_code == 401

    async def work(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    assert {t.name for t in in_session(secret, work, key=KEY)} == TOOLS
    with pytest.raises(ExceptionGroup) as refused_session:  # the SDK raises from its task groups
        in_session(secret, work)
    assert refused_session.group_contains(MCPError)


def test_no_secret_leaves_through_mcp(secret: str) -> None:
    async def work(session: ClientSession) -> list[tuple[str, str]]:
        seen: list[tuple[str, str]] = []

        async def call(name: str, arguments: dict) -> None:
            result = await session.call_tool(name, arguments)
            text = " ".join(block.text for block in result.content if hasattr(block, "text"))
            seen.append((f"{name} {arguments}", text + json.dumps(result.structured_content)))

        await call("remember", MEMORY_FACT)
        for query in QUERIES:
            await call("search", {"query": query, "top_k": 50, "include_memory": True})
            await call("build_context", {"query": query, "max_chars": 32_000, "include_memory": True})
        for path, text in NOTES.items():
            await call("get_note", {"path": path})
            await call("note_links", {"path": path})
            for start in range(1, len(text.splitlines()) + 1, 3):
                await call("get_note", {"path": path, "start_line": start, "end_line": start + 2})
        return seen

    seen = in_session(secret, work, key=KEY)
    assert len(seen) > 100
    for request, text in seen:
        assert leaks(text) == [], request
    # the notes holding the secrets were found and read, redacted
    assert sum(text.count("[REDACTED:") for _, text in seen) > 200
    assert any("Infra/Servers.md" in text for request, text in seen if request.startswith("search"))


def test_the_legacy_sse_transport_serves_the_same_tools(example: str) -> None:
    """OpenClaw's default transport (`openclaw mcp add NAME --url .../mcp`, no --transport flag)."""

    async def work(session: ClientSession) -> tuple[set[str], Any, Any]:
        tools = {tool.name for tool in (await session.list_tools()).tools}
        found = await session.call_tool("search", {"query": "how much do I owe Sreenivas?", "top_k": 1})
        missing = await session.call_tool("get_note", {"path": "No such note.md"})
        return tools, found, missing

    tools, found, missing = in_sse_session(example, work)
    assert tools == TOOLS
    assert payload(found)["results"][0]["note_path"] == "Finance/Money with Sreenivas.md"
    assert missing.is_error is True
    assert json.loads(missing.content[0].text)["error_code"] == "NOTE_NOT_FOUND"


def test_every_tool_says_what_it_does_to_the_world_and_only_tools_are_advertised(example: str) -> None:
    async def work(session: ClientSession) -> tuple[Any, list[Any]]:
        return session.initialize_result, (await session.list_tools()).tools

    initialized, tools = in_session(example, work)
    capabilities = initialized.capabilities
    assert capabilities.tools is not None
    assert capabilities.resources is None  # nothing to list: OpenClaw would make tools of them
    assert capabilities.prompts is None
    for tool in tools:
        annotations = tool.annotations
        assert tool.title, tool.name
        assert annotations is not None, tool.name
        assert annotations.open_world_hint is False
        assert annotations.read_only_hint is (tool.name not in WRITE_TOOLS), tool.name
        # remember replaces the value of a key already kept, forget drops one: the old value is lost
        assert annotations.destructive_hint is (tool.name in WRITE_TOOLS), tool.name
        assert annotations.idempotent_hint is True


def test_a_get_of_mcp_answers_at_once(example: str) -> None:
    plain = httpx.get(f"{example}/mcp", timeout=5)  # a browser or `curl`: never a stream that sends nothing
    assert plain.status_code == 406
    assert set(plain.json()) == ERROR_KEYS
    assert "text/event-stream" in plain.json()["detail"]
    streamable = httpx.get(
        f"{example}/mcp",
        headers={"accept": "text/event-stream", "mcp-protocol-version": "2025-06-18"},
        timeout=5,
    )
    assert streamable.status_code == 405  # a stateless server has no server-to-client stream to offer
    assert streamable.headers["allow"] == "POST"
    with httpx.stream("GET", f"{example}/mcp", headers={"accept": "text/event-stream"}, timeout=5) as stream:
        assert stream.status_code == 200
        lines = stream.iter_lines()
        assert next(lines) == "event: endpoint"
        assert next(lines).startswith("data: /mcp/messages?session_id=")


@pytest.mark.parametrize("path", ["/mcp", "/mcp/messages"])
def test_a_non_loopback_host_is_refused_without_a_key(example: str, path: str) -> None:
    """DNS rebinding: with no key, only loopback names (and ALLOWED_HOSTS) may reach MCP; the service's host
    guard answers before the MCP SDK's own check, in our error shape."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"accept": "application/json, text/event-stream", "host": "backend:8000"}
    answer = httpx.post(f"{example}{path}", json=request, headers=headers)
    assert answer.status_code == 403
    assert answer.json()["error_code"] == "FOREIGN_REQUEST"


def test_with_a_key_a_service_name_host_reaches_mcp(secret: str) -> None:
    """An agent container on the Compose network calls http://backend:8000/mcp with the key."""
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {
        "accept": "application/json, text/event-stream",
        "host": "backend:8000",
        "Authorization": f"Bearer {KEY}",
    }
    answer = httpx.post(f"{secret}/mcp", json=request, headers=headers)
    assert answer.status_code == 200
    assert {tool["name"] for tool in answer.json()["result"]["tools"]} == TOOLS
    with httpx.stream("GET", f"{secret}/mcp", headers={**headers, "accept": "text/event-stream"}) as stream:
        assert stream.status_code == 200
        assert next(stream.iter_lines()) == "event: endpoint"


def test_search_and_build_context_carry_the_memory_suggestion_which_remember_keeps(example: str) -> None:
    question = "how much money do I owe Sreenivas now?"

    async def work(session: ClientSession) -> dict[str, Any]:
        out: dict[str, Any] = {}
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        out["schema"] = tools["search"].output_schema
        out["search"] = payload(await session.call_tool("search", {"query": question}))
        out["context"] = payload(await session.call_tool("build_context", {"query": question}))
        out["chat"] = payload(await session.call_tool("search", {"query": "thanks!"}))
        offered = out["search"]["memory_suggestion"]
        if offered is not None:
            fact = {k: offered[k] for k in ("key", "value", "source")}
            out["remember"] = payload(await session.call_tool("remember", fact))
            out["again"] = payload(await session.call_tool("search", {"query": question}))
        return out

    out = in_session(example, work)
    assert "memory_suggestion" in out["schema"]["properties"]
    offered = out["search"]["memory_suggestion"]
    assert offered is not None
    assert offered["source"] == "Finance/Money with Sreenivas.md"
    assert offered["kind"] == "money_owed"
    assert "€79.50" in offered["value"]
    assert out["context"]["memory_suggestion"] == offered
    assert out["chat"]["memory_suggestion"] is None
    assert out["remember"]["fact"]["value"] == offered["value"]
    assert out["again"]["memory_suggestion"] is None


def test_build_context_takes_the_recalls_floor_its_quote_and_what_was_given(example: str) -> None:
    # what OpenClaw's recall asks of /context, asked of the MCP tool: the same block
    asked = {"query": "how much money do I owe Sreenivas now?", "max_chars": 1500, "max_chunks": 3}
    recall = {**asked, "min_confidence": 0.4, "quoted": True}

    async def work(session: ClientSession) -> dict[str, Any]:
        first = payload(await session.call_tool("build_context", recall))
        given = [source["attribution"] for source in first["sources"]]
        again = payload(await session.call_tool("build_context", {**recall, "exclude": given}))
        chat = payload(await session.call_tool("build_context", {**recall, "query": "thanks, that's all!"}))
        return {"first": first, "again": again, "chat": chat}

    out = in_session(example, work)
    rest = httpx.post(f"{example}/context", json=recall, timeout=60).json()
    assert out["first"]["context"].startswith("<vault-notes-")  # quoted, as asked
    assert [s["attribution"] for s in out["first"]["sources"]] == [s["attribution"] for s in rest["sources"]]
    assert out["first"]["sources"]
    assert not {s["attribution"] for s in out["again"]["sources"]} & {
        s["attribution"] for s in out["first"]["sources"]
    }
    assert out["chat"]["sources"] == []  # the floor: nothing of the notes answers a thanks
