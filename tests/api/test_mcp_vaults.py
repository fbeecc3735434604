"""Several vaults (issue 46) through MCP, with the official SDK's own clients: over streamable HTTP against
the service, and over stdio (`python -m backend mcp` with VAULTS) both relaying to it and serving the
indexes itself, read-only. Two small vaults of their own, the same path in both with different text."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.entrypoints.app import create_app
from backend.vault_set import vault_settings
from scripts.measure.service import free_port
from tests import live_server
from tests.api.test_mcp import ERROR_KEYS, in_session, payload
from tests.api.test_mcp_stdio import in_stdio_session
from tests.test_cli_vaults import PERSONAL, WORK
from tests.two_vaults import merged_as_documented
from tests.vault_files import write_notes


@pytest.fixture(scope="module")
def two_vaults(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("mcp-vaults")
    work, personal = write_notes(root / "Work", WORK), write_notes(root / "Personal", PERSONAL)
    return {"VAULTS": f"work={work},personal={personal}", "DATA_DIR": str(root / "data")}


def _settings(env: dict[str, str]) -> Any:
    return load_settings(
        vaults=env["VAULTS"], data_dir=Path(env["DATA_DIR"]), embedding_provider="none", watch=False
    )


@pytest.fixture(scope="module")
def served(two_vaults: dict[str, str]) -> Iterator[str]:
    """The service of both vaults under uvicorn, once both have indexed."""
    with live_server.serving_vaults(create_app(_settings(two_vaults))) as base:
        yield base


async def _tour(session: ClientSession) -> dict[str, Any]:
    """What an agent does with two vaults: search all and one, read the same path in each, follow links,
    ask a vault that is not there, ask for a path two vaults hold without naming one, the status."""

    async def call(name: str, arguments: dict[str, Any]) -> Any:
        return await session.call_tool(name, arguments)

    out: dict[str, Any] = {}
    out["tools"] = {t.name: t.input_schema for t in (await session.list_tools()).tools}
    out["all"] = payload(await call("search", {"query": "budget", "top_k": 10}))
    out["work"] = payload(await call("search", {"query": "budget", "top_k": 10, "vaults": ["work"]}))
    out["personal"] = payload(await call("search", {"query": "budget", "top_k": 10, "vaults": ["personal"]}))
    out["context"] = payload(await call("build_context", {"query": "inbox", "vaults": ["personal"]}))
    out["inbox_work"] = payload(await call("get_note", {"path": "Inbox.md", "vault": "work"}))
    out["inbox_personal"] = payload(await call("get_note", {"path": "Inbox.md", "vault": "personal"}))
    out["garden"] = payload(await call("get_note", {"path": "Garden.md"}))  # one vault holds it
    # as a block of several vaults cites it
    out["cited"] = payload(await call("get_note", {"path": "vault:personal/Inbox.md"}))
    out["links"] = payload(await call("note_links", {"path": "Inbox.md", "vault": "personal"}))
    out["status"] = payload(await call("index_status", {}))
    out["unknown"] = await call("search", {"query": "budget", "vaults": ["holiday"]})
    out["unknown_note"] = await call("get_note", {"path": "Inbox.md", "vault": "holiday"})
    out["ambiguous"] = await call("get_note", {"path": "Inbox.md"})
    return out


def _check_tour(out: dict[str, Any]) -> None:
    assert "vaults" in out["tools"]["search"]["properties"]
    assert "vaults" in out["tools"]["build_context"]["properties"]
    assert "vault" in out["tools"]["get_note"]["properties"]
    across = out["all"]["results"]
    assert {r["vault"] for r in across} == {"work", "personal"}  # each result names its vault
    # merged as /search merges (each vault's order kept, weighed by its surest), not sorted by confidence
    alone = [out["work"]["results"], out["personal"]["results"]]
    assert [r["chunk_id"] for r in across] == merged_as_documented(alone, 10)
    assert {r["vault"] for r in out["work"]["results"]} == {"work"}
    assert {s["vault"] for s in out["context"]["sources"]} == {"personal"}
    assert "Quarterly budget" in out["inbox_work"]["content"]
    assert out["inbox_work"]["vault"] == "work"
    assert "tomatoes" in out["inbox_personal"]["content"]
    assert out["inbox_personal"]["vault"] == "personal"
    assert out["garden"]["vault"] == "personal"
    assert (out["cited"]["vault"], out["cited"]["note_path"]) == ("personal", "Inbox.md")
    assert out["cited"]["content"] == out["inbox_personal"]["content"]
    assert out["links"]["vault"] == "personal"
    assert [n["note_path"] for n in out["links"]["backlinks"]] == ["Garden.md"]  # not work's Apollo
    assert [v["vault"] for v in out["status"]["vaults"]] == ["work", "personal"]
    assert all(v["available"] for v in out["status"]["vaults"])
    for refused, code in (
        (out["unknown"], "UNKNOWN_VAULT"),
        (out["unknown_note"], "UNKNOWN_VAULT"),
        (out["ambiguous"], "NOTE_AMBIGUOUS"),
    ):
        assert refused.is_error is True
        body = json.loads(refused.content[0].text)
        assert set(body) == ERROR_KEYS
        assert body["error_code"] == code
    # the refusal names the vaults there are, so an agent can ask again
    assert "work, personal" in json.loads(out["unknown"].content[0].text)["suggestion"]
    assert "work, personal" in json.loads(out["ambiguous"].content[0].text)["suggestion"]


def test_mcp_over_http_serves_every_vault(served: str) -> None:
    _check_tour(in_session(served, _tour))


def _spawn(env: dict[str, str], port: int) -> dict[str, Any]:
    environment = {
        **os.environ,
        **env,
        "EMBEDDING_PROVIDER": "none",
        "PORT": str(port),
        "WATCH": "false",
    }
    environment.pop("API_KEY", None)
    return in_stdio_session(environment, _tour)  # type: ignore[no-any-return]


def test_mcp_over_stdio_relays_every_vault_to_the_service(served: str, two_vaults: dict[str, str]) -> None:
    _check_tour(_spawn(two_vaults, int(served.rsplit(":", 1)[1])))


def test_mcp_over_stdio_serves_every_vault_itself(tmp_path: Path) -> None:
    root = tmp_path
    work, personal = write_notes(root / "Work", WORK), write_notes(root / "Personal", PERSONAL)
    env = {"VAULTS": f"work={work},personal={personal}", "DATA_DIR": str(root / "data")}
    for own in vault_settings(_settings(env)).values():  # indexed first: served here it is read-only
        services = build_services(own)
        try:
            services.supervisor.open(start_indexing=False)
            services.indexer.sync()
        finally:
            services.close()
    _check_tour(_spawn(env, free_port()))
