"""A result brought by a list of links says so over HTTP: `pointed_from` names the list's chunk and lines."""

from __future__ import annotations

from pathlib import Path

from tests.api.conftest import AppFactory
from tests.application.use_cases.test_pointer_rules import MAP, NOTES, QUESTION
from tests.vault_files import write_notes


def test_a_note_found_through_a_map_line_names_the_map_chunk_in_pointed_from(
    indexed_client: AppFactory, tmp_path: Path
) -> None:
    client = indexed_client(vault_path=write_notes(tmp_path / "vault", NOTES))
    answer = client.post("/search", json={"query": QUESTION, "mode": "keyword", "top_k": 5})
    assert answer.status_code == 200, answer.text
    first = answer.json()["results"][0]
    assert first["note_path"] == "House/Boiler service.md"
    pointer = first["pointed_from"]
    assert pointer["note_path"] == MAP
    assert 1 <= pointer["start_line"] <= pointer["end_line"] <= MAP_LINES
    # every other result that no list brought says null, not an empty pointer
    assert all(r["pointed_from"] is None for r in answer.json()["results"] if r["note_path"] == MAP)


MAP_LINES = NOTES[MAP].count("\n")
