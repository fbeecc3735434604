"""Not text, not indexed (issue 44, point 2), on a real index of a small vault: a pasted image, a Templater
leftover, a Dataview block, empty and "Untitled" notes, links in properties, and a vault with Bases and
Canvas files beside its notes."""

from __future__ import annotations

import base64
import json
import random
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from backend.application.indexing.verify import verify_index
from backend.application.notes.reading import NoteReader
from backend.domain.models import PointFilter, SearchMode
from backend.domain.notes.note_listing import NoteListFilter
from backend.domain.text.content_policy import ContentPolicy
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness
from tests.vault_files import write, write_notes

BLOB = base64.b64encode(random.Random(44).randbytes(30_000)).decode()  # a small screenshot: 40 kB of base64
DAILY = (
    "---\ndate: 2025-03-14\n---\n"
    "# Friday\n"
    "Booked the ferry to Inishmore for the kayak trip.\n"
    f"![Pasted image](data:image/png;base64,{BLOB})\n"
    "\n"
    "Created <% tp.date.now('YYYY-MM-DD') %> from the daily template.\n"
    "\n"
    "```dataview\nTABLE status FROM #project WHERE due < date(today)\n```\n"
    "\n"
    "Paid the deposit for the cottage.\n"
)
NOTES = {
    "Daily/2025-03-14.md": DAILY,
    "Untitled.md": "",
    "Untitled 1.md": "---\ncreated: 2025-03-01\n---\n\n\n",
    "20250803152246-Untitled 2.md": "Kettlebell swings: five sets of twenty, twice a week.\n",
    "Inbox/Empty.md": "---\ntags: [inbox]\n---\n",
    "Invalid date.md": "```dataview\nLIST FROM #daily\n```\n",
    "People/Anna.md": (
        '---\ncategories: "[[People]]"\nfriends:\n  - "[[Bob]]"\n---\nAnna lends me her kayak.\n'
    ),
    "People/Bob.md": '---\ncategories:\n  - "[[People]]"\n---\nBob fixes bikes.\n',
    "People.md": "---\ntags: [category]\n---\n",
}


