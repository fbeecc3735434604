"""Several vaults, one question naming a note by its name, someone, a period or a tag (issue 46): the vault
holding the note, or whose notes name them, hold notes of that period or are so tagged answers before a vault
that holds none, however sure the other is of the topic, and its entries alone are quoted; a period that does
not write its year ("recently", "in May") and a question naming none of these leave the merge to confidence.
Small vaults of their own, keyword search (no model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.application.recall.context import NOT_NARROWED
from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests import two_vaults
from tests.two_vaults import wait_indexed
from tests.vault_files import write_notes

# one chat on the topic among others: its words are rare in its vault, so it is surer of them than the
# journal, whose money notes say "budget" and "review" every week
TOPICS = ("football", "gardening", "a film", "the weather", "a recipe", "a holiday", "music", "a new job")
CHATS = {
    "Chats/Session 1.md": "# Session\n\nThe budget review: stress, sleepless nights, worry about the "
    "budget review all week.\n",
    **{
        f"Chats/Session {i}.md": f"# Session\n\nWe talked about {topic}.\n"
        for i, topic in enumerate(TOPICS, 2)
    },
}
JOURNAL = {
    "Journal/2024-05-14.md": "---\ndate: 2024-05-14\n---\nThe budget review with Sam went badly.\n",
    "Health/Sleep.md": "---\ntags: [mental-health]\n---\n# Sleep\n\nFour hours a night.\n",
    "Office/Desk.md": "---\ntags: [work]\n---\n# Desk\n\nThe new desk came on Monday.\n",
    **{
        f"Money/Week {i}.md": f"# Week {i}\n\nWeekly budget: groceries. Review of the budget on Sunday.\n"
        for i in range(1, 25)
    },
}


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    chats, journal = write_notes(tmp_path / "Chats", CHATS), write_notes(tmp_path / "Journal", JOURNAL)
    settings = load_settings(
        vaults=f"chats={chats},journal={journal}",
        data_dir=tmp_path / "data",
        embedding_provider="none",
        watch=False,
        today="2025-11-15",
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        for vault in ("chats", "journal"):
            wait_indexed(client, vault)
        yield client


def _first(client: TestClient, query: str) -> tuple[str, str]:
    response = client.post("/search", json={"query": query, "top_k": 5})
    assert response.status_code == 200, response.text
    first = response.json()["results"][0]
    return first["vault"], first["note_path"]


def _quoted_first(client: TestClient, query: str) -> tuple[str, str]:
    response = client.post("/context", json={"query": query, "max_chunks": 3})
    assert response.status_code == 200, response.text
    first = response.json()["sources"][0]
    return first["vault"], first["note_path"]


def test_without_a_period_or_tag_the_surer_vault_answers_first(client: TestClient) -> None:
    assert _first(client, "budget review stress") == ("chats", "Chats/Session 1.md")
    assert _quoted_first(client, "budget review stress") == ("chats", "Chats/Session 1.md")


def test_a_period_with_its_year_puts_the_vault_holding_notes_of_it_first(client: TestClient) -> None:
    asked = "the budget review in May 2024"
    assert _first(client, asked) == ("journal", "Journal/2024-05-14.md")
    assert _quoted_first(client, asked) == ("journal", "Journal/2024-05-14.md")


def test_a_period_without_its_year_decides_nothing_between_vaults(client: TestClient) -> None:
    # "in May" is read against today, which a vault of old chats does not share
    assert _first(client, "the budget review in May") == ("chats", "Chats/Session 1.md")


def test_a_tag_the_question_names_puts_the_vault_so_tagged_first(client: TestClient) -> None:
    asked = "budget review stress and mental health"
    assert _first(client, asked) == ("journal", "Health/Sleep.md")
    assert _quoted_first(client, asked) == ("journal", "Health/Sleep.md")


def _quoted_vaults(client: TestClient, query: str) -> set[str]:
    response = client.post("/context", json={"query": query, "max_chunks": 5, "min_confidence": 0.0})
    assert response.status_code == 200, response.text
    return {source["vault"] for source in response.json()["sources"]}


def test_a_name_only_one_vault_writes_puts_it_first_and_alone_in_the_block(client: TestClient) -> None:
    asked = "what did Sam say at the budget review"  # Sam is in the journal only
    assert _first(client, asked) == ("journal", "Journal/2024-05-14.md")
    assert _quoted_vaults(client, asked) == {"journal"}
    # and the block's explanation says why the chats, surer of the budget review, are not quoted
    body = {"query": asked, "max_chunks": 3, "min_confidence": 0.0, "explain": True}
    considered = client.post("/context", json=body).json()["explain"]["considered"]
    fates = {(entry["vault"], entry["note_path"]): entry["reason"] for entry in considered}
    assert fates[("chats", "Chats/Session 1.md")] == NOT_NARROWED
    # a name neither writes decides nothing
    assert _first(client, "what did Alex say at the budget review stress") == ("chats", "Chats/Session 1.md")
    assert _quoted_vaults(client, "budget review stress") == {"chats", "journal"}


def test_a_tag_one_word_of_the_question_names_puts_the_vault_so_tagged_first(client: TestClient) -> None:
    # "work" is one word of the question and a tag of the journal (#work): its words alone are no keyword
    # terms of the tag, but they tell which vault keeps notes so tagged
    asked = "budget review stress at work"
    assert _first(client, asked)[0] == "journal"
    assert _quoted_vaults(client, asked) == {"journal"}


BEDS = {
    f"Beds {i}.md": f"# Beds {i}\n\nThe plan for bed {i}: seeds and compost. #garden\n" for i in range(1, 5)
}
PLAN = {"Garden plan.md": "# Garden plan\n\nTomatoes along the south wall, beans by the fence.\n"}


def _found(client: TestClient, query: str, **body: object) -> list[tuple[str, str]]:
    answer = client.post("/search", json={"query": query, **body}).json()
    return [(r["vault"], r["note_path"]) for r in answer["results"]]


def _quoted(client: TestClient, query: str, **body: object) -> list[dict]:
    return list(client.post("/context", json={"query": query, **body}).json()["sources"])


def test_a_question_that_is_a_note_s_name_puts_its_vault_first_before_a_vault_so_tagged(
    tmp_path: Path,
) -> None:
    # "garden plan" is the name of a personal note, and means work's tag #garden: the note named is what
    # is asked for, ahead of every note so tagged (before, four weak #garden notes filled the answer)
    with two_vaults.in_process(tmp_path, (BEDS, PLAN)) as client:
        assert _found(client, "garden plan", top_k=3)[0] == ("personal", "Garden plan.md")
        given = _quoted(client, "garden plan")
        assert [(s["vault"], s["note_path"]) for s in given] == [("personal", "Garden plan.md")]
        # the named note already given (an earlier turn's): nothing else is it, the tagged notes neither
        assert _quoted(client, "garden plan", exclude=[given[0]["attribution"]]) == []


def test_vaults_that_each_hold_a_note_of_the_question_s_name_are_equals(tmp_path: Path) -> None:
    # both hold a "Garden plan", work's a stub among its #garden notes: neither is set aside for holding
    # more of the tags, the surer note comes first
    stub = {**BEDS, "Garden plan.md": "# Garden plan\n\nTo do.\n"}
    with two_vaults.in_process(tmp_path, (stub, PLAN)) as client:
        found = _found(client, "garden plan", top_k=3)
        assert found[0] == ("personal", "Garden plan.md")
        assert ("work", "Garden plan.md") in found
        quoted = {(s["vault"], s["note_path"]) for s in _quoted(client, "garden plan")}
        assert ("personal", "Garden plan.md") in quoted
