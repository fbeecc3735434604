"""The explain data the look-inside page shows: why each result ranks where it does (/search `explain`), why a
named note is not higher (`why_not`), what became of every candidate of a recall block (/context `explain`),
a note's chunks as the index holds them and the vault's links to nothing yet. The example vault plus a note
with a secret and links to notes not written; keyword search (no model), except the hybrid test at the end."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.bootstrap import build_services
from backend.config import EXAMPLE_VAULT, load_settings
from backend.domain.recall.recall_budget import PLUGIN_RECALL
from backend.entrypoints.app import create_app
from tests.api.conftest import recall_block, wait_for_job
from tests.application.fakes import FakeEmbedder

LEDGER = "Finance/Money with Sreenivas.md"
QUESTION = "how much do I owe Sreenivas?"
KNEE = "Health/Knee physio plan.md"
SECRET_NOTE = "Projects/Deploy keys.md"
SECRET = "AKIAIOSFODNN7EXAMPLE"
DEPLOY = f"""---
tags: [devops]
---
# Deploy keys

Rotate the deploy key for the staging bucket every quarter. #security

AWS key for staging: {SECRET}

See [[Key rotation runbook]] and [[Incident log 2026]].
"""


def _vault(root: Path) -> Path:
    vault = root / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    (vault / SECRET_NOTE).write_text(DEPLOY, encoding="utf-8")
    return vault


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    root = tmp_path_factory.mktemp("explain")
    settings = load_settings(
        vault_path=_vault(root), data_dir=root / "data", embedding_provider="none", watch=False
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        wait_for_job(c)
        yield c


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """The same vault searched hybrid, dense vectors from the fake embedder (bag of words)."""
    root = tmp_path_factory.mktemp("explain-hybrid")
    settings = load_settings(vault_path=_vault(root), data_dir=root / "data", watch=False)
    services = build_services(settings, embedder=FakeEmbedder(spread=True))
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
        wait_for_job(c)
        yield c


def search(client: TestClient, query: str, **extra: object) -> dict:
    response = client.post("/search", json={"query": query, **extra})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_without_explain_the_answer_carries_no_explain_data(client: TestClient) -> None:
    answer = search(client, QUESTION)
    assert answer["explain"] is None
    assert all(result["why"] is None for result in answer["results"])


def test_each_result_says_its_keyword_place_and_the_words_it_holds(client: TestClient) -> None:
    answer = search(client, QUESTION, mode="keyword", explain=True)
    first = answer["results"][0]
    assert first["note_path"] == LEDGER
    why = first["why"]
    assert why["dense"] is None  # keyword mode: no dense side to place it on
    assert why["keyword"]["rank"] == 1
    assert why["keyword"]["score"] == pytest.approx(first["score"], abs=1e-3)
    assert "sreenivas" in why["keyword"]["terms"]
    assert "owe" in why["keyword"]["terms"]
    assert "much" not in why["keyword"]["terms"]  # a stop word is not evidence
    assert answer["explain"]["fusion"] is None
    assert answer["explain"]["candidates"]["keyword"] > 0
    ranks = [r["why"]["keyword"]["rank"] for r in answer["results"]]
    assert ranks == sorted(ranks), "keyword mode ranks by the keyword side"
    assert set(why["confidence_features"]) >= {"coverage", "keyword score / max IDF"}


def test_the_recall_verdicts_are_what_the_recall_block_quotes(client: TestClient) -> None:
    answer = search(client, QUESTION, mode="keyword", explain=True, top_k=8)
    said_quoted = [
        f"{r['note_path']}:{r['start_line']}-{r['end_line']}"
        for r in answer["results"]
        if r["why"]["recall"]["quoted"]
    ]
    block = recall_block(client, QUESTION, mode="keyword")
    assert said_quoted == [source["attribution"] for source in block["sources"]]
    for result in answer["results"]:
        if result["confidence"] < PLUGIN_RECALL.floor:
            assert result["why"]["recall"] == {"quoted": False, "reason": "below the floor"}


def test_a_greeting_would_add_nothing_and_each_candidate_says_why(client: TestClient) -> None:
    block = recall_block(client, "good night", explain=True)
    assert block["context"] == ""
    considered = block["explain"]["considered"]
    assert considered, "keyword search finds 'night' in the journal"
    assert {c["reason"] for c in considered} == {"below the floor"}
    assert block["explain"]["floor"] == PLUGIN_RECALL.floor


def test_an_entry_given_in_an_earlier_turn_is_said_to_be_repeated(client: TestClient) -> None:
    first = recall_block(client, QUESTION, mode="keyword", explain=True)
    quoted = [c for c in first["explain"]["considered"] if c["quoted"]]
    assert [c["attribution"] for c in quoted] == [s["attribution"] for s in first["sources"]]
    given = first["sources"][0]["attribution"]
    again = recall_block(client, QUESTION, mode="keyword", explain=True, exclude=[given])
    fates = {c["attribution"]: c["reason"] for c in again["explain"]["considered"]}
    assert fates[given] == "repeated"
    assert given not in again["context"]


def test_why_not_places_a_note_below_the_results_and_says_so(client: TestClient) -> None:
    answer = search(client, QUESTION, mode="keyword", explain=True, why_not=KNEE, top_k=3)
    why_not = answer["explain"]["why_not"]
    assert why_not["note_path"] == KNEE
    assert why_not["indexed"]
    assert why_not["final_rank"] is None
    assert KNEE not in {r["note_path"] for r in answer["results"]}
    assert why_not["keyword"]["terms"] == []  # the physio plan holds none of the question's words
    assert "None of the question's words" in why_not["reason"] or "common words" in why_not["reason"]


def test_why_not_a_note_among_the_results_gives_its_place(client: TestClient) -> None:
    answer = search(client, QUESTION, mode="keyword", why_not="Money with Sreenivas")  # its title
    why_not = answer["explain"]["why_not"]
    assert why_not["note_path"] == LEDGER
    assert why_not["final_rank"] == 1
    assert why_not["reason"] == "It is result 1."
    assert answer["results"][0]["why"] is not None  # why_not implies explain


def test_why_not_names_the_filter_that_leaves_a_note_out(client: TestClient) -> None:
    answer = search(client, QUESTION, mode="keyword", folders=["Journal"], why_not=LEDGER)
    why_not = answer["explain"]["why_not"]
    assert why_not["note_path"] == LEDGER
    assert why_not["final_rank"] is None
    assert "filters" in why_not["reason"]


@pytest.mark.parametrize("asked", ["Nowhere/Nothing.md", "../outside.md", "Knee physo plan", "knee phisio"])
def test_why_not_a_note_that_is_not_indexed(client: TestClient, asked: str) -> None:
    """A path of no note, one outside the vault, or a name a letter off a note's: none is an indexed note,
    so no side scored it and no rule moved it."""
    why_not = search(client, QUESTION, why_not=asked)["explain"]["why_not"]
    assert why_not["indexed"] is False
    assert why_not["note_path"] is None
    assert "No indexed note" in why_not["reason"]
    assert (why_not["dense"], why_not["keyword"], why_not["rules"]) == (None, None, [])
    assert "side" not in why_not["reason"]  # nothing said of where a note that is not there ranks


@pytest.mark.parametrize("asked", ["Knee physo plan", "knee phisio"])
def test_a_misspelt_name_gets_the_closest_notes(client: TestClient, asked: str) -> None:
    closest = search(client, QUESTION, why_not=asked)["explain"]["why_not"]["closest"]
    assert closest[0] == KNEE  # did you mean
    assert len(closest) <= 5


def test_an_alias_counts_as_a_name_to_be_close_to(client: TestClient) -> None:
    # "Orders DB migration" is the migration note's alias
    closest = search(client, QUESTION, why_not="Orders DB migrashun")["explain"]["why_not"]["closest"]
    assert "Projects/Database migration.md" in closest


def test_a_question_naming_a_time_says_what_it_did_to_each_note(client: TestClient) -> None:
    answer = search(client, "journal entries from March 2026", mode="keyword", explain=True, top_k=10)
    assert answer["explain"]["time_boost"] is not None
    factors = {r["why"]["time_factor"] for r in answer["results"]}
    assert factors
    assert None not in factors
    boosted = [r for r in answer["results"] if r["why"]["time_factor"] > 1]
    assert boosted, "notes of March 2026 are boosted"
    assert all(r["date"] is None or r["date"].startswith("2026-03") for r in boosted)
    assert all(any("Of the period asked" in rule for rule in r["why"]["rules"]) for r in boosted)


def test_the_period_and_each_notes_factor_are_what_the_ranking_applied(client: TestClient) -> None:
    answer = search(client, "journal entries from March 2026", mode="keyword", explain=True, top_k=10)
    period = answer["explain"]["period"]
    assert (period["text"], period["start"], period["end"]) == ("March 2026", "2026-03-01", "2026-03-31")
    assert period["factor"] > 1 > period["other_time_factor"]
    assert answer["explain"]["time_boost"] == pytest.approx(period["factor"] - 1)
    for result in answer["results"]:
        why = result["why"]
        if (
            result["date"]
            and result["date"].startswith("2026-03")
            and result["note_path"].startswith("Journal")
        ):
            assert (why["time_factor"], why["time_reason"]) == (period["factor"], "of the period asked")
        if why["time_reason"] == "dated at another time":
            assert why["time_factor"] == period["other_time_factor"]
            assert "Dated at another time (March 2026)" in " ".join(why["rules"])
        # keyword mode: the score is the keyword side's own times the factor
        assert result["score"] == pytest.approx(why["keyword"]["score"] * why["time_factor"], rel=1e-3)


def test_a_named_note_is_said_to_be_put_first(client: TestClient) -> None:
    answer = search(client, "Knee physio plan", mode="keyword", explain=True)
    first = answer["results"][0]
    assert first["note_path"] == KNEE
    assert any("names this note" in rule for rule in first["why"]["rules"])


def test_a_notes_chunks_as_stored_with_what_was_embedded(client: TestClient) -> None:
    answer = client.get(f"/note/{SECRET_NOTE}/chunks").json()
    assert answer["note_path"] == SECRET_NOTE
    assert answer["current"] is True
    chunks = answer["chunks"]
    assert [c["chunk_index"] for c in chunks] == list(range(len(chunks)))
    text = "\n".join(c["embedded_text"] for c in chunks)
    assert text.startswith("Deploy keys")  # the title heads what was embedded
    assert "security" in chunks[0]["embedded_text"].split("\n\n")[0]  # the inline tag, as words
    assert SECRET not in text
    assert "[REDACTED" in text
    assert all(
        c["tags"] == ["devops", "security"] or set(c["tags"]) == {"devops", "security"} for c in chunks
    )
    lines = DEPLOY.splitlines()
    body = [c for c in chunks if "Rotate the deploy key" in c["embedded_text"]][0]
    assert any("Rotate the deploy key" in line for line in lines[body["start_line"] - 1 : body["end_line"]])


def test_chunks_of_a_missing_note_or_one_outside_the_vault(client: TestClient) -> None:
    missing = client.get("/note/Nowhere.md/chunks")
    assert missing.status_code == 404
    assert missing.json()["error_code"] == "NOTE_NOT_FOUND"
    outside = client.get("/note/..%2F..%2Fetc%2Fpasswd/chunks")
    assert outside.status_code in (400, 404)
    assert outside.json()["error_code"] in ("SECURITY_VIOLATION", "NOTE_NOT_FOUND")


def test_unresolved_links_are_paged_through_the_whole_vault(client: TestClient) -> None:
    first = client.get("/links/unresolved", params={"limit": 1}).json()
    total = first["total"]
    assert total >= 2
    assert len(first["items"]) == 1
    assert first["next_offset"] == 1
    seen = list(first["items"])
    offset = first["next_offset"]
    while offset is not None:
        page = client.get("/links/unresolved", params={"limit": 1, "offset": offset}).json()
        seen += page["items"]
        offset = page["next_offset"]
    assert len(seen) == total
    mine = {(i["source_path"], i["target"]) for i in seen if i["source_path"] == SECRET_NOTE}
    assert mine == {(SECRET_NOTE, "Key rotation runbook"), (SECRET_NOTE, "Incident log 2026")}
    assert client.get("/links/unresolved", params={"limit": 0}).status_code == 422


@pytest.mark.slow
def test_hybrid_explain_fuses_both_sides_as_the_ranking_did(tmp_path: Path) -> None:
    settings = load_settings(
        vault_path=_vault(tmp_path), data_dir=tmp_path / "data", embedding_provider="onnx", watch=False
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        wait_for_job(client, timeout=600)
        answer = search(client, QUESTION, explain=True, top_k=5)
    explain = answer["explain"]
    assert explain["fusion"] == "adaptive"
    weights = explain["weights"]
    assert weights["dense"] + weights["keyword"] == pytest.approx(1.0)
    assert 0.3 <= weights["dense"] <= 0.7
    for result in answer["results"]:
        why = result["why"]
        assert why["dense"]["rank"] is not None
        assert -1 <= why["dense"]["score"] <= 1
        if not why["rules"] or all(rule.startswith("Its note fills") for rule in why["rules"]):
            # no rule moved it: its score is the fusion's
            assert result["score"] == pytest.approx(why["fused_score"], abs=1e-3)
    assert "dense similarity" in answer["results"][0]["why"]["confidence_features"]


def _rebuilt(result: dict, weights: dict) -> float:
    """A result's score from its explain fields alone, as a person would work it out."""
    why = result["why"]
    fused = weights["dense"] * why["dense_normalised"] + weights["keyword"] * why["keyword_normalised"]
    assert why["fused_score"] == pytest.approx(fused, abs=2e-4)
    return fused * (why["time_factor"] if why["time_factor"] is not None else 1.0)