class RecordingEmbedder(FakeEmbedder):
    """The fake embedder, keeping every text it was given: what the index sent to be embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed_documents(texts)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


@pytest.fixture
def harness(tmp_path: Path, vault: Path) -> Iterator[Harness]:
    h = Harness(vault, tmp_path / "data", RecordingEmbedder())
    h.index.open()
    h.indexer.sync()
    yield h
    h.close()


def stored(harness: Harness, path: str) -> list[dict[str, object]]:
    points, _ = harness.store.scroll(point_filter=PointFilter(note_paths=(path,)), limit=100, offset=None)
    return sorted((p.payload for p in points), key=lambda p: int(p["chunk_index"]))  # type: ignore[arg-type]


def test_a_pasted_image_templater_and_dataview_are_not_indexed_and_the_lines_stay_true(
    harness: Harness,
) -> None:
    (chunk,) = stored(harness, "Daily/2025-03-14.md")
    text = str(chunk["content"])

    assert "Booked the ferry" in text
    assert "Paid the deposit for the cottage." in text
    for leftover in ("base64", BLOB[:40], "<%", "tp.date", "dataview", "TABLE status"):
        assert leftover not in text
    lines = DAILY.split("\n")
    assert lines[int(chunk["start_line"]) - 1] == "# Friday"  # type: ignore[call-overload]
    assert lines[int(chunk["end_line"]) - 1] == "Paid the deposit for the cottage."  # type: ignore[call-overload]
    embedder: RecordingEmbedder = harness.embedder  # type: ignore[assignment]
    assert not any(BLOB[:40] in t or "tp.date" in t or "TABLE status" in t for t in embedder.texts)


def test_searching_by_keyword_for_the_leftovers_finds_nothing(harness: Harness) -> None:
    # by meaning, a nearest chunk always comes back; by keyword only what holds the words does
    for query in (BLOB[:40], "tp.date.now", "TABLE status", "Untitled", "Invalid date"):
        assert harness.search.search(query, top_k=5, mode=SearchMode.KEYWORD).hits == [], query


def test_a_placeholder_named_note_is_found_by_what_it_says(harness: Harness) -> None:
    assert harness.top_note("kettlebell swings") == "20250803152246-Untitled 2.md"
    (chunk,) = stored(harness, "20250803152246-Untitled 2.md")
    embedder: RecordingEmbedder = harness.embedder  # type: ignore[assignment]
    swings = next(t for t in embedder.texts if "Kettlebell" in t)
    assert "Untitled" not in swings  # the placeholder is not put above the text it embeds
    assert chunk["note_title"] == "20250803152246-Untitled 2"  # results still name the file as Obsidian does


def test_empty_notes_have_no_chunks_yet_are_listed_linked_and_consistent(
    harness: Harness, vault: Path
) -> None:
    for empty in ("Untitled.md", "Untitled 1.md", "Inbox/Empty.md", "Invalid date.md", "People.md"):
        assert stored(harness, empty) == [], empty
    reader = NoteReader(index=harness.index, vault=FileSystemVault(vault), policy=ContentPolicy())
    listed = [r.path for r in reader.list(NoteListFilter(), limit=50).page.notes]
    # still notes: they exist in Obsidian, links reach them; a listing that hid them would misstate the vault
    assert {"Untitled.md", "Untitled 1.md", "Inbox/Empty.md", "People.md"} <= set(listed)
    assert reader.read("Untitled.md").window.total_lines == 0

    report = verify_index(harness.index, FileSystemVault(vault))
    assert not report.drifted, report.findings()
    again = harness.indexer.sync()
    assert (again.indexed, again.repaired) == (0, 0)  # no chunks is what they were written with, not damage


def test_a_note_emptied_loses_its_chunks_and_one_filled_gains_them(harness: Harness, vault: Path) -> None:
    write(vault, "People/Bob.md", '---\ncategories: "[[People]]"\n---\n')
    write(vault, "Untitled 1.md", "Sourdough starter: feed it twice a day.\n")
    harness.indexer.sync()

    assert stored(harness, "People/Bob.md") == []
    assert harness.top_note("sourdough starter") == "Untitled 1.md"
    assert not verify_index(harness.index, FileSystemVault(vault)).drifted


def test_links_in_properties_are_links_as_obsidian_counts_them(harness: Harness) -> None:
    people = harness.index.graph.links_of("People.md")
    assert {b.path for b in people.backlinks} == {"People/Anna.md", "People/Bob.md"}
    anna = harness.index.graph.links_of("People/Anna.md")
    assert {o.path for o in anna.outlinks} == {"People.md", "People/Bob.md"}
    assert {b.path for b in harness.index.graph.links_of("People/Bob.md").backlinks} == {"People/Anna.md"}
    found = harness.search.search(
        "who lends me a kayak", top_k=1, mode=SearchMode.KEYWORD, include_related=True
    )
    assert [h.payload["note_path"] for h in found.hits] == ["People/Anna.md"]
    assert {r.path for r in found.related} >= {"People/Bob.md", "People.md"}  # related by a property's link


def test_bases_and_canvases_beside_the_notes_break_nothing(tmp_path: Path) -> None:
    canvas = {
        "nodes": [
            {
                "id": "a",
                "type": "text",
                "text": "Plan the **kayak** trip",
                "x": 0,
                "y": 0,
                "width": 250,
                "height": 60,
            },
            {"id": "b", "type": "file", "file": "Trip.md", "x": 300, "y": 0, "width": 400, "height": 400},
        ],
        "edges": [{"id": "e", "fromNode": "a", "toNode": "b"}],
    }
    root = write_notes(
        tmp_path / "vault",
        {
            "Trip.md": "# Trip\n\nThe board: [[Trip board.canvas]], the list: ![[Trips.base]]\n",
            "Trips.base": 'filters:\n  and:\n    - file.hasTag("trip")\nviews:\n  - type: table\n',
            "Trip board.canvas": json.dumps(canvas, indent="\t"),
            "Broken.canvas": "{not json",
        },
    )
    h = Harness(root, tmp_path / "data", FakeEmbedder())
    try:
        h.index.open()
        report = h.indexer.sync()
        assert (report.scanned, report.indexed, report.failed) == (1, 1, [])
        links = h.index.graph.links_of("Trip.md")
        assert {a.resolved_path for a in links.attachments} == {"Trip board.canvas", "Trips.base"}
        assert h.top_note("kayak trip board") == "Trip.md"
    finally:
        h.close()
