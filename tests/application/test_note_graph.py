"""The link graph kept by indexing: resolution as files come and go, and related notes in one query."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from backend.domain.errors import NoteNotFoundError
from backend.infrastructure.index_catalog import EdgeIndexCatalog
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


class CallCounter:
    """Delegates to the real graph store and counts the calls made through it."""

    def __init__(self, real: Any) -> None:
        self._real = real
        self.calls: list[str] = []

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._real, name)
        if not callable(attr):
            return attr

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls.append(name)
            return attr(*args, **kwargs)

        return counted


class WatchedCatalog:
    """The real catalog, whose graph stores are handed out behind a `CallCounter`."""

    def __init__(self, real: EdgeIndexCatalog) -> None:
        self._real = real
        self.graph_stores: list[CallCounter] = []

    def open(self, generation: str) -> tuple[Any, Any]:
        store, graph = self._real.open(generation)
        self.graph_stores.append(CallCounter(graph))
        return store, self.graph_stores[-1]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


@pytest.mark.parametrize("result_count", [1, 3, 50])
def test_related_notes_cost_one_store_query_however_many_results(tmp_path: Path, result_count: int) -> None:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(60):
        (root / f"n{i:02d}.md").write_text(
            f"# n{i:02d}\n\nShared words here. Next: [[n{(i + 1) % 60:02d}]]\n"
        )
    catalog = WatchedCatalog(EdgeIndexCatalog(tmp_path / "data"))
    h = Harness(root, tmp_path / "data", None, catalog=catalog)
    try:
        h.index.open()
        h.indexer.sync()
        (counter,) = catalog.graph_stores  # watching the port, the store stays real
        counter.calls.clear()
        outcome = h.search.search("shared words", top_k=result_count, include_related=True)
        assert len({hit.payload["note_path"] for hit in outcome.hits[:result_count]}) == result_count
        assert counter.calls == ["links_touching"]
        assert outcome.related
        assert all(r.link_count >= 1 for r in outcome.related)
    finally:
        h.close()
