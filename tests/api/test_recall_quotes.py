"""What the per-turn recall quotes answers the question (the /context block asked as the OpenClaw plugin asks
it): a period narrows and never overrules, so the README's own kind of question quotes the decision and no
journal day of the month that only shares a word with it; and a list of links (a map of content, a home note)
is never quoted, only the notes it points to. On a copy of the example vault, by keyword alone (the weights
every uncalibrated model uses) and with the default model (MiniLM, slow)."""

from __future__ import annotations

import datetime as dt
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import EXAMPLE_VAULT, load_settings
from backend.domain.recall.recall_budget import PLUGIN_RECALL
from backend.entrypoints.app import create_app
from tests.api.conftest import recall_block, wait_for_job

TODAY = dt.date(2026, 11, 28)  # "last March" is March 2026, the month of the migration's decision
DECISION = "Projects/Database migration.md"


@pytest.fixture(scope="module", params=["keyword", pytest.param("minilm", marks=pytest.mark.slow)])
def client(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp(request.param)
    vault = root / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    provider = {"embedding_provider": "none"} if request.param == "keyword" else {}
    settings = load_settings(vault_path=vault, data_dir=root / "data", watch=False, today=TODAY, **provider)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        status = wait_for_job(client, timeout=600)
        assert status["job"]["phase"] == "done", status["job"]
        yield client


def test_a_decision_of_the_month_asked_is_quoted_first_and_nothing_unrelated(client: TestClient) -> None:
    sources = recall_block(client, "What did I decide last March about the database?")["sources"]
    assert sources, "the decision is not quoted"
    assert sources[0]["note_path"] == DECISION
    assert "Decision" in sources[0]["heading_context"]
    # March's journal days that tell of a dinner, a book or a keyboard are of the period, not answers
    assert not [s["note_path"] for s in sources if s["note_path"].startswith("Journal/")]


def test_the_decision_is_quoted_and_not_only_the_line_introducing_it(client: TestClient) -> None:
    """The README's question: § Decision opens "Decided at the kickoff and confirmed at the go/no-go:" and
    lists what was decided below it; quoting that line alone tells the agent nothing."""
    block = recall_block(client, "what did I decide about the database migration?")
    decision = [s for s in block["sources"] if s["heading_context"].endswith("Decision")]
    assert decision, block["sources"]
    assert "PostgreSQL 16" in block["context"]  # the first thing decided, right under the introducing line
    assert "pgloader" in block["context"]


def test_a_journal_day_of_the_month_is_ranked_but_not_vouched_for_by_its_period(client: TestClient) -> None:
    response = client.post("/search", json={"query": "What did I decide last March about the database?"})
    results = response.json()["results"]
    days = [r for r in results if r["note_path"].startswith("Journal/2026/2026-03-")]
    assert days, "March's journal days are still found (ranked), only not quoted"
    assert all(r["confidence"] < PLUGIN_RECALL.floor for r in days)


def test_a_question_about_the_month_alone_still_recalls_its_days(client: TestClient) -> None:
    sources = recall_block(client, "What did I do last March?")["sources"]
    assert sources
    assert all(s["note_path"].startswith(("Journal/2026/2026-03-", "Habits/")) for s in sources)


PERSONAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpora" / "personal-dev" / "vault"


@pytest.mark.skipif(not PERSONAL.is_dir(), reason="../shared/corpora/personal-dev is not beside the project")
@pytest.mark.parametrize("provider", ["none", pytest.param("onnx", marks=pytest.mark.slow)])
def test_a_list_of_links_is_never_quoted_only_the_notes_it_points_to(provider: str, tmp_path: Path) -> None:
    """A person's own vault: the Boat map of content's "Money" lines ("whether to borrow for the hull")
    match the question as well as the bank appointment they point to, which answers it by its own words."""
    settings = load_settings(
        vault_path=PERSONAL,
        data_dir=tmp_path,
        watch=False,
        today=dt.date(2025, 11, 15),
        embedding_provider=provider,
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        assert wait_for_job(client, timeout=600)["job"]["phase"] == "done"
        question = "did I end up borrowing money to pay for the hull work"
        searched = [
            r["note_path"] for r in client.post("/search", json={"query": question}).json()["results"]
        ]
        assert "MOCs/Boat MOC.md" in searched  # found by its words all the same
        quoted = [s["note_path"] for s in recall_block(client, question)["sources"]]
        assert "Meetings/2025-02-18 Bank appointment.md" in quoted
        assert not [path for path in quoted if path.startswith("MOCs/") or path == "Home.md"]
