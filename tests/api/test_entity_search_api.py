"""Naming a note finds it first (the entity shortcut), on the real Obsidian help vault and on notes we write.

The help-vault names are read with the service's own parser, so every title and alias the vault has is asked.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.application.serving.note_graph import entity_key
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.api.conftest import AppFactory, wait_for_job
from tests.vault_files import write_notes

HELP_VAULT = Path(__file__).resolve().parents[3] / "shared" / "corpora" / "obsidian-help" / "vault"


def _names(vault: Path) -> dict[str, set[str]]:
    """name as written -> paths of the notes that carry it as title or alias."""
    reader = FileSystemVault(vault)
    files, _ = reader.scan()
    names: dict[str, set[str]] = defaultdict(set)
    for file in files:
        note = parse_note(file.rel_path, reader.read_text(file.rel_path)[0])
        for name in (note.title, *note.aliases):
            names[name].add(note.path)
    return names


def _search(client: TestClient, query: str, **extra: object) -> list[str]:
    response = client.post("/search", json={"query": query, "top_k": 10, **extra})
    assert response.status_code == 200, response.text
    return [r["note_path"] for r in response.json()["results"]]


@pytest.mark.skipif(not HELP_VAULT.is_dir(), reason="../shared/corpora is not beside the repo")
def test_every_title_and_alias_of_the_help_vault_finds_its_note_first(make_client: AppFactory) -> None:
    client = make_client(vault_path=HELP_VAULT)
    assert wait_for_job(client, timeout=300)["job"]["phase"] == "done"
    names = _names(HELP_VAULT)
    # notes whose file name is the name count too: Obsidian resolves [[name]] to them as well
    by_key: dict[str, set[str]] = defaultdict(set)
    for name, paths in names.items():
        by_key[entity_key(name)] |= paths
    failures = []
    for name in sorted(names):
        expected = by_key[entity_key(name)]
        results = _search(client, name)
        top = results[: len(expected)]
        if not results or results[0] not in expected or set(top) != expected:
            failures.append(f"{name!r}: expected {sorted(expected)} first, got {results[:3]}")
    assert len(names) > 150  # the vault has 173 notes: a parsing failure must not pass as success
    assert failures == []


NOTES = {
    "People/Sreenivas.md": "---\naliases: [Srini]\ntags: [finance]\n---\nI owe him 1200 rupees.\n",
    "Projects/Sreenivas.md": "Sreenivas Sreenivas Sreenivas: the project named after him.\n",
    "Finance/Ledger.md": "# Ledger\n\nSreenivas 1200, Srini again, Sreenivas paid back Sreenivas.\n",
    "Long note.md": "---\ntitle: The Long One\n---\n"
    + "".join(f"## Part {i}\n\n{'word ' * 150}\n\n" for i in range(5)),
}


@pytest.fixture
def small_client(indexed_client: AppFactory, tmp_path: Path) -> TestClient:
    return indexed_client(vault_path=write_notes(tmp_path / "vault", NOTES))


@pytest.mark.parametrize("query", ["Sreenivas", "  sreenivas? ", "[[Sreenivas]]", "SREENIVAS"])
def test_notes_sharing_a_name_all_come_first_in_path_order(small_client: TestClient, query: str) -> None:
    results = _search(small_client, query, mode="keyword")
    assert results[:2] == ["People/Sreenivas.md", "Projects/Sreenivas.md"]
    assert results.count("People/Sreenivas.md") == 1  # the shortcut's chunk is not listed twice


def test_an_alias_finds_its_note_before_notes_that_repeat_it(small_client: TestClient) -> None:
    assert _search(small_client, "srini")[0] == "People/Sreenivas.md"


def test_a_named_note_opens_at_its_first_chunk(small_client: TestClient) -> None:
    response = small_client.post("/search", json={"query": "the long one", "top_k": 3})
    first = response.json()["results"][0]
    assert (first["note_path"], first["start_line"]) == ("Long note.md", 4)


def test_the_shortcut_respects_filters(small_client: TestClient) -> None:
    assert "People/Sreenivas.md" not in _search(small_client, "Sreenivas", folders=["Projects"])
    assert _search(small_client, "Sreenivas", paths=["Projects/Sreenivas.md"]) == ["Projects/Sreenivas.md"]
