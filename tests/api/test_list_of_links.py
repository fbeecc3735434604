"""A list of links in a search's answer, as a person sees it: one the question asks about by its own name (an
exam guide listing its chapters, for "which certification exam was I getting ready for") keeps its place
above a chapter that mentions the exam; asked through a link's words, it goes below the note it lists, and
"why not" names the rule that moved it. Through the HTTP API on a small vault of real files, by keyword
alone and with the default model (slow)."""

from __future__ import annotations

from fastapi.testclient import TestClient

from tests.api.conftest import vault_client
from tests.application.use_cases.test_hub_asked_about import GUIDE, NOTES

client = vault_client(NOTES)


def _search(client: TestClient, question: str, **extra: object) -> dict:
    response = client.post("/search", json={"query": question, "top_k": 5, "explain": True, **extra})
    assert response.status_code == 200, response.text
    return response.json()


def test_the_list_the_question_names_stays_above_the_chapter(client: TestClient) -> None:
    found = [
        r["note_path"] for r in _search(client, "which certification exam was I getting ready for")["results"]
    ]

    assert found.index(GUIDE) < found.index("network-models.md")


def test_asked_through_a_link_the_list_goes_below_its_note_and_says_why(client: TestClient) -> None:
    question = "network models on the certification exam"
    results = _search(client, question)["results"]
    found = [r["note_path"] for r in results]

    assert found.index("network-models.md") < found.index(GUIDE)
    moved = "A map of content (mostly links): placed after the notes it links to"
    assert any(rule.startswith(moved) for rule in results[found.index(GUIDE)]["why"]["rules"])
    # below the results shown, "why not" names the same rule
    why_not = _search(client, question, top_k=1, why_not=GUIDE)["explain"]["why_not"]
    assert any(rule.startswith(moved) for rule in why_not["rules"])
