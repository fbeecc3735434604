"""The `POST /search` contract over HTTP: filters, threshold, total_hits, highlights, dedupe, degraded mode
and every error. Real embedded store on the bundled example vault, keyword-only where the embedder does not
matter (fast); a deterministic fake embedder where it does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from backend.bootstrap import build_services
from backend.config import EXAMPLE_VAULT, Settings, load_settings
from backend.domain.errors import IndexUnavailableError
from backend.entrypoints.app import create_app
from tests.api.conftest import wait_for_job
from tests.application.fakes import FakeEmbedder
from tests.ports import refused_port, refused_url
from tests.vault_files import tiny_vault

ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}


def _settings(data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "vault_path": EXAMPLE_VAULT,
        "data_dir": data_dir,
        "embedding_provider": "none",
    }
    values.update(overrides)
    return load_settings(**values)


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    """One keyword-only service over the example vault, shared by the read-only tests of this module."""
    settings = _settings(tmp_path_factory.mktemp("contract") / "data")
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        wait_for_job(c)
        yield c


def search(client: TestClient, query: str, **fields: object) -> dict:
    body = {"query": query, "top_k": 50, "include_related": False, **fields}
    response = client.post("/search", json=body)
    assert response.status_code == 200, response.text
    return response.json()


def notes(body: dict) -> set[str]:
    return {r["note_path"] for r in body["results"]}


# -- filters -----------------------------------------------------------------------------------------


def test_folders_keep_notes_under_the_folder_at_any_depth(client: TestClient) -> None:
    everywhere = search(client, "mood sleep")
    journal = search(client, "mood sleep", folders=["Journal"])
    assert all(path.startswith("Journal/") for path in notes(journal))
    assert any(path.startswith("Journal/2025/") for path in notes(journal))  # the prefix covers subfolders
    assert any(path.startswith("Journal/2026/") for path in notes(journal))
    assert "Podcasts/Sleep Lab Hour ep 57.md" in notes(everywhere)
    assert journal["total_hits"] < everywhere["total_hits"]


def test_a_nested_folder_excludes_its_parent_folder_notes(client: TestClient) -> None:
    assert "Projects/Database migration.md" in notes(search(client, "migration"))
    meetings = search(client, "migration", folders=["Projects/Meetings"])
    assert notes(meetings) == {
        "Projects/Meetings/2026-03-12 Migration kickoff.md",
        "Projects/Meetings/2026-03-26 Migration go-no-go.md",
    }


def test_tags_match_any_of_the_given_tags(client: TestClient) -> None:
    body = search(client, "Sreenivas rasam", tags=["people", "#recipe"])  # a leading # is allowed
    assert {"People/Sreenivas.md", "Recipes/Tomato rasam.md"} <= notes(body)
    assert all({"people", "recipe"} & set(r["tags"]) for r in body["results"])
    assert "Finance/Money with Sreenivas.md" in notes(search(client, "Sreenivas rasam"))


def test_paths_keep_exactly_those_notes(client: TestClient) -> None:
    body = search(client, "Sreenivas", paths=["People/Sreenivas.md", "Inbox.md"])
    assert notes(body) == {"People/Sreenivas.md", "Inbox.md"}


def test_date_from_keeps_notes_dated_on_or_after_it(client: TestClient) -> None:
    body = search(client, "mood sleep", date_from="2026-03-21")
    assert body["results"]
    assert all(r["date"] is not None and r["date"] >= "2026-03-21" for r in body["results"])
    assert {
        "Journal/2026/2026-03-21.md",
        "Journal/2026/2026-03-28.md",
        "Journal/2026/2026-04-04.md",
    } <= notes(body)  # the bound day itself is included


def test_date_to_keeps_dated_notes_on_or_before_it(client: TestClient) -> None:
    body = search(client, "Sreenivas", date_to="2025-12-31")
    assert all(r["date"] is not None and r["date"] <= "2025-12-31" for r in body["results"])
    assert {"Journal/2025/2025-12-31.md", "People/Sreenivas.md"} <= notes(body)
    assert "Inbox.md" not in notes(body)  # undated notes cannot satisfy a date bound


def test_a_date_range_picks_the_journal_days_inside_it(client: TestClient) -> None:
    body = search(client, "mood sleep", date_from="2026-03-01", date_to="2026-03-15")
    journal_days = {path for path in notes(body) if path.startswith("Journal/")}
    assert journal_days == {
        "Journal/2026/2026-03-02.md",
        "Journal/2026/2026-03-09.md",
        "Journal/2026/2026-03-14.md",
    }


def test_filters_combine_with_and(client: TestClient) -> None:
    body = search(
        client,
        "mood sleep",
        folders=["Journal"],
        tags=["weekend"],
        date_from="2026-03-01",
        date_to="2026-03-31",
    )
    assert notes(body) == {"Journal/2026/2026-03-14.md"}
    assert (
        search(client, "mood sleep", folders=["Journal"], tags=["weekend"], date_to="2026-02-28")["results"]
        == []
    )


# -- threshold and total_hits ------------------------------------------------------------------------


# not a note's name: a named note is put first whatever its score (the entity shortcut)
QUERY = "tamarind rasam coriander"


def test_a_threshold_drops_lower_scores_and_total_hits_drops_with_it(client: TestClient) -> None:
    everything = search(client, QUERY)
    scores = [r["score"] for r in everything["results"]]
    assert everything["total_hits"] == len(scores) < 50  # all candidates are visible, so we can count
    cut = scores[len(scores) // 2]
    assert min(scores) < cut
    above = search(client, QUERY, threshold=cut)
    assert above["results"]
    assert all(r["score"] >= cut for r in above["results"])
    assert above["total_hits"] == sum(score >= cut for score in scores) < everything["total_hits"]
    assert [r["chunk_id"] for r in above["results"]] == [
        r["chunk_id"] for r in everything["results"][: above["total_hits"]]
    ]


def test_a_threshold_above_every_score_returns_nothing_and_counts_nothing(client: TestClient) -> None:
    body = search(client, QUERY, threshold=1e9)
    assert body["results"] == []
    assert body["total_hits"] == 0


def test_threshold_zero_keeps_everything(client: TestClient) -> None:
    assert search(client, QUERY, threshold=0)["total_hits"] == search(client, QUERY)["total_hits"]


def test_total_hits_counts_matches_beyond_top_k_and_shrinks_under_a_filter(client: TestClient) -> None:
    one = search(client, "mood sleep", top_k=1)
    assert len(one["results"]) == 1
    assert one["total_hits"] > 1
    assert one["total_hits"] == search(client, "mood sleep", top_k=50)["total_hits"]  # top_k does not count
    filtered = search(client, "mood sleep", top_k=1, folders=["Podcasts"])
    assert 1 <= filtered["total_hits"] < one["total_hits"]
    assert search(client, "zzzunmatchedword")["total_hits"] == 0


# -- highlights ----------------------------------------------------------------------------------------


def test_highlights_are_the_query_words_found_in_each_result(client: TestClient) -> None:
    body = search(client, "tamarind rasam", max_chunks_per_note=50)  # every matching chunk of the recipe
    assert body["results"][0]["highlights"]
    for result in body["results"]:
        content = result["content"]
        assert all(word in content for word in result["highlights"])  # as written there, original case
        found = {h.casefold() for h in result["highlights"]}
        for word in ("tamarind", "rasam"):
            if re.search(rf"\b{word}\b", content, re.IGNORECASE):
                assert word in found
    assert any("Tamarind" in r["highlights"] for r in body["results"])  # the text's case, not the query's


def test_highlights_leave_out_stop_words(client: TestClient) -> None:
    body = search(client, "what is the rasam")
    assert body["results"]
    assert all(set(r["highlights"]) <= {"rasam", "Rasam"} for r in body["results"])


# -- dedupe ------------------------------------------------------------------------------------------------


def _overlapping_pairs(results: list[dict]) -> list[tuple[dict, dict]]:
    return [
        (a, b)
        for i, a in enumerate(results)
        for b in results[i + 1 :]
        if a["note_path"] == b["note_path"]
        and a["start_line"] <= b["end_line"]
        and b["start_line"] <= a["end_line"]
    ]


@pytest.mark.parametrize("query", ["mood sleep", "Sreenivas", "migration PostgreSQL", "work"])
def test_no_two_results_are_overlapping_chunks_of_one_note(client: TestClient, query: str) -> None:
    assert _overlapping_pairs(search(client, query)["results"]) == []


def test_overlap_chunks_of_a_long_note_take_one_slot_each_stretch(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    paragraphs = [
        f"Paragraph {i}: the lighthouse keeper wrote " + " ".join(f"word{i}x{j}" for j in range(90))
        for i in range(8)
    ]
    (vault / "Lighthouse.md").write_text("# Lighthouse\n\n" + "\n\n".join(paragraphs) + "\n")
    with TestClient(create_app(_settings(tmp_path / "data", vault_path=vault))) as c:
        status = wait_for_job(c)
        chunks = status["indexed_chunks"]
        results = search(c, "lighthouse keeper")["results"]
    assert chunks >= 4  # overlap chunks: neighbours share their boundary lines
    assert _overlapping_pairs(results) == []
    assert 2 <= len(results) < chunks  # chunks that share no line all stay


# -- degraded mode over HTTP ----------------------------------------------------------------------------


@pytest.fixture
def fake_embedder_client(tmp_path: Path) -> Iterator[tuple[TestClient, FakeEmbedder]]:
    fake = FakeEmbedder()
    settings = _settings(tmp_path / "data")
    services = build_services(settings, embedder=fake)
    services.supervisor.open()
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
        wait_for_job(c)
        yield c, fake


@pytest.mark.parametrize("mode", ["hybrid", "dense"])
def test_with_the_embedder_down_answers_from_keywords_and_says_why_then_recovers(
    fake_embedder_client: tuple[TestClient, FakeEmbedder], mode: str
) -> None:
    client, fake = fake_embedder_client
    healthy = search(client, "basmati lemons shopping", mode=mode)
    assert (healthy["status"], healthy["mode"], healthy["warnings"]) == ("healthy", mode, [])

    fake.available = False
    degraded = search(client, "basmati lemons shopping", mode=mode)
    assert degraded["status"] == "degraded"
    assert degraded["mode"] == "keyword"
    assert any("embedder is unavailable" in w and "keyword" in w for w in degraded["warnings"])
    assert degraded["results"][0]["note_path"] == "Shopping list.md"

    fake.available = True
    again = search(client, "basmati lemons shopping", mode=mode)
    assert (again["status"], again["mode"], again["warnings"]) == ("healthy", mode, [])


# -- errors ------------------------------------------------------------------------------------------


def _assert_error(response: object, status: int, code: str, *, recoverable: bool) -> dict:
    assert response.status_code == status, response.text  # type: ignore[attr-defined]
    error = response.json()  # type: ignore[attr-defined]
    assert set(error) == ERROR_KEYS
    assert error["error_code"] == code
    assert error["recoverable"] is recoverable
    assert error["detail"]
    assert error["suggestion"]
    assert "Traceback" not in response.text  # type: ignore[attr-defined]
    return error


@pytest.mark.parametrize(
    "body",
    [
        {"query": ""},
        {"query": "   "},
        {"query": "\n\t"},
        {"query": "x" * 2001},
        {"query": 42},
        {"query": "milk", "top_k": 0},
        {"query": "milk", "top_k": 51},
        {"query": "milk", "top_k": "many"},
        {"query": "milk", "mode": "fuzzy"},
        {"query": "milk", "unknown": 1},
        {"query": "milk", "date_from": "yesterday"},
        {"query": "milk", "date_to": "2026-02-30"},
        {"query": "milk", "date_from": "2026-05-01", "date_to": "2026-01-01"},
        {"query": "milk", "threshold": -0.1},
        {"query": "milk", "threshold": "high"},
        {"query": "milk", "tags": "finance"},
        {},
    ],
)
def test_bad_requests_get_422_in_the_one_error_shape(client: TestClient, body: dict) -> None:
    _assert_error(client.post("/search", json=body), 422, "VALIDATION_ERROR", recoverable=True)


def test_a_422_names_the_offending_field(client: TestClient) -> None:
    error = _assert_error(
        client.post("/search", json={"query": "milk", "top_k": 51}), 422, "VALIDATION_ERROR", recoverable=True
    )
    assert "top_k" in error["detail"]


def test_malformed_json_is_a_422_not_a_crash(client: TestClient) -> None:
    response = client.post("/search", content=b"{not json", headers={"content-type": "application/json"})
    _assert_error(response, 422, "VALIDATION_ERROR", recoverable=True)


def test_a_query_at_the_length_limit_is_accepted(client: TestClient) -> None:
    assert client.post("/search", json={"query": "milk " * 400}).status_code == 200


def test_before_the_first_indexing_wrote_anything_search_says_not_ready(tmp_path: Path) -> None:
    settings = _settings(tmp_path / "data", vault_path=tiny_vault(tmp_path, "tiny-vault"))
    services = build_services(settings)
    # the index exists and is empty: the moment before the first pass
    services.supervisor.open(start_indexing=False)
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
        error = _assert_error(
            c.post("/search", json={"query": "milk"}), 503, "INDEX_NOT_READY", recoverable=True
        )
        assert "rebuild" in error["suggestion"].lower()
        assert "wait" in error["suggestion"].lower()
        assert c.post("/index/rebuild").status_code == 202
        wait_for_job(c)
        assert c.post("/search", json={"query": "milk"}).status_code == 200


def test_an_index_built_with_another_model_is_never_mixed_with_it_and_is_rebuilt_on_request(
    tmp_path: Path,
) -> None:
    settings = _settings(tmp_path / "data", vault_path=tiny_vault(tmp_path, "tiny-vault"))
    with TestClient(create_app(settings)) as first:  # keyword-only index
        wait_for_job(first)
    settings = settings.model_copy(update={"auto_reembed": False})  # kept as it is until asked
    services = build_services(settings, embedder=FakeEmbedder())
    services.supervisor.open()
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
        answer = search(c, "milk")
        assert answer["status"] == "degraded"
        assert "fake-bow" in answer["warnings"][0]
        status = c.get("/index/status").json()
        assert status["model_change"] == (
            "serving none; configured for fake-bow: POST /index/rebuild re-embeds (AUTO_REEMBED=false)"
        )
        assert c.post("/index/sync").status_code == 202  # it catches up as it was built: keyword only
        assert wait_for_job(c)["dense_pending"] == 0
        assert services.embedder is not None
        assert services.embedder.texts_embedded == 0  # type: ignore[attr-defined]  # no fake-bow vector
        assert c.post("/index/rebuild").status_code == 202
        wait_for_job(c)
        assert search(c, "milk")["status"] == "healthy"


@pytest.mark.filterwarnings("ignore:Failed to obtain server version")
@pytest.mark.parametrize("transport", ["http", "grpc"])
def test_an_unreachable_store_does_not_stop_the_service_and_answers_503(
    tmp_path: Path, transport: str
) -> None:
    settings = _settings(
        tmp_path / "data",
        qdrant_url=refused_url(),
        qdrant_prefer_grpc=transport == "grpc",
        qdrant_grpc_port=refused_port(),
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        assert c.get("/health").status_code == 200
        status = c.get("/index/status")
        assert status.status_code == 200
        assert status.json()["store_healthy"] is False
        error = _assert_error(
            c.post("/search", json={"query": "milk"}), 503, "INDEX_UNAVAILABLE", recoverable=True
        )
        assert "unreachable" in error["detail"]
        assert ("UNAVAILABLE" in error["detail"]) is (transport == "grpc")  # the gRPC status, on gRPC only
        assert "Qdrant" in error["suggestion"]
        _assert_error(c.post("/index/rebuild"), 503, "INDEX_UNAVAILABLE", recoverable=True)
        _assert_error(c.post("/index/sync"), 503, "INDEX_UNAVAILABLE", recoverable=True)
        _assert_error(c.get("/note/Inbox.md/links"), 503, "INDEX_UNAVAILABLE", recoverable=True)


def test_the_index_opens_and_indexes_by_itself_once_the_store_is_back(tmp_path: Path) -> None:
    # Another holder of the embedded store makes it unavailable to us, as a stopped Qdrant server would
    # (the same IndexUnavailableError); closing the holder brings it back. No Qdrant server is needed.
    settings = _settings(tmp_path / "data", vault_path=tiny_vault(tmp_path, "tiny-vault"))
    holder = build_services(settings)
    holder.supervisor.open(start_indexing=False)
    services = build_services(settings)
    with pytest.raises(IndexUnavailableError):
        services.supervisor.open()
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
        assert c.get("/index/status").json()["store_healthy"] is False
        _assert_error(c.post("/search", json={"query": "milk"}), 503, "INDEX_UNAVAILABLE", recoverable=True)
        holder.close()  # the store is back
        first = c.post("/search", json={"query": "basmati"})  # re-checks, opens, starts the first indexing
        if first.status_code != 200:  # the indexing may not have written a note yet
            _assert_error(first, 503, "INDEX_NOT_READY", recoverable=True)
        status = wait_for_job(c)
        assert status["store_healthy"] is True
        assert (status["job"]["kind"], status["job"]["phase"], status["indexed_notes"]) == (
            "index",
            "done",
            2,
        )
        assert search(c, "basmati")["results"][0]["note_path"] == "Shopping list.md"


def test_an_invalid_request_answers_422_while_the_store_is_down_and_a_valid_one_503(tmp_path: Path) -> None:
    # The index is opened when the use case starts, after FastAPI validated the request: a request that is
    # wrong anyway is told what is wrong, not that the store is down (an opening dependency would answer 503).
    settings = _settings(tmp_path / "data", vault_path=tiny_vault(tmp_path, "tiny-vault"))
    holder = build_services(settings)  # holds the embedded store, as a stopped Qdrant server would be missing
    holder.supervisor.open(start_indexing=False)
    try:
        services = build_services(settings)
        with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
            invalid = [
                c.post("/search", json={"query": ""}),
                c.post("/context", json={"query": "milk", "max_chars": 0}),
                c.post("/memory", json={"key": "k", "value": "v"}),
                c.get("/notes", params={"limit": 0}),
                c.get("/note/Inbox.md", params={"start_line": 0}),
                c.get("/notes", params={"date_from": "2026-05-01", "date_to": "2026-01-01"}),  # our own check
            ]
            for response in invalid:
                _assert_error(response, 422, "VALIDATION_ERROR", recoverable=True)
            too_many = {"query": "milk", "paths": [f"n{i}.md" for i in range(settings.max_filter_items + 1)]}
            _assert_error(c.post("/search", json=too_many), 413, "REQUEST_TOO_LARGE", recoverable=True)
            valid = [
                c.post("/search", json={"query": "milk"}),
                c.post("/context", json={"query": "milk"}),
                c.post("/memory", json={"key": "k", "value": "v", "source": "Inbox.md"}),
                c.get("/notes"),
                c.get("/note/Inbox.md"),
            ]
            for response in valid:
                _assert_error(response, 503, "INDEX_UNAVAILABLE", recoverable=True)
            assert services.supervisor.opened is False
    finally:
        holder.close()


def test_the_embedded_store_reports_itself_healthy(client: TestClient) -> None:
    assert client.get("/index/status").json()["store_healthy"] is True


def test_an_unexpected_failure_is_a_500_in_the_error_shape_without_a_traceback(tmp_path: Path) -> None:
    app: FastAPI = create_app(_settings(tmp_path / "data", vault_path=tiny_vault(tmp_path, "tiny-vault")))

    @app.get("/test-only/boom")
    def boom() -> None:
        raise RuntimeError("secret internal state: /home/someone/.ssh")

    with TestClient(app, raise_server_exceptions=False) as c:
        response = c.get("/test-only/boom")
        error = _assert_error(response, 500, "INTERNAL_ERROR", recoverable=False)
        assert "secret" not in response.text
        assert "RuntimeError" not in response.text
        assert error["detail"] == "an unexpected error occurred"


def test_notes_indexed_while_the_embedder_was_down_heal_by_themselves(tmp_path: Path) -> None:
    fake = FakeEmbedder()
    fake.available = False
    settings = _settings(tmp_path / "data")
    services = build_services(settings, embedder=fake)
    services.supervisor.catch_up_interval = 0  # probe the embedder on every search, not every 30 s
    services.supervisor.open()
    with TestClient(create_app(settings, services=services), raise_server_exceptions=False) as c:
        status = wait_for_job(c)
        assert status["job"]["phase"] == "done"  # the embedder failing did not fail the indexing
        assert status["dense_pending"] == status["indexed_notes"] > 0
        down = search(c, "basmati lemons shopping")
        assert down["status"] == "degraded"
        assert down["mode"] == "keyword"
        assert down["results"][0]["note_path"] == "Shopping list.md"
        fake.available = True
        search(c, "basmati lemons shopping")  # notices the embedder is back and starts the catch-up
        healed = wait_for_job(c)
        assert healed["dense_pending"] == 0
        again = search(c, "basmati lemons shopping")
        assert again["status"] == "healthy"
        assert again["mode"] == "hybrid"
