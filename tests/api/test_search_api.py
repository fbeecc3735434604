"""The HTTP contract, on the real embedded store and the bundled example vault (keyword-only here for speed;
the dense path over HTTP is covered in test_end_to_end.py)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.infrastructure.embedders.onnx_model_files import DEFAULT_VARIANT, variant_model_name
from tests.api.conftest import AppFactory, wait_for_job
from tests.vault_files import write, write_notes

ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}


@pytest.fixture
def client(indexed_client: AppFactory) -> TestClient:
    return indexed_client()


def test_health(client: TestClient) -> None:
    assert client.get("/health").json()["status"] == "ok"


def test_status_after_the_first_background_index(client: TestClient) -> None:
    status = client.get("/index/status").json()
    assert status["indexed_notes"] >= 20
    assert status["indexed_chunks"] >= status["indexed_notes"]
    assert status["embedding_model"] == "none"
    assert status["last_indexed"] is not None
    assert status["dense_pending"] == 0  # keyword-only: nothing waits for an embedder
    assert status["job"]["phase"] == "done"
    assert status["job"]["done"] == status["job"]["total"] == status["indexed_notes"]


def test_search_returns_the_documented_fields(client: TestClient) -> None:
    body = client.post("/search", json={"query": "Sreenivas", "top_k": 3}).json()
    assert body["query"] == "Sreenivas"
    assert body["status"] == "degraded"  # no embedder configured: keyword only, and it says so
    assert body["mode"] == "keyword"
    assert body["warnings"]
    assert 1 <= len(body["results"]) <= 3
    assert body["total_hits"] >= len(body["results"])
    assert body["search_time_ms"] >= 0
    first = body["results"][0]
    assert set(first) >= {
        "chunk_id", "note_path", "note_title", "content", "score", "heading_context",
        "start_line", "end_line", "tags", "date",
    }  # fmt: skip
    assert "Sreenivas" in first["content"] or "Sreenivas" in first["note_title"]
    assert 1 <= first["start_line"] <= first["end_line"]


def test_result_lines_point_at_the_returned_text(client: TestClient) -> None:
    status = client.get("/index/status").json()
    hit = client.post("/search", json={"query": "shopping list", "top_k": 1}).json()["results"][0]
    lines = (Path(status["vault_path"]) / hit["note_path"]).read_text(encoding="utf-8").splitlines()
    window = "\n".join(lines[hit["start_line"] - 1 : hit["end_line"]])
    first_line = hit["content"].strip().splitlines()[0]
    assert first_line in window


def test_unknown_path_uses_the_error_shape(client: TestClient) -> None:
    response = client.get("/nope")
    assert response.status_code == 404
    assert response.json()["error_code"] == "NOT_FOUND"


def test_rebuild_is_accepted_and_a_second_one_conflicts(client: TestClient) -> None:
    first = client.post("/index/rebuild")
    assert first.status_code == 202
    job_id = first.json()["job_id"]
    second = client.post("/index/rebuild")
    if second.status_code == 409:  # the first may already be done on a fast machine
        assert second.json()["error_code"] == "REINDEX_IN_PROGRESS"
        assert second.json()["recoverable"] is True
    else:
        assert second.status_code == 202
    status = wait_for_job(client)
    assert status["job"]["phase"] == "done"
    assert status["indexed_notes"] >= 20
    assert job_id


def test_status_keeps_the_job_before_the_current_one_as_it_ended(client: TestClient) -> None:
    """A client following the job it started finds its end once another has begun (a queued sync starts
    the moment a job ends: the plugin's `kb sync` and the CLI polled for it forever)."""
    before = wait_for_job(client)["job"]
    started = client.post("/index/sync")
    assert started.status_code == 202
    status = wait_for_job(client)
    assert status["job"]["id"] == started.json()["job_id"]
    assert status["previous_job"]["id"] == before["id"]
    assert status["previous_job"]["phase"] == before["phase"]
    assert status["previous_job"]["finished_at"] is not None


ONNX_MODEL = variant_model_name(DEFAULT_VARIANT)


def test_a_keyword_only_index_answers_by_keyword_while_the_service_embeds_it_by_itself(
    make_client: AppFactory, tmp_path: Path
) -> None:
    data = tmp_path / "mismatch"
    first = make_client(data_dir=data)
    wait_for_job(first)
    first.__exit__(None, None, None)
    second = make_client(data_dir=data, embedding_provider="onnx")
    status = second.get("/index/status").json()
    assert (status["index_model"], status["embedding_model"]) == ("none", ONNX_MODEL)
    body = second.post("/search", json={"query": "milk"}).json()
    if status["model_change"] is not None:  # the rebuild the service started may be done already
        assert status["model_change"].startswith(f"serving none; re-embedding for {ONNX_MODEL}: ")
        assert body["status"] == "degraded"
        assert body["mode"] == "keyword"
        assert "rebuild" in body["warnings"][0]
    assert body["results"]
    done = wait_for_job(second)
    assert (done["job"]["kind"], done["index_model"], done["model_change"]) == ("rebuild", ONNX_MODEL, None)
    assert second.post("/search", json={"query": "milk"}).json()["status"] == "healthy"


def test_the_service_answers_while_the_first_indexing_runs(make_client: AppFactory, tmp_path: Path) -> None:
    notes = {
        f"note {i:04d}.md": f"# Note {i}\n\nThe lighthouse keeper logged storm number {i}.\n"
        for i in range(3000)
    }
    vault = write_notes(tmp_path / "big-vault", notes)
    client = make_client(vault_path=vault)
    status = client.get("/index/status").json()  # startup did not wait for indexing to finish
    assert status["job"]["kind"] == "index"
    assert status["job"]["finished_at"] is None
    assert client.get("/health").status_code == 200
    early = client.post("/search", json={"query": "lighthouse storm"})
    if early.status_code == 503:
        assert early.json()["error_code"] == "INDEX_NOT_READY"
    else:
        assert "still running" in " ".join(early.json()["warnings"])
    done = wait_for_job(client)
    assert done["indexed_notes"] == 3000
    assert "still running" not in " ".join(client.post("/search", json={"query": "storm"}).json()["warnings"])


def test_a_note_with_broken_frontmatter_is_searchable_and_listed(
    make_client: AppFactory, tmp_path: Path
) -> None:
    vault = tmp_path / "broken"
    vault.mkdir()
    (vault / "Broken.md").write_text(
        "---\ntitle: [unclosed\ntags: {\n---\n# Broken\n\nThe quokka census is due.\n"
    )
    (vault / "Fine.md").write_text("---\ntags: [ok]\n---\n# Fine\n\nNothing to see.\n")
    client = make_client(vault_path=vault)
    status = wait_for_job(client)
    assert status["indexed_notes"] == 2
    problems = [f for f in status["failed_files"] if f["path"] == "Broken.md"]
    assert problems
    assert "frontmatter" in problems[0]["reason"]
    hit = client.post("/search", json={"query": "quokka census"}).json()["results"][0]
    assert hit["note_path"] == "Broken.md"


def test_a_tag_filter_finds_what_obsidian_and_the_notes_listing_find(
    make_client: AppFactory, tmp_path: Path
) -> None:
    """Any case, nested tags too, the same notes as /notes; a note whose tags change is found by its new tags
    only, once synced."""
    notes = {
        "Alpha.md": "---\ntags: [Project/Alpha]\n---\n# Alpha\n\nThe kiln firing schedule.\n",
        "Beta.md": "# Beta\n\nThe kiln glaze recipe. #project\n",
        "Gamma.md": "# Gamma\n\nThe kiln shelf order. #projector\n",
        "Delta.md": "# Delta\n\nThe kiln vent. #other\n",
    }
    vault = write_notes(tmp_path / "tagged", notes)
    client = make_client(vault_path=vault)
    wait_for_job(client)

    def found(*tags: str) -> list[str]:
        body = client.post("/search", json={"query": "kiln", "top_k": 10, "tags": list(tags)}).json()
        return sorted(r["note_path"] for r in body["results"])

    def listed(tag: str) -> list[str]:
        return sorted(n["note_path"] for n in client.get("/notes", params={"tag": tag}).json()["notes"])

    for tag in ("project", "PROJECT", "#Project", "project/alpha", "projector", "other"):
        assert found(tag) == listed(tag), tag
    assert found("project") == ["Alpha.md", "Beta.md"]  # not "projector": a prefix is not a tag
    assert found("Project/ALPHA") == ["Alpha.md"]
    assert found("projector", "OTHER") == ["Delta.md", "Gamma.md"]
    wrong = client.post("/search", json={"query": "kiln", "tags": ["proj"]}).json()
    assert wrong["results"] == []
    assert "no indexed note has the tag 'proj'" in " ".join(wrong["warnings"])

    write(vault, "Beta.md", "# Beta\n\nThe kiln glaze recipe. #archive\n")
    assert client.post("/index/sync").status_code == 202
    wait_for_job(client)
    assert found("project") == ["Alpha.md"]
    assert found("Archive") == ["Beta.md"]


def test_filters_that_match_nothing_say_so(client: TestClient) -> None:
    """An unknown folder, tag or path is named in `warnings` (with the closest names the index holds) by
    /search, /context and /notes; the answer is whole, so the status does not turn degraded for it."""
    wrong = {"folders": ["finance"], "tags": ["Nonexistent-tag"], "paths": ["Recipes/Tomato rasam"]}
    said = [
        "no indexed note has the path 'Recipes/Tomato rasam' (did you mean 'Recipes/Tomato rasam.md'?)",
        "no indexed note is under the folder 'finance' (did you mean 'Finance'?)",
        "no indexed note has the tag 'Nonexistent-tag'",
    ]
    found = client.post("/search", json={"query": "owe", **wrong}).json()
    assert found["results"] == []
    assert found["warnings"][-3:] == said
    context = client.post("/context", json={"query": "owe", **wrong}).json()
    assert context["warnings"][-3:] == said
    right = client.post("/search", json={"query": "owe", "folders": ["Finance"], "tags": ["finance"]}).json()
    assert right["results"]
    assert not [w for w in right["warnings"] if w.startswith("no indexed note")]

    listed = client.get("/notes", params={"folder": "Nope", "tag": "finance"}).json()
    assert listed["total"] == 0
    assert listed["warnings"] == ["no indexed note is under the folder 'Nope'"]
    assert listed["status"] == "healthy"  # the listing is complete: only the filter was wrong
    assert (
        client.get("/notes", params={"tag": "Finance"}).json()["warnings"] == []
    )  # a listing's tag: any case


def test_explain_says_where_the_search_time_went(client: TestClient) -> None:
    plain = client.post("/search", json={"query": "Sreenivas", "top_k": 3})
    assert plain.json()["stages"] is None  # only when asked
    response = client.post("/search", json={"query": "Sreenivas", "top_k": 3, "explain": True})
    body = response.json()
    stages = [entry["stage"] for entry in body["stages"]]
    assert stages[0] == "analysis"
    assert {"store_query", "ranking", "confidence", "presenting"} <= set(stages)
    assert stages[-1] == "serialisation"
    assert len(stages) == len(set(stages))
    searched = sum(entry["ms"] for entry in body["stages"] if entry["stage"] != "serialisation")
    assert searched <= body["search_time_ms"] + 0.01  # the stages are parts of the search, not extra
    timing = response.headers["Server-Timing"]
    assert all(f"{stage};dur=" in timing for stage in stages)  # dev tools show the same stages


def test_status_says_how_late_the_event_loop_wakes(client: TestClient) -> None:
    deadline = time.monotonic() + 30
    while (lag := client.get("/index/status").json()["loop_lag"])["probes"] < 2:  # one probe each 50 ms
        assert time.monotonic() < deadline, lag
    assert 0 <= lag["p50_ms"] <= lag["p99_ms"] <= lag["max_ms"]
