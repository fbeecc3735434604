"""The link graph kept by indexing: resolution as files come and go. (Related notes in one query:
tests/application/use_cases/test_search_rules.py.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from backend.domain.errors import NoteNotFoundError
from tests.harness import Harness

NOTES = {
    "Projects/Migration.md": (
        "# Migration\n\nSee [[Risks]] and [[Meetings/Kickoff|the kickoff]] and [[Future plan]].\n"
    ),
    "Projects/Risks.md": "# Risks\n\nDowntime. Back to [[migration#Decision]].\n",
    "Meetings/Kickoff.md": "# Kickoff\n\nWe met about the [[Migration]]. ![[diagram.png]]\n",
    "diagram.png": "not really a png",
    "Lonely.md": "# Lonely\n\nNobody links here.\n",
}


@pytest.fixture
def harness(tmp_path: Path) -> Iterator[Harness]:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    h = Harness(root, tmp_path / "data", None)
    h.index.open()
    h.indexer.sync()
    h.root = root  # type: ignore[attr-defined]
    yield h
    h.close()


def test_outlinks_backlinks_unresolved_and_attachments(harness: Harness) -> None:
    links = harness.index.graph.links_of("Projects/Migration.md")
    assert {(o.path, o.text) for o in links.outlinks} == {
        ("Projects/Risks.md", None),
        ("Meetings/Kickoff.md", "the kickoff"),
    }
    assert [u.target for u in links.unresolved] == ["Future plan"]
    assert {b.path for b in links.backlinks} == {"Projects/Risks.md", "Meetings/Kickoff.md"}
    risks_backlink = next(b for b in links.backlinks if b.path == "Projects/Risks.md")
    assert risks_backlink.anchor == "Decision"  # written [[migration#Decision]], in another case
    kickoff = harness.index.graph.links_of("Meetings/Kickoff.md")
    assert [a.resolved_path for a in kickoff.attachments] == ["diagram.png"]


def test_unknown_note_raises_not_found(harness: Harness) -> None:
    with pytest.raises(NoteNotFoundError):
        harness.index.graph.links_of("Nope.md")


def test_creating_the_missing_note_resolves_links_to_it(harness: Harness) -> None:
    root: Path = harness.root  # type: ignore[attr-defined]
    (root / "Ideas").mkdir()
    (root / "Ideas" / "Future plan.md").write_text("# Future plan\n")
    harness.indexer.sync()
    assert harness.index.graph.links_of("Projects/Migration.md").unresolved == []
    back = harness.index.graph.links_of("Ideas/Future plan.md").backlinks
    assert [b.path for b in back] == ["Projects/Migration.md"]


def test_deleting_a_note_turns_links_to_it_unresolved(harness: Harness) -> None:
    root: Path = harness.root  # type: ignore[attr-defined]
    (root / "Projects" / "Risks.md").unlink()
    harness.indexer.sync()
    links = harness.index.graph.links_of("Projects/Migration.md")
    assert "Risks" in [u.target for u in links.unresolved]
    assert "Projects/Risks.md" not in [o.path for o in links.outlinks]
    with pytest.raises(NoteNotFoundError):
        harness.index.graph.links_of("Projects/Risks.md")


def test_edited_note_keeps_only_its_new_links(harness: Harness) -> None:
    root: Path = harness.root  # type: ignore[attr-defined]
    (root / "Projects" / "Migration.md").write_text("# Migration\n\nOnly [[Lonely]] now.\n")
    harness.indexer.sync()
    links = harness.index.graph.links_of("Projects/Migration.md")
    assert [o.path for o in links.outlinks] == ["Lonely.md"]
    assert links.unresolved == []
    assert "Projects/Migration.md" not in {
        b.path for b in harness.index.graph.links_of("Projects/Risks.md").backlinks
    }
