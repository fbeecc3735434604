"""The memory suggestion over HTTP on a small vault of its own: a search that finds the ledger offers its
balance to remember (the note's own line), storing it with POST /memory ends the offer, and chit-chat, a
question the vault cannot answer or a line holding an access code are offered nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT
from tests.api.conftest import AppFactory
from tests.vault_files import write

LEDGER = "Finance/Money with Sreenivas.md"
ASK = "how much money do I owe Sreenivas now?"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for note in (LEDGER, "People/Sreenivas.md", "Recipes/Tomato rasam.md"):
        (root / note).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(EXAMPLE_VAULT / note, root / note)
    write(
        root,
        "Home/Parking.md",
        "# Parking\n\nI owe the building office €30 for the garage gate remote; the gate code is 4711.\n",
    )
    return root


@pytest.fixture
def client(indexed_client: AppFactory, vault: Path) -> TestClient:
    return indexed_client(vault_path=vault)


def suggestion(client: TestClient, query: str, route: str = "/search") -> dict | None:
    answer = client.post(route, json={"query": query})
    assert answer.status_code == 200, answer.text
    return answer.json()["memory_suggestion"]  # type: ignore[no-any-return]


def test_a_search_finding_the_ledger_offers_its_balance_until_it_is_remembered(
    client: TestClient, vault: Path
) -> None:
    offered = suggestion(client, ASK)
    assert offered is not None
    assert offered["source"] == LEDGER
    assert offered["kind"] == "money_owed"
    assert "€79.50" in offered["value"]
    assert offered["confidence"] >= 0.4
    # the line it names is the note's own, holding the amount
    lines = (vault / LEDGER).read_text(encoding="utf-8").split("\n")
    assert offered["start_line"] == offered["end_line"]
    assert "€79.50" in lines[offered["start_line"] - 1]
    # the agent stores it as offered; the offer is not made again
    kept = client.post("/memory", json={k: offered[k] for k in ("key", "value", "source")})
    assert kept.status_code == 201, kept.text
    assert suggestion(client, ASK) is None
    # a changed balance under the same key is offered again
    client.post("/memory", json={"key": offered["key"], "value": "I owe Sreenivas €100.", "source": LEDGER})
    assert suggestion(client, ASK) == offered


def test_the_context_block_carries_the_offer_of_the_notes_it_quotes(client: TestClient) -> None:
    offered = suggestion(client, ASK, "/context")
    assert offered is not None
    assert offered == suggestion(client, ASK)
    answer = client.post("/context", json={"query": ASK, "exclude_categories": ["finance"]}).json()
    assert answer["memory_suggestion"] is None  # the ledger is left out of the block: nothing from it


@pytest.mark.parametrize("query", ["hi", "thanks!", "what is the capital of Mongolia?"])
def test_nothing_is_offered_for_chit_chat_or_what_the_vault_does_not_answer(
    client: TestClient, query: str
) -> None:
    assert suggestion(client, query) is None
    assert suggestion(client, query, "/context") is None


def test_a_line_holding_an_access_code_is_never_offered(client: TestClient) -> None:
    answer = client.post("/search", json={"query": "what do I owe for the garage gate remote?"}).json()
    assert answer["results"][0]["note_path"] == "Home/Parking.md"
    assert answer["results"][0]["confidence"] >= 0.4
    assert answer["memory_suggestion"] is None
