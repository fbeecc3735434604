"""A /search over several vaults presents only what its merge keeps (issue 46, point 8), on two small vaults
of their own (keyword search, no model): the answer is the one presenting every hit would give (its memory
suggestion included), a vault whose answer fails as it is presented is missing while the other fills the
list, and vaults on a Qdrant server (asked at once, each in its own trip) answer the same."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from backend.api import vault_answers, vault_search
from backend.application import operations
from backend.application.search import stage_clock
from backend.application.search.presenting import present_hits
from backend.domain.recall.memory_suggestion import SUGGEST_AMONG
from tests import two_vaults

RENT = "how much rent do I owe Sam?"
WORK = {
    "Rent.md": "# Rent\n\nThe rent: how much rent do I owe Sam? Rent, rent and Sam's rent.\n",
    "Budget/Budget 1.md": "# Budget 1\n\nThe budget: approved budget, budget spent, budget left.\n",
    "Budget/Budget 2.md": "# Budget 2\n\nThe second budget: budget approved, budget spent.\n",
    "Budget/Budget 3.md": "# Budget 3\n\nA third budget: budget approved, budget spent.\n",
}
PERSONAL = {
    "Sam.md": "# Sam\n\nI owe Sam 20 EUR. Sam and the rent: Sam, Sam, rent.\n",
    "Notes.md": "# Notes\n\nI owe Sam 400 EUR for the rent.\n",
    "Garden.md": "# Garden\n\nTomatoes, basil and a small budget for seeds.\n",
}
SHAPES: list[dict[str, Any]] = [
    {"query": RENT, "top_k": 2},
    {"query": RENT, "top_k": 3, "group_by": "note"},
    {"query": "budget", "top_k": 3},
    {"query": "budget seeds", "top_k": 2, "include_memory": True},
    {"query": RENT, "top_k": 1, "why_not": "vault:personal/Notes.md"},  # every hit presented, one explained
    {"query": "budget", "top_k": 2, "explain": True},
]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with two_vaults.in_process(tmp_path, (WORK, PERSONAL)) as client:
        yield client


def _post(client: TestClient, **body: object) -> dict:
    response = client.post("/search", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def _line_kept(offered: dict, results: list[dict]) -> bool:
    return any(
        (r["vault"], r["note_path"]) == (offered["vault"], offered["source"])
        and r["start_line"] <= offered["start_line"] <= r["end_line"]
        for r in results
    )


@pytest.mark.parametrize("query", [RENT, "how much do I owe Sam?", "budget"])
@pytest.mark.parametrize("top_k", [1, 2, 3])
def test_the_suggestion_is_its_vault_s_own_and_of_a_result_kept(
    client: TestClient, query: str, top_k: int
) -> None:
    # each vault's suggestion is of its first hits as it answers alone, kept by the merge or not: offered
    # only when a kept result holds its line (the surest result's vault first), never one of the kept alone
    merged = _post(client, query=query, top_k=top_k)
    own = [
        _post(client, query=query, top_k=top_k, vaults=[name])["memory_suggestion"]
        for name in ("work", "personal")
    ]
    lead = merged["results"][0]["vault"]
    offers = sorted((o for o in own if o is not None), key=lambda o: o["vault"] != lead)
    expected = next((o for o in offers if _line_kept(o, merged["results"])), None)
    assert merged["memory_suggestion"] == expected


def test_a_fact_of_a_cut_hit_is_not_traded_for_a_kept_one(client: TestClient) -> None:
    # personal's own answer offers the rent it owes (Notes, its result 2), which the merge cuts behind work's
    # Rent and personal's Sam: the 20 EUR of Sam's note is not offered in its place
    alone = _post(client, query=RENT, top_k=2, vaults=["personal"])
    assert [r["note_path"] for r in alone["results"]] == ["Sam.md", "Notes.md"]
    assert alone["memory_suggestion"]["source"] == "Notes.md"
    merged = _post(client, query=RENT, top_k=2)
    assert [(r["vault"], r["note_path"]) for r in merged["results"]] == [
        ("work", "Rent.md"),
        ("personal", "Sam.md"),
    ]
    assert merged["memory_suggestion"] is None


@pytest.mark.parametrize("on_a_server", [False, True])
def test_a_vault_failing_as_its_answer_is_presented_is_missing_while_the_other_fills_the_list(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, on_a_server: bool
) -> None:
    if on_a_server:  # presented at once, then merged again in the thread pool
        _on_a_server(monkeypatch)
    work_alone = _post(client, query="budget", top_k=3, vaults=["work"])["results"]

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the facts' store broke")

    services = client.app.state.library.services  # type: ignore[attr-defined]
    monkeypatch.setattr(services["personal"].memory, "search", broken)
    answer = _post(client, query="budget", top_k=3, include_memory=True)
    assert [(m["vault"], m["error_code"]) for m in answer["missing_vaults"]] == [
        ("personal", "INTERNAL_ERROR")
    ]
    assert answer["status"] == "degraded"
    # personal's Garden would have been kept; work's three fill the list in its place
    assert [r["chunk_id"] for r in answer["results"]] == [r["chunk_id"] for r in work_alone]
    assert {r["vault"] for r in answer["results"]} == {"work"}
    monkeypatch.setattr(services["work"].memory, "search", broken)
    none = client.post("/search", json={"query": "budget", "top_k": 3, "include_memory": True})
    assert none.status_code == 503
    assert none.json()["error_code"] == "VAULT_UNAVAILABLE"
    assert "Traceback" not in none.text
    # personal failing as it searches, work as it is presented: named in the order asked all the same
    monkeypatch.setattr(services["personal"].search, "search", broken)
    detail = client.post("/search", json={"query": "budget", "include_memory": True}).json()["detail"]
    assert detail.index("work:") < detail.index("personal:")


def _answer(client: TestClient, body: dict[str, Any]) -> dict:
    answer = _post(client, **body)
    answer.pop("search_time_ms")
    for stage in answer.get("stages") or ():  # the stages run, not how long each took
        stage.pop("ms")
    return answer


@pytest.mark.parametrize("broken", [False, True])
def test_vaults_on_a_server_answer_as_vaults_in_this_process(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, broken: bool
) -> None:
    if broken:  # and a vault failing as it is presented is missing there too
        services = client.app.state.library.services  # type: ignore[attr-defined]
        monkeypatch.setattr(services["personal"].memory, "search", lambda *a, **k: 1 / 0)
    in_turn = [_answer(client, body) for body in SHAPES]
    _on_a_server(monkeypatch)
    assert [_answer(client, body) for body in SHAPES] == in_turn


def _on_a_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """The vaults asked as vaults whose stores are a Qdrant server's: searched at once, presented at once."""
    for module in (vault_search, vault_answers):
        monkeypatch.setattr(module, "in_process", lambda library, names: False)


