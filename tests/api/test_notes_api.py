"""Reading notes over HTTP: GET /note/{path} (whole, or the lines of a search hit and around it), GET /notes
(filters and paging), and paths that try to leave the vault."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from backend.bootstrap import build_services
from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from tests.api.conftest import AppFactory, wait_for_job
from tests.application.fakes import GatedEmbedder
from tests.vault_files import write

ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}
LEDGER = "Finance/Money with Sreenivas.md"


@pytest.fixture
def client(indexed_client: AppFactory) -> TestClient:
    return indexed_client()


def note(client: TestClient, path: str, **params: int) -> dict:
    response = client.get(f"/note/{quote(path)}", params=params)
    assert response.status_code == 200, response.text
    return response.json()


def test_a_whole_note_with_its_metadata(client: TestClient) -> None:
    body = note(client, LEDGER)
    on_disk = (EXAMPLE_VAULT / LEDGER).read_text(encoding="utf-8")
    assert body["content"] == on_disk.rstrip("\n")
    assert body["total_lines"] == len(on_disk.splitlines())
    assert (body["start_line"], body["end_line"]) == (1, body["total_lines"])
    assert body["note_title"] == "Money with Sreenivas"
    assert body["aliases"] == ["Sreenivas ledger", "IOU Sree"]
    assert body["tags"] == ["finance", "ledger"]
    assert body["date"] == "2026-01-10"
    assert body["size_bytes"] == (EXAMPLE_VAULT / LEDGER).stat().st_size
    assert body["sensitive_categories"] == ["finance"]
    assert body["status"] == "healthy"


@pytest.mark.parametrize(
    "query", ["how much do I owe Sreenivas", "knee exercises", "database migration risks"]
)
def test_a_search_hit_reads_back_through_its_line_range(client: TestClient, query: str) -> None:
    hits = client.post("/search", json={"query": query, "top_k": 3}).json()["results"]
    assert hits
    for hit in hits:
        window = note(client, hit["note_path"], start_line=hit["start_line"], end_line=hit["end_line"])
        assert (window["start_line"], window["end_line"]) == (hit["start_line"], hit["end_line"])
        assert hit["content"] in window["content"]  # the chunk is an exact slice of its lines
        wider = note(
            client, hit["note_path"], start_line=max(1, hit["start_line"] - 3), end_line=hit["end_line"] + 3
        )
        assert window["content"] in wider["content"]


def test_line_ranges_past_the_end_and_upside_down(client: TestClient) -> None:
    total = note(client, LEDGER)["total_lines"]
    tail = note(client, LEDGER, start_line=total - 1, end_line=total + 50)
    assert tail["end_line"] == total
    assert len(tail["content"].split("\n")) == 2
    past = client.get(f"/note/{quote(LEDGER)}", params={"start_line": total + 1})
    assert past.status_code == 422
    assert past.json()["error_code"] == "VALIDATION_ERROR"
    assert "past the end" in past.json()["detail"]
    backwards = client.get(f"/note/{quote(LEDGER)}", params={"start_line": 5, "end_line": 2})
    assert backwards.status_code == 422
    assert client.get(f"/note/{quote(LEDGER)}", params={"start_line": 0}).status_code == 422


def test_a_path_that_is_no_indexed_note_is_404(client: TestClient) -> None:
    for path in ("Nope.md", ".obsidian/app.json", ".trash/Shopping list (old).md", "Finance"):
        response = client.get(f"/note/{quote(path)}")
        assert response.status_code == 404, path
        assert set(response.json()) == ERROR_KEYS
        assert response.json()["error_code"] == "NOTE_NOT_FOUND"


# Sent as raw URL paths: the client must not normalise them away before the service sees them.
TRAVERSALS = [
    "%2e%2e/%2e%2e/etc/passwd",
    "..%2f..%2fetc%2fpasswd",
    "Finance/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    "%252e%252e%252fetc%252fpasswd",
    "%2fetc%2fpasswd",
    "/etc/passwd",
    "..%5c..%5cwindows%5cwin.ini",
    "C:%5cWindows%5cwin.ini",
    "Home.md%00.txt",
]


@pytest.mark.parametrize("raw", TRAVERSALS)
def test_paths_leaving_the_vault_are_security_violations_everywhere(client: TestClient, raw: str) -> None:
    for url in (f"/note/{raw}", f"/note/{raw}/links"):
        response = client.get(url)
        assert response.status_code == 400, (url, response.text)
        assert response.json()["error_code"] == "SECURITY_VIOLATION"
        assert "root:" not in response.text
    listed = client.get("/notes", params={"folder": "../.."})
    assert listed.status_code == 400
    assert listed.json()["error_code"] == "SECURITY_VIOLATION"
    searched = client.post("/search", json={"query": "password", "paths": ["../../etc/passwd"]})
    assert searched.status_code == 400
    assert searched.json()["error_code"] == "SECURITY_VIOLATION"


def test_a_symlink_out_of_the_vault_is_never_read(make_client: AppFactory, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write(outside, "secret.md", "# Secret\n\nThe launch code is 0000-SWORDFISH.\n")
    vault = tmp_path / "vault"
    write(vault, "Inside.md", "# Inside\n\nA normal note.\n")
    os.symlink(outside / "secret.md", vault / "Link.md")
    client = make_client(vault_path=vault)
    wait_for_job(client)
    response = client.get("/note/Link.md")
    assert response.status_code == 404
    assert "SWORDFISH" not in response.text
    assert "SWORDFISH" not in client.post("/search", json={"query": "launch code swordfish"}).text
    assert [n["note_path"] for n in client.get("/notes").json()["notes"]] == ["Inside.md"]


def test_a_note_deleted_after_indexing_is_404_not_a_crash(make_client: AppFactory, tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    write(vault, "Gone.md", "# Gone\n\nSoon deleted.\n")
    client = make_client(vault_path=vault)  # no watcher: the index still lists it
    wait_for_job(client)
    (vault / "Gone.md").unlink()
    response = client.get("/note/Gone.md")
    assert response.status_code == 404
    assert response.json()["error_code"] == "NOTE_NOT_FOUND"
    assert "no longer on the disk" in response.json()["detail"]


@pytest.fixture
def listing(make_client: AppFactory, tmp_path: Path) -> TestClient:
    vault = tmp_path / "listing"
    write(vault, "Home.md", "# Home\n")
    write(vault, "Finance/Budget.md", "---\ndate: 2026-01-02\ntags: [finance, budget]\n---\n# Budget\n")
    write(vault, "Finance/Ledger.md", "---\ndate: 2026-03-28\ntags: [finance/ledger]\n---\n# Ledger\n")
    write(vault, "Financial news.md", "---\ndate: 2026-02-01\n---\n# News\n\n#financial\n")
    write(vault, "Journal/2026/2026-03-28.md", "---\ndate: 2026-03-28\n---\n# Day\n\n#journal #Health\n")
    for i, name in enumerate(
        [
            "Finance/Budget.md",
            "Financial news.md",
            "Finance/Ledger.md",
            "Journal/2026/2026-03-28.md",
            "Home.md",
        ]
    ):
        stamp = 1_767_225_600 + i * 86_400  # 2026-01-01 plus i days, UTC
        os.utime(vault / name, (stamp, stamp))
    client = make_client(vault_path=vault)
    wait_for_job(client)
    return client


def listed(client: TestClient, **params: object) -> list[str]:
    response = client.get("/notes", params=params)
    assert response.status_code == 200, response.text
    return [n["note_path"] for n in response.json()["notes"]]


def test_listing_filters(listing: TestClient) -> None:
    everything = ["Finance/Budget.md", "Finance/Ledger.md", "Financial news.md", "Home.md"]
    assert listed(listing) == [*everything, "Journal/2026/2026-03-28.md"]
    assert listed(listing, folder="Finance") == ["Finance/Budget.md", "Finance/Ledger.md"]
    assert listed(listing, folder="/Journal/") == ["Journal/2026/2026-03-28.md"]
    assert listed(listing, tag="#Finance") == ["Finance/Budget.md", "Finance/Ledger.md"]
    assert listed(listing, tag="health") == ["Journal/2026/2026-03-28.md"]  # an inline tag, other case
    assert listed(listing, date_from="2026-02-01", date_to="2026-03-27") == ["Financial news.md"]
    assert listed(listing, modified_since="2026-01-03T00:00:00Z") == [
        "Finance/Ledger.md", "Home.md", "Journal/2026/2026-03-28.md",
    ]  # fmt: skip
    assert listed(listing, modified_since="2026-01-05") == ["Home.md"]  # a day alone: midnight UTC
    assert listed(listing, sort="modified")[0] == "Home.md"
    assert listed(listing, sort="date")[:2] == ["Finance/Ledger.md", "Journal/2026/2026-03-28.md"]


def test_listing_pages(listing: TestClient) -> None:
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = listing.get("/notes", params={"limit": 2, "offset": offset}).json()
        assert page["total"] == 5
        seen += [n["note_path"] for n in page["notes"]]
        offset = page["next_offset"]
    assert seen == listed(listing)
    first = listing.get("/notes", params={"limit": 1}).json()["notes"][0]
    assert first["modified"].startswith("2026-01-01T00:00:00")
    assert first["tags"] == ["finance", "budget"]
    assert first["sensitive_categories"] == ["finance"]


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 501}, {"offset": -1}, {"sort": "size"}, {"date_from": "2026-13-01"},
     {"date_from": "2026-03-02", "date_to": "2026-03-01"}, {"modified_since": "yesterday"}],
)  # fmt: skip
def test_listing_rejects_bad_parameters(listing: TestClient, params: dict) -> None:
    response = listing.get("/notes", params=params)
    assert response.status_code == 422
    assert response.json()["error_code"] == "VALIDATION_ERROR"


def test_a_listing_during_the_first_indexing_says_it_may_be_incomplete(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for i in range(3):
        write(vault, f"Note {i}.md", f"# Note {i}\n\nText {i}.\n")
    settings = load_settings(
        vault_path=vault, data_dir=tmp_path / "data", embedding_provider="none", watch=False
    )
    embedder = GatedEmbedder()  # the first pass waits at the gate, inside the indexing job
    with TestClient(create_app(settings, services=build_services(settings, embedder=embedder))) as client:
        client.get("/notes")  # opens the index, which starts the first indexing
        assert embedder.entered.wait(timeout=60)
        during = client.get("/notes").json()
        assert during["status"] == "degraded"
        assert "first indexing is still running" in during["warnings"][0]
        embedder.gate.set()
        wait_for_job(client)
        after = client.get("/notes").json()
        assert (after["status"], after["total"]) == ("healthy", 3)
