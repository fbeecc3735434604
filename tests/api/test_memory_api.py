"""Remembered facts over HTTP: POST/GET/DELETE /memory, sources checked against the vault, facts found by
/search and /context with include_memory, and kept across restarts and index rebuilds (never in the vault)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests.api.conftest import AppFactory, wait_for_job
from tests.application.fakes import FakeEmbedder
from tests.vault_files import write

LEDGER = "Finance/Money with Sreenivas.md"
FACT = {"key": "sreenivas-balance", "value": "I owe Sreenivas €79.50 as of 28 March 2026.", "source": LEDGER}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, LEDGER, "---\ntags: [finance]\n---\n# Money with Sreenivas\n\nI owe Sreenivas €79.50.\n")
    write(root, "Recipes/Tomato rasam.md", "# Tomato rasam\n\nTamarind, tomatoes, rasam powder.\n")
    write(root, "Home.md", "# Home\n\nStart here.\n")
    return root


@pytest.fixture
def client(indexed_client: AppFactory, vault: Path) -> TestClient:
    return indexed_client(vault_path=vault)


def vault_digest(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_remember_replace_list_and_forget(client: TestClient) -> None:
    created = client.post("/memory", json=FACT)
    assert created.status_code == 201
    fact = created.json()["fact"]
    assert created.json()["created"] is True
    assert fact["key"] == FACT["key"]
    assert fact["value"] == FACT["value"]
    assert fact["source_exists"] is True
    assert fact["sensitive_categories"] == ["finance"]
    replaced = client.post("/memory", json={**FACT, "value": "Paid back in full on 2 May."})
    assert replaced.status_code == 200
    assert replaced.json()["created"] is False
    assert replaced.json()["fact"]["created_at"] == fact["created_at"]
    assert replaced.json()["fact"]["updated_at"] >= fact["updated_at"]
    client.post(
        "/memory",
        json={"key": "rasam-tip", "value": "Add the tamarind late.", "source": "Recipes/Tomato rasam.md"},
    )
    listed = client.get("/memory").json()
    assert [f["key"] for f in listed["facts"]] == ["rasam-tip", "sreenivas-balance"]
    assert listed["total"] == 2
    assert listed["facts"][1]["value"] == "Paid back in full on 2 May."
    page = client.get("/memory", params={"limit": 1, "offset": 1}).json()
    assert [f["key"] for f in page["facts"]] == ["sreenivas-balance"]
    assert page["next_offset"] is None
    assert client.delete("/memory/sreenivas-balance").json() == {"key": "sreenivas-balance", "deleted": True}
    missing = client.delete("/memory/sreenivas-balance")
    assert missing.status_code == 404
    assert missing.json()["error_code"] == "MEMORY_NOT_FOUND"
    assert [f["key"] for f in client.get("/memory").json()["facts"]] == ["rasam-tip"]


@pytest.mark.parametrize(
    ("source", "status", "code"),
    [
        ("Nope.md", 404, "NOTE_NOT_FOUND"),
        ("../outside.md", 400, "SECURITY_VIOLATION"),
        ("/etc/passwd", 400, "SECURITY_VIOLATION"),
        ("Finance\\Money with Sreenivas.md", 400, "SECURITY_VIOLATION"),
        ("%2e%2e/%2e%2e/etc/passwd", 400, "SECURITY_VIOLATION"),
    ],
)
def test_the_source_must_be_a_note_of_the_vault(
    client: TestClient, source: str, status: int, code: str
) -> None:
    response = client.post("/memory", json={**FACT, "source": source})
    assert response.status_code == status
    assert response.json()["error_code"] == code
    assert client.get("/memory").json()["facts"] == []


@pytest.mark.parametrize(
    "body",
    [
        {**FACT, "key": ""},
        {**FACT, "key": "   "},
        {**FACT, "key": "a/b"},
        {**FACT, "key": "x" * 129},
        {**FACT, "value": ""},
        {**FACT, "value": "v" * 4001},
        {"key": "k", "value": "v"},
        {**FACT, "extra": True},
    ],
)
def test_bad_facts_are_validation_errors(client: TestClient, body: dict) -> None:
    response = client.post("/memory", json=body)
    assert response.status_code == 422
    assert response.json()["error_code"] == "VALIDATION_ERROR"


def test_search_and_context_find_facts_only_when_asked(client: TestClient) -> None:
    client.post("/memory", json=FACT)
    plain = client.post("/search", json={"query": "owe Sreenivas"}).json()
    assert plain["memories"] == []
    asked = client.post("/search", json={"query": "owe Sreenivas", "include_memory": True}).json()
    assert [m["key"] for m in asked["memories"]] == ["sreenivas-balance"]
    assert asked["memories"][0]["score"] > 0
    assert asked["sensitive_detected"] is True
    unrelated = client.post("/search", json={"query": "tamarind", "include_memory": True}).json()
    assert unrelated["memories"] == []
    context = client.post("/context", json={"query": "owe Sreenivas", "include_memory": True}).json()
    assert context["context"].startswith("[memory:sreenivas-balance] from " + LEDGER + "\n" + FACT["value"])
    assert context["sources"][0]["kind"] == "memory"
    assert context["sources"][0]["memory_key"] == "sreenivas-balance"


def test_facts_survive_a_restart_and_a_rebuild_and_never_touch_the_vault(
    make_client: AppFactory, vault: Path, tmp_path: Path
) -> None:
    before = vault_digest(vault)
    data = tmp_path / "data"
    first = make_client(vault_path=vault, data_dir=data)
    wait_for_job(first)
    assert first.post("/memory", json=FACT).status_code == 201
    first.__exit__(None, None, None)

    second = make_client(vault_path=vault, data_dir=data)
    wait_for_job(second)
    assert [f["key"] for f in second.get("/memory").json()["facts"]] == ["sreenivas-balance"]
    generation = second.get("/index/status").json()["generation"]
    assert second.post("/index/rebuild").status_code == 202
    status = wait_for_job(second)
    assert status["job"]["phase"] == "done"
    assert status["generation"] != generation  # a new index generation serves now
    assert [f["key"] for f in second.get("/memory").json()["facts"]] == ["sreenivas-balance"]
    found = second.post("/search", json={"query": "Sreenivas balance", "include_memory": True}).json()
    assert [m["key"] for m in found["memories"]] == ["sreenivas-balance"]

    assert vault_digest(vault) == before  # nothing was written into the vault
    memory_dirs = [p for p in data.rglob("*memory*") if p.is_dir()]
    assert memory_dirs == [
        data / "memory",
        data / "memory" / "obsidian_memory",
    ]  # outside the index's folders


def test_a_fact_whose_source_left_the_vault_says_so(client: TestClient, vault: Path) -> None:
    client.post("/memory", json={"key": "home", "value": "Home is where we start.", "source": "Home.md"})
    (vault / "Home.md").unlink()
    assert client.post("/index/sync").status_code == 202
    wait_for_job(client)
    fact = client.get("/memory").json()["facts"][0]
    assert fact["key"] == "home"
    assert fact["source_exists"] is False


def test_secrets_in_facts_are_redacted_when_shown(client: TestClient) -> None:
    client.post(
        "/memory", json={"key": "wifi", "value": "wifi password: Fjord-Lantern-42", "source": "Home.md"}
    )
    shown = client.get("/memory").json()["facts"][0]
    assert shown["value"] == "wifi password: [REDACTED:password]"
    assert shown["redactions"] == 1
    assert (
        "Fjord-Lantern-42" not in client.post("/search", json={"query": "wifi", "include_memory": True}).text
    )


def test_facts_are_re_encoded_for_a_new_embedder(vault: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    keyword = load_settings(vault_path=vault, data_dir=data, embedding_provider="none", watch=False)
    with TestClient(create_app(keyword)) as first:
        wait_for_job(first)
        first.post("/memory", json=FACT)
    dense = load_settings(vault_path=vault, data_dir=data, embedding_provider="none", watch=False)
    services = build_services(dense, embedder=FakeEmbedder())
    with TestClient(create_app(dense, services=services)) as second:
        assert second.post("/index/rebuild").status_code == 202  # the chunk index changes model by a rebuild
        wait_for_job(second)
        assert [f["key"] for f in second.get("/memory").json()["facts"]] == ["sreenivas-balance"]
        # A store still shaped for the keyword-only model has no dense vectors: a query with one would fail
        # and the search would say "remembered facts are unavailable". Re-encoded, it answers healthy.
        hit = second.post("/search", json={"query": "sreenivas balance", "include_memory": True}).json()
        assert [m["key"] for m in hit["memories"]] == ["sreenivas-balance"]
        assert hit["status"] == "healthy", hit["warnings"]