@pytest.mark.parametrize(
    "question", [QUESTION, "what did we decide in March 2026 about the migration", "database migration"]
)
def test_each_score_is_rebuilt_by_hand_from_its_explain_fields(hybrid: TestClient, question: str) -> None:
    answer = search(hybrid, question, explain=True, top_k=8)
    explain = answer["explain"]
    weights = explain["weights"]
    assert weights["dense"] + weights["keyword"] == pytest.approx(1.0)
    for result in answer["results"]:
        why = result["why"]
        rebuilt = None
        if why["fused_score"] is not None:  # else fusion never saw it: a rule set its score
            assert 0 <= why["dense_normalised"] <= 1
            assert 0 <= why["keyword_normalised"] <= 1
            rebuilt = _rebuilt(result, weights)
        if rebuilt is None or result["score"] != pytest.approx(rebuilt, abs=1e-3):
            # another rule set it, and says so with the score it set
            assert any(f"{result['score']:.4f}" in rule for rule in why["rules"]), (result["score"], why)
    if explain["period"] is not None:
        assert max(r["score"] for r in answer["results"]) <= explain["period"]["factor"] + 1e-9


def test_why_not_follows_one_chunk_and_names_the_rules_that_moved_it(hybrid: TestClient) -> None:
    question, shown = "what did we decide in March 2026 about the migration", 5
    # the same search, deep enough to show the chunk why_not follows: every place it gives is that chunk's
    deep = search(hybrid, question, explain=True, top_k=50, max_chunks_per_note=2)
    shown_notes = {r["note_path"] for r in search(hybrid, question, top_k=shown)["results"]}
    # a note of the period asked that the first results leave out (rules moved it, or it ranks below them)
    missing = next(
        r["note_path"]
        for r in deep["results"]
        if r["note_path"] not in shown_notes and r["why"]["time_factor"] not in (None, 1.0)
    )
    answer = search(hybrid, question, top_k=shown, why_not=missing)
    why_not = answer["explain"]["why_not"]
    assert why_not["note_path"] == missing
    assert why_not["final_rank"] is None
    places = [
        (i + 1, r)
        for i, r in enumerate(deep["results"])
        if (r["note_path"], r["start_line"]) == (why_not["note_path"], why_not["start_line"])
    ]
    assert places, "the chunk why_not follows is where the search ranks it"
    rank, chunk = places[0]
    assert why_not["ranked"] == rank
    assert why_not["dense"]["rank"] == chunk["why"]["dense"]["rank"]
    assert why_not["keyword"]["rank"] == chunk["why"]["keyword"]["rank"]
    assert (why_not["time_factor"], why_not["time_reason"]) == (
        chunk["why"]["time_factor"],
        chunk["why"]["time_reason"],
    )
    reason = why_not["reason"]
    assert f"ranks {why_not['fused_rank']}" in reason
    assert (f"below the {shown} results shown" in reason) == (rank > shown)
    if why_not["fused_rank"] <= shown:
        assert why_not["rules"], "fused among the shown, something pushed it out: it is named"
    if why_not["time_factor"] != 1:
        period = [rule for rule in why_not["rules"] if "(March 2026)" in rule]
        assert period
        assert f"×{why_not['time_factor']:.2f}" in period[0]
        assert why_not["time_reason"][1:] in period[0]


def test_why_not_names_the_threshold_that_cut_a_note(hybrid: TestClient) -> None:
    note = "Projects/Meetings/2026-03-26 Migration go-no-go.md"
    plain = search(hybrid, "database migration", why_not=note)["explain"]["why_not"]
    assert plain["final_rank"] is not None  # among the 5 results without a threshold
    cut = search(hybrid, "database migration", why_not=note, threshold=0.75)["explain"]["why_not"]
    assert (cut["final_rank"], cut["ranked"]) == (None, None)
    assert any("below the threshold 0.75" in rule for rule in cut["rules"]), cut["rules"]
    assert "results shown" not in cut["reason"]  # it was cut, not outranked
