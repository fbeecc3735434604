"""The merged answer of several vaults (issue 46) over HTTP, on two small vaults of their own (keyword search,
no model): the memory suggestion names its vault so storing it as suggested ties the fact to the note it
came from, the related notes are those of the results kept, and `why_not` says what the merge did."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests.two_vaults import wait_indexed
from tests.vault_files import write_notes

OWED = "how much do I owe Sam?"
WORK = {
    # the same path in both vaults: a suggestion naming only `Inbox.md` is ambiguous
    "Inbox.md": "# Inbox\n\nQuarterly budget review with the finance team on Monday.\n",
    **{
        f"Budget/Budget {i}.md": f"# Budget {i}\n\nBudget line {i}: approved. See [[Ledger {i}]].\n"
        for i in range(1, 4)
    },
    **{f"Ledger {i}.md": f"# Ledger {i}\n\nThe entries of line {i}.\n" for i in range(1, 4)},
}
PERSONAL = {
    "Inbox.md": "# Inbox\n\nI owe Sam 50 EUR for the concert tickets.\n",
    "Falcon.md": "# Falcon\n\nThe falcon kite, a small budget for its string. See [[Kites]].\n",
    "Kites.md": "# Kites\n\nEvery kite I flew.\n",
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    work, personal = write_notes(tmp_path / "Work", WORK), write_notes(tmp_path / "Personal", PERSONAL)
    settings = load_settings(
        vaults=f"work={work},personal={personal}",
        data_dir=tmp_path / "data",
        embedding_provider="none",
        watch=False,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        wait_indexed(client, "work")
        wait_indexed(client, "personal")
        yield client


def _post(client: TestClient, route: str, **body: object) -> dict:
    response = client.post(route, json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


@pytest.mark.parametrize("route", ["/search", "/context"])
def test_the_memory_suggestion_names_its_vault_and_is_stored_with_the_note_it_came_from(
    client: TestClient, route: str
) -> None:
    offered = _post(client, route, query=OWED)["memory_suggestion"]
    assert offered is not None
    assert (offered["source"], offered["vault"]) == ("Inbox.md", "personal")
    # stored as suggested: the fact is personal's, tied to its Inbox, not refused as ambiguous
    kept = client.post("/memory", json={k: offered[k] for k in ("key", "value", "source", "vault")})
    assert kept.status_code == 201, kept.text
    assert kept.json()["fact"]["vault"] == "personal"
    assert [f["key"] for f in client.get("/memory", params={"vault": "personal"}).json()["facts"]] == [
        offered["key"]
    ]
    assert client.get("/memory", params={"vault": "work"}).json()["facts"] == []


def test_a_suggestion_asked_of_one_vault_names_it(client: TestClient) -> None:
    for route in ("/search", "/context"):
        offered = _post(client, route, query=OWED, vaults=["personal"])["memory_suggestion"]
        assert offered is not None
        assert offered["vault"] == "personal"
