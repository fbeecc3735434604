"""A note is found by what its properties say (who wrote a book, who came to a meeting), by keyword, as a
person files it; `KEYWORD_WEIGHT_PROPERTIES=0` reads them no more."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.api.conftest import served_vault

VAULT = {
    "Books/Four Thousand Weeks.md": "---\nauthor: Oliver Burkeman\nfinished: 2024-03-17\ntags: [book]\n---\n"
    "# Four Thousand Weeks\n\nRead it in the run-up to Easter, drowning in marking.\n",
    "Books/Klara and the Sun.md": "---\nauthor: Kazuo Ishiguro\nfinished: 2024-11-28\ntags: [book]\n---\n"
    "# Klara and the Sun\n\nSlow and sad; I read it in the weeks I couldn't climb.\n",
    "Meetings/2025-03-27 Chemistry team.md": '---\nattendees: [me, "[[Callum]]", Bernie]\n---\n'
    "# Chemistry team\n\nStock check done: the magnesium ribbon is nearly out, two balances broken.\n",
    "Meetings/2025-06-19 Science dept.md": "---\nattendees: [Fiona, Oz, Priya]\n---\n# Science dept\n\n"
    "End-of-year reports, the lab rota for September.\n",
    "People/Callum.md": "# Callum\n\nTechnician. Keeps the prep room running.\n",
}


def _first(root: Path, question: str, **settings: object) -> str:
    with served_vault(root, VAULT, "keyword", **settings) as client:
        response = client.post("/search", json={"query": question, "top_k": 5})
        assert response.status_code == 200, response.text
        return str(response.json()["results"][0]["note_path"])


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("the book by Burkeman", "Books/Four Thousand Weeks.md"),
        ("which meeting did Bernie come to", "Meetings/2025-03-27 Chemistry team.md"),
    ],
)
def test_a_note_is_found_by_its_properties(tmp_path: Path, question: str, note: str) -> None:
    assert _first(tmp_path / "read", question) == note


@pytest.mark.parametrize(
    ("question", "note"),
    [
        ("the book by Burkeman", "Books/Four Thousand Weeks.md"),
        ("which meeting did Bernie come to", "Meetings/2025-03-27 Chemistry team.md"),
    ],
)
def test_without_the_properties_weight_they_are_not_read(tmp_path: Path, question: str, note: str) -> None:
    assert _first(tmp_path, question, keyword_weight_properties=0.0) != note
