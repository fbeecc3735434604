"""Several vaults, one service (issue 46), over HTTP: two small vaults of their own, the embedded store,
keyword search (no model): search across them or within some, notes by vault and path, isolation, a
vault gone, status per vault."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests.two_vaults import merged_as_documented, wait_indexed
from tests.vault_files import write_notes

WORK = {
    "Inbox.md": "# Inbox\n\nQuarterly budget review with the finance team on Monday.\n",
    "Projects/Apollo.md": "# Apollo\n\nThe Apollo launch plan, its budget. See [[Garden]], [[Inbox]].\n",
    **{
        f"Budget/Budget {i}.md": f"# Budget {i}\n\nBudget line {i}: budget approved, spent, left.\n"
        for i in range(1, 9)
    },
}
PERSONAL = {
    "Inbox.md": "# Inbox\n\nBuy seeds for the garden and water the tomatoes.\n",
    "Garden.md": "# Garden\n\nTomatoes, basil and a small budget for seeds. Back to [[Inbox]].\n",
}


@pytest.fixture
def vaults(tmp_path: Path) -> tuple[Path, Path]:
    return write_notes(tmp_path / "Work", WORK), write_notes(tmp_path / "Personal", PERSONAL)


def _client(tmp_path: Path, work: Path, personal: Path) -> TestClient:
    settings = load_settings(
        vaults=f"work={work},personal={personal}",
        data_dir=tmp_path / "data",
        embedding_provider="none",
        watch=False,
    )
    return TestClient(create_app(settings), raise_server_exceptions=False)


@pytest.fixture
def client(tmp_path: Path, vaults: tuple[Path, Path]) -> Iterator[TestClient]:
    with _client(tmp_path, *vaults) as client:
        wait_indexed(client, "work")
        wait_indexed(client, "personal")
        yield client


def _search(client: TestClient, **body: object) -> dict:
    response = client.post("/search", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_each_vault_has_its_own_data_dir(client: TestClient, tmp_path: Path) -> None:
    assert (tmp_path / "data" / "work" / "qdrant-work").is_dir()
    assert (tmp_path / "data" / "personal" / "qdrant-personal").is_dir()


def test_search_across_both_names_each_results_vault_merged_as_documented(client: TestClient) -> None:
    answer = _search(client, query="budget seeds", top_k=10)
    assert {r["vault"] for r in answer["results"]} == {"work", "personal"}
    alone = [
        _search(client, query="budget seeds", top_k=10, vaults=[v])["results"] for v in ("work", "personal")
    ]
    assert [r["chunk_id"] for r in answer["results"]] == merged_as_documented(alone, 10)
    assert answer["missing_vaults"] == []
    # the lean way (application/json) and the FastAPI route answer alike
    declined = {"content-type": "application/json; charset=utf-8"}  # the short way takes only the bare type
    routed = client.post(
        "/search", content=b'{"query": "budget seeds", "top_k": 10}', headers=declined
    ).json()
    assert [r["chunk_id"] for r in routed["results"]] == [r["chunk_id"] for r in answer["results"]]


def test_vaults_asks_only_those(client: TestClient) -> None:
    answer = _search(client, query="budget seeds", top_k=10, vaults=["work"])
    assert answer["results"]
    assert {r["vault"] for r in answer["results"]} == {"work"}
    answer = _search(client, query="budget seeds", top_k=10, vaults=["personal"])
    assert answer["results"]
    assert {r["vault"] for r in answer["results"]} == {"personal"}


def test_top_k_holds_across_vaults(client: TestClient) -> None:
    # work has eight strong budget notes, personal one weak mention: the list is full, never short
    answer = _search(client, query="budget", top_k=5)
    assert len(answer["results"]) == 5
    answer = _search(client, query="budget", top_k=10)
    assert len(answer["results"]) == 10
    assert "personal" in {r["vault"] for r in answer["results"]}


def test_an_unknown_vault_is_refused_in_the_error_shape(client: TestClient) -> None:
    for path, body in (("/search", {"query": "budget"}), ("/context", {"query": "budget"})):
        response = client.post(path, json=body | {"vaults": ["wrok"]})
        assert response.status_code == 422
        error = response.json()
        assert set(error) == {"error_code", "detail", "recoverable", "suggestion"}
        assert error["error_code"] == "UNKNOWN_VAULT"
        assert "work" in error["suggestion"]
        assert "personal" in error["suggestion"]


def test_the_same_path_is_read_from_the_vault_named(client: TestClient) -> None:
    work = client.get("/note/Inbox.md", params={"vault": "work"}).json()
    personal = client.get("/note/Inbox.md", params={"vault": "personal"}).json()
    assert "finance team" in work["content"]
    assert work["vault"] == "work"
    assert "tomatoes" in personal["content"]
    assert personal["vault"] == "personal"
    # Obsidian knows each vault by its folder's name, not by the short name VAULTS gives it
    assert work["obsidian_uri"].startswith("obsidian://open?vault=Work&")
    assert personal["obsidian_uri"].startswith("obsidian://open?vault=Personal&")


def test_a_path_in_two_vaults_without_vault_is_ambiguous(client: TestClient) -> None:
    response = client.get("/note/Inbox.md")
    assert response.status_code == 409
    error = response.json()
    assert error["error_code"] == "NOTE_AMBIGUOUS"
    assert "work" in error["detail"]
    assert "personal" in error["detail"]
    # a path only one vault holds needs no vault
    assert client.get("/note/Garden.md").json()["vault"] == "personal"


def test_links_never_cross_vaults(client: TestClient) -> None:
    # Apollo (work) links to [[Garden]], a note only personal has: it stays unresolved in work
    links = client.get("/note/Projects/Apollo.md/links").json()
    assert links["vault"] == "work"
    assert "Garden" in {link["target"] for link in links["unresolved"]}
    assert [n["note_path"] for n in links["outlinks"]] == ["Inbox.md"]  # work's own Inbox
    answer = _search(client, query="Apollo launch plan", top_k=3)
    assert answer["results"][0]["vault"] == "work"
    related = answer["related_notes"]
    assert related
    assert all(n["vault"] == "work" for n in related)
    assert "Garden.md" not in {n["note_path"] for n in related}


def test_context_merges_the_vaults_by_confidence(client: TestClient) -> None:
    response = client.post("/context", json={"query": "budget seeds", "max_chunks": 10, "explain": True})
    assert response.status_code == 200, response.text
    answer = response.json()
    assert {s["vault"] for s in answer["sources"]} == {"work", "personal"}
    assert "(vault personal)" in answer["context"]
    considered = answer["explain"]["considered"]
    assert all(c["vault"] in ("work", "personal") for c in considered)
    confidences = [c["confidence"] for c in considered]
    assert confidences == sorted(confidences, reverse=True)
    only = client.post("/context", json={"query": "budget seeds", "vaults": ["personal"]}).json()
    assert only["sources"]
    assert {s["vault"] for s in only["sources"]} == {"personal"}


def test_a_quoted_block_names_its_one_vault_once_and_each_entry_s_only_when_it_holds_several(
    client: TestClient,
) -> None:
    # a vault's name on every entry costs the budget on every entry: once is enough when all are of one
    asked = {"query": "Apollo launch plan", "max_chunks": 2, "quoted": True}
    one = client.post("/context", json=asked).json()
    assert {s["vault"] for s in one["sources"]} == {"work"}
    head = one["context"].split("\n")[1]
    assert head.startswith("Quoted from the user's vault work (Knowledge Bridge)")
    assert "(vault work)" not in one["context"]
    both = client.post("/context", json={"query": "budget seeds", "max_chunks": 10, "quoted": True}).json()
    assert {s["vault"] for s in both["sources"]} == {"work", "personal"}
    assert both["context"].split("\n")[1].startswith("Quoted from the user's notes (Knowledge Bridge)")
    assert "(vault work)" in both["context"]
    assert "(vault personal)" in both["context"]


def test_status_per_vault_and_of_every_vault(client: TestClient) -> None:
    work = client.get("/index/status", params={"vault": "work"}).json()
    personal = client.get("/index/status", params={"vault": "personal"}).json()
    assert (work["vault"], work["indexed_notes"]) == ("work", len(WORK))
    assert (personal["vault"], personal["indexed_notes"]) == ("personal", len(PERSONAL))
    every = client.get("/index/status").json()
    assert [v["vault"] for v in every["vaults"]] == ["work", "personal"]
    assert all(v["available"] for v in every["vaults"])
    assert client.post("/index/sync", params={"vault": "personal"}).status_code == 202
    assert client.post("/index/sync").json()["error_code"] == "UNKNOWN_VAULT"  # several: name one


def test_a_removed_vault_leaves_the_other_answering(client: TestClient, vaults: tuple[Path, Path]) -> None:
    shutil.rmtree(vaults[1])
    answer = _search(client, query="budget seeds", top_k=10)
    assert answer["results"]
    assert {r["vault"] for r in answer["results"]} == {"work"}
    assert [m["vault"] for m in answer["missing_vaults"]] == ["personal"]
    assert answer["missing_vaults"][0]["error_code"] == "VAULT_UNAVAILABLE"
    assert answer["status"] == "degraded"
    context = client.post("/context", json={"query": "budget seeds"}).json()
    assert [m["vault"] for m in context["missing_vaults"]] == ["personal"]
    states = {v["vault"]: v for v in client.get("/index/status").json()["vaults"]}
    assert states["work"]["available"]
    assert not states["personal"]["available"]
    alone = client.post("/search", json={"query": "seeds", "vaults": ["personal"]})
    assert alone.status_code == 503
    assert alone.json()["error_code"] == "VAULT_UNAVAILABLE"


def test_a_vault_missing_at_start_leaves_the_other_serving(tmp_path: Path, vaults: tuple[Path, Path]) -> None:
    work, personal = vaults
    shutil.rmtree(personal)
    with _client(tmp_path, work, personal) as client:
        wait_indexed(client, "work")
        answer = _search(client, query="budget", top_k=3)
        assert {r["vault"] for r in answer["results"]} == {"work"}
        assert answer["missing_vaults"][0]["vault"] == "personal"
        assert client.get("/note/Inbox.md").json()["vault"] == "work"  # only work can hold it now


def test_context_leaves_out_what_the_caller_has_of_one_vault_not_the_same_path_of_another(
    client: TestClient,
) -> None:
    asked = {"query": "inbox budget seeds", "max_chunks": 10}
    every = client.post("/context", json=asked).json()["sources"]
    inboxes = {s["vault"]: s["attribution"] for s in every if s["note_path"] == "Inbox.md"}
    assert set(inboxes) == {"work", "personal"}
    # the OpenClaw plugin names what it was given as `vault:<name>/<path>:<lines>`
    given = [f"vault:work/{inboxes['work']}"]
    sources = client.post("/context", json={**asked, "exclude": given}).json()["sources"]
    assert [s["vault"] for s in sources if s["note_path"] == "Inbox.md"] == ["personal"]
    # a plain attribution is of whichever vault holds it: both are left out
    sources = client.post("/context", json={**asked, "exclude": [inboxes["work"]]}).json()["sources"]
    assert not [s for s in sources if s["note_path"] == "Inbox.md"]
    # asked of one vault, another vault's label leaves it as it was
    only = {**asked, "vaults": ["personal"], "exclude": [f"vault:work/{inboxes['personal']}"]}
    sources = client.post("/context", json=only).json()["sources"]
    assert [s["note_path"] for s in sources].count("Inbox.md") == 1


def test_why_not_answers_from_the_vault_holding_the_note(client: TestClient) -> None:
    # the surest results are work's, the note asked about is personal's only
    answer = _search(client, query="quarterly budget review", top_k=3, why_not="Garden")
    assert answer["results"][0]["vault"] == "work"
    why = answer["explain"]["why_not"]
    assert (why["vault"], why["note_path"], why["indexed"]) == ("personal", "Garden.md", True)
    shown = [(r["vault"], r["note_path"]) for r in answer["results"]]
    assert why["final_rank"] == (
        shown.index(("personal", "Garden.md")) + 1 if ("personal", "Garden.md") in shown else None
    )


def test_a_removed_vault_s_notes_and_jobs_are_unavailable_until_its_folder_is_back(
    client: TestClient, vaults: tuple[Path, Path]
) -> None:
    shutil.rmtree(vaults[1])
    # its notes, asked of it: 503 naming it, as /search of it alone answers, not 404 "catches up shortly"
    named = client.get("/note/Garden.md", params={"vault": "personal"})
    assert named.status_code == 503, named.json()
    error = named.json()
    assert set(error) == {"error_code", "detail", "recoverable", "suggestion"}
    assert error["error_code"] == "VAULT_UNAVAILABLE"
    assert "'personal'" in error["detail"]
    assert str(vaults[1]) in error["suggestion"]  # where to put it back: no restart needed
    assert "by itself" in error["suggestion"]
    assert "restart the service" not in error["suggestion"]
    # asked of no vault: not the other vault's 404 (suggesting its own notes), the note may be the gone one's
    unnamed = client.get("/note/Garden")
    assert unnamed.status_code == 503, unnamed.json()
    assert "'personal'" in unnamed.json()["detail"]
    assert client.get("/note/Projects/Apollo").json()["vault"] == "work"  # the other's notes still read
    # a job of it is refused up front, not accepted to fail
    job = client.post("/index/sync", params={"vault": "personal"})
    assert job.status_code == 503, job.json()
    assert job.json()["error_code"] == "VAULT_UNAVAILABLE"
    # the folder put back: the vault answers again by itself
    write_notes(vaults[1], PERSONAL)
    assert client.get("/note/Garden.md", params={"vault": "personal"}).json()["vault"] == "personal"
    assert client.get("/note/Garden").json()["vault"] == "personal"
    assert client.post("/index/sync", params={"vault": "personal"}).status_code == 202


def test_a_vault_missing_at_start_is_named_when_no_other_vault_has_the_note(
    tmp_path: Path, vaults: tuple[Path, Path]
) -> None:
    work, personal = vaults
    shutil.rmtree(personal)
    with _client(tmp_path, work, personal) as client:
        wait_indexed(client, "work")
        missed = client.get("/note/Garden")  # work has no such note; personal, which may, did not open
        assert missed.status_code == 503, missed.json()
        assert missed.json()["error_code"] == "VAULT_UNAVAILABLE"
        assert "'personal'" in missed.json()["detail"]
        assert "restart" in missed.json()["suggestion"]  # a vault that failed to open stays out till then
        assert client.post("/index/sync", params={"vault": "personal"}).status_code == 503
