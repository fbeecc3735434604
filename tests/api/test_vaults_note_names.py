"""A note named loosely (title, alias, file name, path without `.md`, other letter case) with several vaults
and no `vault`: looked up in every vault, not only the first. One vault answering reads its note; two
answering is 409 NOTE_AMBIGUOUS naming each vault's note; none is 404 with the closest names of all vaults.
Two small vaults of real files, the real app, keyword search (no model)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from tests import two_vaults

WORK = {
    "Inbox.md": "---\naliases: [Work Inbox]\n---\n# Inbox\n\nQuarterly budget review on Monday.\n",
    "Projects/Falcon.md": "# Falcon\n\nThe Falcon migration plan. See [[Inbox]].\n",
}
PERSONAL = {
    "Inbox.md": "---\naliases: [Home Inbox]\n---\n# Inbox\n\nBuy seeds for the garden.\n",
    "Projects/Tomatoes.md": "---\naliases: [Red Fruit]\n---\n# Tomatoes\n\nWater them. Back to [[Inbox]].\n",
    "Falcon.md": "# Falcon\n\nThe bird seen over the garden in May.\n",
}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    with two_vaults.in_process(tmp_path_factory.mktemp("named"), (WORK, PERSONAL)) as client:
        yield client


@pytest.mark.parametrize(
    ("asked", "vault", "path"),
    [
        ("Tomatoes", "personal", "Projects/Tomatoes.md"),  # file name
        ("Red Fruit", "personal", "Projects/Tomatoes.md"),  # alias
        ("projects/TOMATOES", "personal", "Projects/Tomatoes.md"),  # path without .md, other case
        ("Home Inbox", "personal", "Inbox.md"),
    ],
)
def test_a_name_one_vault_answers_to_reads_that_vault_s_note(
    client: TestClient, asked: str, vault: str, path: str
) -> None:
    note = client.get(f"/note/{asked}")
    assert note.status_code == 200, note.json()
    assert (note.json()["vault"], note.json()["note_path"]) == (vault, path)
    links = client.get(f"/note/{asked}/links")
    assert links.status_code == 200, links.json()
    assert (links.json()["vault"], links.json()["note_path"]) == (vault, path)


def test_a_name_two_vaults_answer_to_is_ambiguous_naming_each_vault_s_note(client: TestClient) -> None:
    # work's Projects/Falcon.md by its file name, personal's Falcon.md by its path without .md
    falcon = client.get("/note/Falcon")
    assert falcon.status_code == 409, falcon.json()
    error = falcon.json()
    assert set(error) == {"error_code", "detail", "recoverable", "suggestion"}
    assert error["error_code"] == "NOTE_AMBIGUOUS"
    assert "work" in error["detail"]
    assert "personal" in error["detail"]
    assert "work (Projects/Falcon.md)" in error["suggestion"]
    assert "personal (Falcon.md)" in error["suggestion"]
    # both vaults have Inbox.md: in another letter case it is still theirs both
    inbox = client.get("/note/inbox.md")
    assert inbox.status_code == 409, inbox.json()
    assert inbox.json()["error_code"] == "NOTE_AMBIGUOUS"
    assert "work (Inbox.md)" in inbox.json()["suggestion"]
    assert "personal (Inbox.md)" in inbox.json()["suggestion"]
    # a name or a path only one vault answers to needs no vault, whichever vault it is
    for asked, vault, path in (
        ("Work Inbox", "work", "Inbox.md"),
        ("Projects/Falcon", "work", "Projects/Falcon.md"),
        ("Falcon.md", "personal", "Falcon.md"),  # work's Projects/Falcon.md does not answer to it
    ):
        note = client.get(f"/note/{asked}").json()
        assert (note["vault"], note["note_path"]) == (vault, path)
    # naming the vault settles it
    assert client.get("/note/Falcon", params={"vault": "personal"}).json()["note_path"] == "Falcon.md"
    assert client.get("/note/Falcon", params={"vault": "work"}).json()["note_path"] == "Projects/Falcon.md"


def test_a_name_no_vault_answers_to_suggests_the_closest_notes_of_every_vault(client: TestClient) -> None:
    miss = client.get("/note/Falcn")
    assert miss.status_code == 404
    error = miss.json()
    assert error["error_code"] == "NOTE_NOT_FOUND"
    assert "Projects/Falcon.md (vault work)" in error["suggestion"]
    assert "Falcon.md (vault personal)" in error["suggestion"]
    tomato = client.get("/note/Tomatos").json()
    assert tomato["suggestion"].startswith("Did you mean: Projects/Tomatoes.md (vault personal)")


def test_a_fact_s_source_named_loosely_is_looked_up_in_every_vault(client: TestClient) -> None:
    # a fact's source is named as a note read names a note: the one vault answering to the name ties it to its
    # note's path, as `note` reads it
    loose = client.post("/memory", json={"key": "tomato-water", "value": "daily", "source": "Red Fruit"})
    assert loose.status_code == 201, loose.json()
    assert (loose.json()["fact"]["source"], loose.json()["fact"]["vault"]) == (
        "Projects/Tomatoes.md",
        "personal",
    )
    stored = client.post(
        "/memory", json={"key": "tomato-feed", "value": "weekly", "source": "Projects/Tomatoes.md"}
    )
    assert stored.status_code == 201, stored.json()
    assert stored.json()["fact"]["vault"] == "personal"
    ambiguous = client.post("/memory", json={"key": "bird", "value": "a falcon", "source": "Falcon"})
    assert ambiguous.status_code == 409, ambiguous.json()
    assert ambiguous.json()["error_code"] == "NOTE_AMBIGUOUS"


@pytest.mark.parametrize("vault", ["work", "personal"])
def test_a_note_cited_as_a_block_of_several_vaults_cites_it_reads_that_vault_s_note(
    client: TestClient, vault: str
) -> None:
    # `vault:<name>/<path>`: how a block of several vaults and the OpenClaw plugin cite a note two vaults hold
    own = (WORK if vault == "work" else PERSONAL)["Inbox.md"].splitlines()
    note = client.get(f"/note/vault:{vault}/Inbox.md", params={"start_line": 6, "end_line": 6})
    assert note.status_code == 200, note.json()
    assert (note.json()["vault"], note.json()["note_path"]) == (vault, "Inbox.md")
    assert note.json()["content"] == own[5]
    links = client.get(f"/note/vault:{vault}/Inbox.md/links")
    assert (links.json()["vault"], links.json()["note_path"]) == (vault, "Inbox.md")
    # the vault named twice, two ways, and differently: which one was meant cannot be told
    clash = client.get(
        f"/note/vault:{vault}/Inbox.md", params={"vault": "work" if vault != "work" else "personal"}
    )
    assert clash.status_code == 422
    assert clash.json()["error_code"] == "VALIDATION_ERROR"
