"""What a person sees of a ranked list on the example vault, with the embedded defaults (MiniLM, edge
Qdrant): hubs below the notes they link to, a few chunks per note, results grouped by note, and questions
that name a time."""

from __future__ import annotations

import datetime as dt
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT, load_settings
from backend.domain.ranking.result_rules import is_hub, linked_names, note_name
from backend.entrypoints.app import create_app
from tests.api.conftest import AppFactory, wait_for_job

QUESTIONS = [
    q["query"]
    for q in json.loads((Path(__file__).parents[1] / "data" / "example_vault_queries.json").read_text())
]
MIGRATION = "what did I decide about the database migration?"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = load_settings(
        vault_path=EXAMPLE_VAULT, data_dir=tmp_path_factory.mktemp("shaping"), watch=False
    )
    with TestClient(create_app(settings)) as c:
        status = wait_for_job(c, timeout=600)
        assert status["job"]["phase"] == "done", status["job"]
        yield c


def search(client: TestClient, query: str, **fields: object) -> dict:
    response = client.post("/search", json={"query": query, "include_related": False, **fields})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "healthy", body
    return body


def test_the_decision_answers_the_migration_question_first(client: TestClient) -> None:
    first = search(client, MIGRATION)["results"][0]
    assert first["note_path"] == "Projects/Database migration.md"
    assert first["heading_context"].endswith("Decision")


@pytest.mark.parametrize("question", QUESTIONS, ids=[q[:40] for q in QUESTIONS])
def test_a_hub_chunk_never_outranks_a_note_it_links_to(client: TestClient, question: str) -> None:
    results = search(client, question, top_k=20)["results"]
    for at, result in enumerate(results):
        if not is_hub(result["content"]):
            continue
        linked = linked_names(result["content"]) - {note_name(result["note_path"])}
        below = [r["note_path"] for r in results[at + 1 :] if note_name(r["note_path"]) in linked]
        assert below == [], f"{result['note_path']} ({result['heading_context']}) is above {below}"


def test_the_home_hub_drops_below_the_migration_note(client: TestClient) -> None:
    results = search(client, MIGRATION, top_k=20, max_chunks_per_note=20)["results"]
    paths = [r["note_path"] for r in results]
    if "Home.md" in paths:  # still listed (a boost of the notes, not a filter), but after them
        last_migration = max(i for i, p in enumerate(paths) if p == "Projects/Database migration.md")
        assert paths.index("Home.md") > last_migration


@pytest.mark.parametrize("question", QUESTIONS, ids=[q[:40] for q in QUESTIONS])
def test_at_most_two_chunks_of_a_note_by_default(client: TestClient, question: str) -> None:
    results = search(client, question, top_k=10)["results"]
    assert max(Counter(r["note_path"] for r in results).values()) <= 2
    assert len(results) == 10  # the freed slots went to other notes


def test_max_chunks_per_note_is_a_request_field(client: TestClient) -> None:
    one = search(client, "tamarind rasam", top_k=10, max_chunks_per_note=1)["results"]
    assert max(Counter(r["note_path"] for r in one).values()) == 1
    many = search(client, "tamarind rasam", top_k=10, max_chunks_per_note=5)["results"]
    assert Counter(r["note_path"] for r in many)["Recipes/Tomato rasam.md"] > 2


def test_group_by_note_gives_one_entry_per_note_with_its_best_chunks(client: TestClient) -> None:
    body = search(client, MIGRATION, top_k=4, group_by="note")
    groups = body["groups"]
    assert len(groups) == 4
    assert len({g["note_path"] for g in groups}) == 4
    assert groups[0]["note_path"] == "Projects/Database migration.md"
    assert groups[0]["chunks"][0]["heading_context"].endswith("Decision")
    assert all(1 <= len(g["chunks"]) <= 2 for g in groups)
    assert all(g["score"] == g["chunks"][0]["score"] for g in groups)
    assert [g["score"] for g in groups] == sorted((g["score"] for g in groups), reverse=True)
    # `results` holds the same chunks, note by note
    assert [r["chunk_id"] for r in body["results"]] == [c["chunk_id"] for g in groups for c in g["chunks"]]
    assert search(client, MIGRATION)["groups"] is None


def test_a_question_naming_a_month_ranks_that_months_journal_first(client: TestClient) -> None:
    body = search(client, "how did I sleep in February 2026?")
    assert body["time_intent"] == {
        "text": "February 2026",
        "start": "2026-02-01",
        "end": "2026-02-28",
        "granularity": "month",
    }
    assert body["results"][0]["note_path"] == "Journal/2026/2026-02-17.md"
    # a boost, not a filter: notes from other months still answer (below the month's three notes, which fill
    # the first five with two chunks each under score fusion)
    wider = search(client, "how did I sleep in February 2026?", top_k=10)
    assert any(not (r["date"] or "").startswith("2026-02") for r in wider["results"])


def test_the_boost_is_what_brings_the_months_notes_up(make_client: AppFactory, tmp_path: Path) -> None:
    # keyword-only services (no embedding), with and without the boost
    question = "how did I sleep in February 2026?"
    in_february = []
    for boost in (0.0, 1.0):
        keyword_only = make_client(time_boost=boost, data_dir=tmp_path / str(boost))
        wait_for_job(keyword_only)
        body = search(keyword_only, question, mode="keyword")
        in_february.append(sum((r["date"] or "").startswith("2026-02") for r in body["results"]))
    assert in_february[1] > in_february[0]


def test_relative_times_are_understood_from_today(client: TestClient) -> None:
    intent = search(client, "what did I do this week?")["time_intent"]
    assert intent["granularity"] == "week"
    assert dt.date.fromisoformat(intent["start"]) <= dt.date.today() <= dt.date.fromisoformat(intent["end"])


def test_a_question_without_a_time_has_no_time_intent(client: TestClient) -> None:
    assert search(client, "I may go to the store, what do I need?")["time_intent"] is None
    assert search(client, "what were my intentions and goals for this year?")["time_intent"] is None
