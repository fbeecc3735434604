"""Every search result and note read carries the link that opens the note in Obsidian."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from backend.domain.notes.obsidian_uri import obsidian_uri
from tests.api.conftest import AppFactory, wait_for_job


def test_vault_and_file_are_percent_encoded_in_full() -> None:
    uri = obsidian_uri("My Vault", "Recipes/Tomato rasam & rice #2?.md")
    assert uri == "obsidian://open?vault=My%20Vault&file=Recipes%2FTomato%20rasam%20%26%20rice%20%232%3F.md"
    query = parse_qs(urlsplit(uri).query)  # a URI parser gets the values back exactly
    assert query == {"vault": ["My Vault"], "file": ["Recipes/Tomato rasam & rice #2?.md"]}


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "Kitchen notes"
    (root / "Recipes").mkdir(parents=True)
    (root / "Recipes" / "Tomato rasam & rice.md").write_text("# Tomato rasam\n\nTamarind, tomato, pepper.\n")
    return root


def test_search_results_and_note_reads_link_to_the_note_in_the_vault_named_by_its_folder(
    make_client: AppFactory, tmp_path: Path
) -> None:
    client = make_client(vault_path=_vault(tmp_path))
    wait_for_job(client)
    expected = "obsidian://open?vault=Kitchen%20notes&file=Recipes%2FTomato%20rasam%20%26%20rice.md"

    (hit,) = client.post("/search", json={"query": "tamarind", "top_k": 1}).json()["results"]
    assert hit["obsidian_uri"] == expected
    note = client.get("/note/Recipes/Tomato%20rasam%20%26%20rice.md").json()
    assert note["obsidian_uri"] == expected


def test_vault_name_setting_names_the_vault_in_the_link(make_client: AppFactory, tmp_path: Path) -> None:
    client = make_client(vault_path=_vault(tmp_path), vault_name="kitchen")
    wait_for_job(client)
    (hit,) = client.post("/search", json={"query": "tamarind", "top_k": 1}).json()["results"]
    assert hit["obsidian_uri"].startswith("obsidian://open?vault=kitchen&file=Recipes%2F")
