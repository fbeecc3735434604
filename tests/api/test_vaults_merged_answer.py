"""The merged answer of several vaults (issue 46) over HTTP, on two small vaults of their own (keyword search,
no model): the memory suggestion names its vault so storing it as suggested ties the fact to the note it
came from, the related notes are those of the results kept, and `why_not` says what the merge did."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests import two_vaults

OWED = "how much do I owe Sam?"
WORK = {
    # the same path in both vaults: a suggestion naming only `Inbox.md` is ambiguous
    "Inbox.md": "# Inbox\n\nQuarterly review with the finance team on Monday.\n",
    "Budget/Budget 1.md": "# Budget 1\n\nThe budget: approved budget, budget spent, budget left. See "
    "[[Budget 2]], [[Ledger]].\n",
    "Budget/Budget 2.md": "# Budget 2\n\nThe second budget: budget approved, budget spent. See [[Ledger]], "
    "[[Receipts]].\n",
    "Budget/Budget 3.md": "# Budget 3\n\nA third budget: budget approved, budget spent. See [[Ledger]].\n",
    "Ledger.md": "# Ledger\n\nEvery entry.\n",
    "Receipts.md": "# Receipts\n\nEvery receipt.\n",
}
PERSONAL = {
    "Inbox.md": "# Inbox\n\nI owe Sam 50 EUR for the concert tickets.\n",
    "Garden.md": "# Garden\n\nTomatoes, basil and a small budget for seeds.\n",
    "Falcon.md": "# Falcon\n\nThe falcon kite, a small budget for its string, bought at the fair with other "
    "kites. See [[Kites]].\n",
    "Kites.md": "# Kites\n\nEvery kite I flew.\n",
}


def _serving(
    root: Path, work_notes: Mapping[str, str], personal_notes: Mapping[str, str]
) -> AbstractContextManager[TestClient]:
    return two_vaults.in_process(root, (work_notes, personal_notes))


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with _serving(tmp_path, WORK, PERSONAL) as client:
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


# the surest result is work's, a note about what is owed that states no sum; the fact is personal's
STUDIO = {
    "Studio.md": "# Studio\n\nSam at the studio: how much do I owe Sam for the studio sessions? Sam "
    "keeps the studio book; Sam, Sam.\n",
    "Ledger.md": "# Ledger\n\nEvery entry.\n",
}
TICKETS = {
    "Inbox.md": "# Inbox\n\nI owe Sam 50 EUR for the concert tickets.\n",
    "Garden.md": "# Garden\n\nTomatoes.\n",
}


def test_the_suggestion_is_of_a_result_kept_whichever_vault_leads(tmp_path: Path) -> None:
    with _serving(tmp_path, STUDIO, TICKETS) as client:
        both = _post(client, "/search", query=OWED, top_k=2)
        assert [(r["vault"], r["note_path"]) for r in both["results"]] == [
            ("work", "Studio.md"),
            ("personal", "Inbox.md"),
        ]
        # the fact shown is offered, though the surest result's vault has none to offer
        offered = both["memory_suggestion"]
        assert offered is not None
        assert (offered["vault"], offered["source"], offered["start_line"]) == ("personal", "Inbox.md", 3)
        # the merge kept only work's note: nothing it was not shown is offered
        assert _post(client, "/search", query=OWED, top_k=1)["memory_suggestion"] is None


def _related(answer: dict) -> dict[tuple[str, str], tuple[str, int]]:
    return {
        (n["vault"], n["note_path"]): (n["relationship"], n["link_count"]) for n in answer["related_notes"]
    }


def test_the_related_notes_are_those_of_the_results_kept(client: TestClient) -> None:
    answer = _post(client, "/search", query="budget falcon", top_k=3)
    kept = [(r["vault"], r["note_path"]) for r in answer["results"]]
    # each vault gave its three; the merge kept personal's two and work's first
    assert kept == [("personal", "Falcon.md"), ("personal", "Garden.md"), ("work", "Budget/Budget 1.md")]
    assert _related(answer) == {
        ("work", "Budget/Budget 2.md"): ("outlink", 1),  # cut from the results, linked from a kept one
        ("work", "Ledger.md"): ("outlink", 1),  # of the kept Budget 1, not of the cut 2 and 3
        ("personal", "Kites.md"): ("outlink", 1),
    }  # not Receipts.md: only the cut Budget 2 links to it
    # each vault asked alone keeps its related notes as before
    alone = _post(client, "/search", query="budget falcon", top_k=3, vaults=["work"])
    assert _related(alone) == {("work", "Ledger.md"): ("outlink", 3), ("work", "Receipts.md"): ("outlink", 1)}
    grouped = _post(client, "/search", query="budget falcon", top_k=3, group_by="note")
    assert _related(grouped) == _related(answer)
    assert (
        _post(client, "/search", query="budget falcon", top_k=3, include_related=False)["related_notes"] == []
    )


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("query", ["budget falcon", "budget", OWED, "kites string fair"])
def test_each_result_kept_is_shown_as_its_vault_alone_shows_it(
    client: TestClient, query: str, grouped: bool
) -> None:
    # only the hits the merge keeps are presented: each must read as its vault's own answer gives it
    # (highlights, redaction, scores), and each vault's results stay a prefix of its own, in its order
    shape = {"group_by": "note"} if grouped else {}
    listed = "groups" if grouped else "results"
    merged = _post(client, "/search", query=query, top_k=3, **shape)
    alone = {
        name: _post(client, "/search", query=query, top_k=3, vaults=[name], **shape)[listed]
        for name in ("work", "personal")
    }
    assert len(merged[listed]) == min(3, sum(len(own) for own in alone.values()))
    for name, own in alone.items():
        mine = [item for item in merged[listed] if item["vault"] == name]
        assert mine == own[: len(mine)]
    if query == "budget falcon":  # both vaults answer, and the merge cut some of what they gave
        assert {item["vault"] for item in merged[listed]} == {"work", "personal"}
        assert sum(len(own) for own in alone.values()) > 3


def test_grouped_by_note_a_kept_note_past_its_vault_s_first_chunks_has_its_related_notes(
    tmp_path: Path,
) -> None:
    # Plan's two chunks are work's first two: its own search read the links of Plan alone, yet the merge keeps
    # Other too (personal has nothing to say), whose link to Receipts is a related note of the answer
    plan = "".join(
        f"## {season}\n\nThe budget for {season}: budget approved, budget spent.{see}\n\n"
        for season, see in (("Spring", " See [[Ledger]]."), ("Summer", ""), ("Autumn", ""))
    )
    work = {
        "Plan.md": f"# Plan\n\n{plan}",
        "Other.md": "# Other\n\nAnother budget. See [[Receipts]].\n",
        "Ledger.md": "# Ledger\n\nEvery entry.\n",
        "Receipts.md": "# Receipts\n\nEvery receipt.\n",
    }
    with _serving(tmp_path, work, {"Garden.md": "# Garden\n\nTomatoes and basil.\n"}) as client:
        answer = _post(client, "/search", query="budget", top_k=2, group_by="note")
        assert [g["note_path"] for g in answer["groups"]] == ["Plan.md", "Other.md"]
        assert len(answer["groups"][0]["chunks"]) == 2
        assert _related(answer) == {
            ("work", "Ledger.md"): ("outlink", 1),
            ("work", "Receipts.md"): ("outlink", 1),
        }


def _why_not(client: TestClient, **body: object) -> tuple[dict, dict]:
    answer = _post(client, "/search", **body)
    return answer, answer["explain"]["why_not"]


def test_why_not_of_a_note_the_merge_cut_says_so(client: TestClient) -> None:
    # personal's Falcon is its vault's result 2; work's three budget notes are surer, and the merge keeps them
    answer, why = _why_not(client, query="budget", top_k=3, why_not="Falcon.md")
    assert {r["vault"] for r in answer["results"]} == {"work"}
    alone = _post(client, "/search", query="budget", top_k=3, vaults=["personal"])["results"]
    assert [r["note_path"] for r in alone].index("Falcon.md") + 1 == 2
    assert (why["vault"], why["note_path"], why["final_rank"]) == ("personal", "Falcon.md", None)
    # merged, every work result (its three) comes before it, and personal's first: it ranks 5, not 2
    assert why["ranked"] == 5
    assert why["reason"].startswith(
        "It is result 2 of the vault personal, cut when the vaults' lists were merged: 3 results of other "
        "vaults come before it (surer"
    )
    assert "below the 3 results shown" in why["reason"]
    assert "It is result 2." not in why["reason"]
    # kept, its place is the merged one
    _, kept = _why_not(client, query="budget falcon", top_k=3, why_not="Falcon.md")
    assert (kept["final_rank"], kept["ranked"]) == (1, 1)
    assert kept["reason"] == "It is result 1 (result 1 of the vault personal)."
    # asked of its vault alone, the vault's own answer as before
    _, own = _why_not(client, query="budget", top_k=3, why_not="Falcon.md", vaults=["personal"])
    assert (own["final_rank"], own["ranked"], own["reason"]) == (2, 2, "It is result 2.")


def test_why_not_of_a_path_two_vaults_hold_says_which_it_explains(client: TestClient) -> None:
    _, why = _why_not(client, query="budget", top_k=3, why_not="Inbox.md")
    assert why["vault"] == "work"  # the first vault asked that holds it
    assert why["reason"].startswith(
        'Inbox.md is in the vaults work, personal: this explains work\'s (ask with `vaults`: ["personal"]'
    )
    # its vault's own reason follows, said to be that vault's
    assert "In the vault work: " in why["reason"]
    _, other = _why_not(client, query="budget", top_k=3, why_not="Inbox.md", vaults=["personal"])
    assert other["vault"] == "personal"


def test_why_not_of_a_note_cited_with_its_vault_explains_that_vault_s(client: TestClient) -> None:
    # `vault:<name>/<path>`, as a block of several vaults cites it: that vault's note (both hold the path)
    _, why = _why_not(client, query="budget", top_k=3, why_not="vault:personal/Inbox.md")
    assert (why["vault"], why["note_path"]) == ("personal", "Inbox.md")
    assert why["indexed"] is True
    assert "this explains personal's" in why["reason"]
    _, work = _why_not(client, query="budget", top_k=3, why_not="vault:work/Inbox.md")
    assert (work["vault"], work["note_path"]) == ("work", "Inbox.md")