def test_vaults_on_a_server_are_presented_at_once(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # each vault's presenting waits for the other's: presented one after another, the first would wait in vain
    both = threading.Barrier(2, timeout=10)
    presented = vault_search.found_answer

    def at_once(*args: Any, **kwargs: Any) -> Any:
        both.wait()
        return presented(*args, **kwargs)

    _on_a_server(monkeypatch)
    monkeypatch.setattr(vault_search, "found_answer", at_once)
    answer = _post(client, query="budget seeds", top_k=3)
    assert answer["missing_vaults"] == []
    assert {r["vault"] for r in answer["results"]} == {"work", "personal"}


def test_a_hit_the_merge_cuts_is_not_highlighted(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    presented: list[tuple[str, bool]] = []  # (chunk id, highlighted)

    def spy(hits: Any, *args: Any, highlight: bool = True, **kwargs: Any) -> Any:
        presented.extend((hit.id, highlight) for hit in hits)
        return present_hits(hits, *args, highlight=highlight, **kwargs)

    alone = {
        name: _post(client, query="budget seeds", top_k=2, vaults=[name])["results"]
        for name in ("work", "personal")
    }
    monkeypatch.setattr(operations, "present_hits", spy)
    merged = _post(client, query="budget seeds", top_k=2)
    shown = {r["chunk_id"] for r in merged["results"]}
    assert {chunk for chunk, highlighted in presented if highlighted} == shown
    # the others read are each vault's first hits, for its suggestion's sake, no more
    heads = {r["chunk_id"] for own in alone.values() for r in own[:SUGGEST_AMONG]}
    assert {chunk for chunk, highlighted in presented if not highlighted} <= heads - shown


def test_the_stages_of_a_merged_answer_are_its_lead_vault_s_own(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # work leads on the rent and is searched first; personal's search takes 5 s by a clock of the test's own:
    # work's hits wait for it to be presented, and that wait is no stage of work's
    ahead = [0.0]
    monkeypatch.setattr(stage_clock, "perf_counter", lambda: time.perf_counter() + ahead[0])
    personal = client.app.state.library.services["personal"].search  # type: ignore[attr-defined]
    searched = personal.search

    def slow(*args: Any, **kwargs: Any) -> Any:
        outcome = searched(*args, **kwargs)
        ahead[0] += 5.0
        return outcome

    monkeypatch.setattr(personal, "search", slow)
    answer = _post(client, query=RENT, top_k=3, explain=True)
    assert answer["results"][0]["vault"] == "work"
    stages = {stage["stage"]: stage["ms"] for stage in answer["stages"]}
    assert "presenting" in stages
    assert max(stages.values()) < 1000, stages
