"""`/note/{path}` and `/note/{path}/links` take the path without `.md`, and a note's title or alias when only
one note answers to it; a miss names the closest paths."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from backend.domain.links import NoteRecord
from backend.domain.notes.note_lookup import lookup_note
from tests.api.conftest import wait_for_job


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> TestClient:
    from backend.config import load_settings
    from backend.entrypoints.app import create_app

    vault = tmp_path_factory.mktemp("vault")
    (vault / "Recipes").mkdir()
    (vault / "Recipes" / "Tomato rasam.md").write_text(
        "---\naliases: [Rasam]\n---\n# Tomato rasam\n\nTamarind.\n"
    )
    (vault / "Recipes" / "Lemon rice.md").write_text("# Lemon rice\n\nSee [[Tomato rasam]].\n")
    (vault / "Journal").mkdir()
    (vault / "Journal" / "Ideas.md").write_text("# Ideas\n\nsome\n")
    (vault / "Ideas.md").write_text("# Ideas\n\nother\n")
    (vault / "Work").mkdir()
    (vault / "Work" / "Plans.md").write_text("# Plans\n\nwork\n")
    (vault / "Journal" / "Plans.md").write_text("# Plans\n\nhome\n")
    settings = load_settings(
        vault_path=vault, data_dir=tmp_path_factory.mktemp("data"), embedding_provider="none", watch=False
    )
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        wait_for_job(client)
        yield client  # type: ignore[misc]


@pytest.mark.parametrize(
    "asked",
    [
        "Recipes/Tomato%20rasam",
        "Recipes/Tomato%20rasam.md",
        "recipes/tomato%20RASAM",
        "Tomato%20rasam",
        "Rasam",
    ],
)
def test_a_note_is_found_by_path_without_md_title_or_alias(client: TestClient, asked: str) -> None:
    note = client.get(f"/note/{asked}")
    assert note.status_code == 200, note.json()
    assert note.json()["note_path"] == "Recipes/Tomato rasam.md"
    links = client.get(f"/note/{asked}/links")
    assert links.status_code == 200, links.json()
    assert [b["note_path"] for b in links.json()["backlinks"]] == ["Recipes/Lemon rice.md"]


def test_an_ambiguous_name_names_every_note_it_could_mean(client: TestClient) -> None:
    answer = client.get("/note/ideas").json()  # two notes are titled Ideas, but one's path is ideas(.md)
    assert answer["note_path"] == "Ideas.md"
    ambiguous = client.get("/note/plans")  # only names match: never a guess
    assert ambiguous.status_code == 404
    assert ambiguous.json()["detail"] == "'plans' could mean 2 notes"
    assert ambiguous.json()["suggestion"] == "Use one of these paths: Journal/Plans.md, Work/Plans.md"


def test_a_miss_suggests_the_closest_paths(client: TestClient) -> None:
    miss = client.get("/note/Recipes/Tomato%20rasm")
    assert miss.status_code == 404
    body = miss.json()
    assert body["error_code"] == "NOTE_NOT_FOUND"
    assert body["suggestion"].startswith("Did you mean: Recipes/Tomato rasam.md")
    links = client.get("/note/Recipes/Tomato%20rasm/links").json()
    assert links["suggestion"] == body["suggestion"]


def test_at_most_five_suggestions() -> None:
    records = [
        NoteRecord(path=f"Daily/2026-03-{day:02}.md", title=f"2026-03-{day:02}") for day in range(1, 20)
    ]
    found = lookup_note("Daily/2026-03-4", records)
    assert found.found is None
    assert len(found.closest) == 5
    assert found.closest[0] in {"Daily/2026-03-04.md", "Daily/2026-03-14.md"}


def test_paths_are_still_checked_first(client: TestClient) -> None:
    assert client.get("/note/..%2Fsecrets").json()["error_code"] == "SECURITY_VIOLATION"
