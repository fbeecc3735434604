"""Keeping the index in line with the disk: targeted refreshes, moves without re-embedding, keyword first,
and rebuilds that never stop the serving index. Real files, real embedded store, a fake embedder."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.domain.models import SearchMode
from backend.infrastructure.embedders.cache import CachedEmbedder
from tests.application.fakes import FakeEmbedder, GatedEmbedder
from tests.harness import NOTES, Harness
from tests.vault_files import write

LONG_NOTE = "Projects/Long plan.md"
LONG_TEXT = "".join(
    f"## Part {n}\n\n" + " ".join(f"topic{n} detail{n}x{i}" for i in range(150)) + "\n\n" for n in range(4)
)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in {**NOTES, LONG_NOTE: LONG_TEXT, "Ideas/Linker.md": "See [[Sreenivas]].\n"}.items():
        write(root, rel, text)
    return root


@pytest.fixture
def harness(vault: Path, make_harness: Callable[..., Harness]) -> Harness:
    # every pass here embeds as it writes (no keyword-first pass), unless a test asks for one
    h = make_harness(vault, FakeEmbedder(), keyword_first_min=1000)
    h.index.open()
    h.indexer.sync()
    return h


def paths_in_index(h: Harness) -> list[str]:
    return sorted({p.payload["note_path"] for p in h.store.scroll(limit=1000)[0]})


def test_a_moved_note_keeps_its_vectors_and_its_links_follow(harness: Harness, vault: Path) -> None:
    assert harness.embedder is not None
    before = harness.embedder.texts_embedded
    os.makedirs(vault / "People")
    os.rename(vault / "Finance/Sreenivas.md", vault / "People/Sreenivas.md")

    report = harness.indexer.refresh(["Finance/Sreenivas.md", "People/Sreenivas.md"])

    assert (report.renamed, report.removed) == (1, 0)
    assert harness.embedder.texts_embedded == before  # nothing embedded again
    assert "Finance/Sreenivas.md" not in paths_in_index(harness)
    assert harness.top_note("owe Sreenivas rupees", SearchMode.DENSE) == "People/Sreenivas.md"
    assert harness.index.graph.links_of("Ideas/Linker.md").outlinks[0].path == "People/Sreenivas.md"


def test_a_renamed_note_is_found_by_its_new_name_and_links_to_the_old_name_open(
    harness: Harness, vault: Path
) -> None:
    assert harness.embedder is not None
    before = harness.embedder.texts_embedded
    os.rename(vault / "Shopping list.md", vault / "Groceries.md")
    assert harness.indexer.refresh(["Shopping list.md", "Groceries.md"]).renamed == 1
    assert harness.embedder.texts_embedded == before
    assert harness.top_note("groceries", SearchMode.KEYWORD) == "Groceries.md"  # the file name weighs in
    os.rename(vault / "Finance/Sreenivas.md", vault / "Finance/Ledger.md")
    harness.indexer.refresh(["Finance/Sreenivas.md", "Finance/Ledger.md"])
    # edited outside Obsidian, nobody rewrote [[Sreenivas]]: it now leads nowhere, as in Obsidian
    assert [link.target for link in harness.index.graph.links_of("Ideas/Linker.md").unresolved] == [
        "Sreenivas"
    ]


def test_a_moved_folder_is_found_under_its_new_path_without_embedding(harness: Harness, vault: Path) -> None:
    assert harness.embedder is not None
    before = harness.embedder.texts_embedded
    os.rename(vault / "Projects", vault / "Archive")

    report = harness.indexer.refresh([], folders=["Projects", "Archive"])

    assert report.renamed == 2
    assert harness.embedder.texts_embedded == before
    assert paths_in_index(harness) == sorted(
        [
            "Archive/Database migration.md",
            "Archive/Long plan.md",
            "Finance/Sreenivas.md",
            "Ideas/Linker.md",
            "Shopping list.md",
        ]
    )
    assert harness.top_note("PostgreSQL cutover") == "Archive/Database migration.md"


def test_a_symlinked_folder_is_listed_when_it_comes_and_no_more_once_it_goes(
    harness: Harness, vault: Path, tmp_path: Path
) -> None:
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", vault / "Linked")

    harness.indexer.refresh([], folders=["Linked"], attachments=["Linked"])  # what the watcher hands on
    assert [(f.rel_path, f.reason) for f in harness.index.failed_files] == [
        ("Linked", "symlink points outside the vault")
    ]
    os.unlink(vault / "Linked")
    harness.indexer.refresh([], attachments=["Linked"])
    assert harness.index.failed_files == []


def test_a_full_sync_recognises_a_move_by_its_content(harness: Harness, vault: Path) -> None:
    assert harness.embedder is not None
    before = harness.embedder.texts_embedded
    os.rename(vault / "Shopping list.md", vault / "Ideas/Groceries.md")
    report = harness.indexer.sync()
    assert (report.renamed, report.removed, report.indexed) == (1, 0, 1)
    assert harness.embedder.texts_embedded == before
    assert harness.top_note("basmati rice lemons") == "Ideas/Groceries.md"


def test_a_copy_keeps_the_original_and_reuses_its_vectors(harness: Harness, vault: Path) -> None:
    assert harness.embedder is not None
    write(vault, "Copy of list.md", NOTES["Shopping list.md"])
    report = harness.indexer.refresh(["Copy of list.md"])
    assert (report.indexed, report.renamed, report.removed) == (1, 0, 0)
    assert {"Copy of list.md", "Shopping list.md"} <= set(paths_in_index(harness))


def test_deleted_and_created_notes_follow_the_disk(harness: Harness, vault: Path) -> None:
    (vault / "Shopping list.md").unlink()
    write(vault, "Recipes/Dal.md", "# Dal\n\nRed lentils, turmeric and cumin.\n")
    report = harness.indexer.refresh(["Shopping list.md", "Recipes/Dal.md"])
    assert (report.indexed, report.removed) == (1, 1)
    assert harness.top_note("turmeric lentils") == "Recipes/Dal.md"
    assert "Shopping list.md" not in paths_in_index(harness)


def test_a_touched_but_unchanged_note_is_not_written_again(harness: Harness, vault: Path) -> None:
    assert harness.embedder is not None
    before = harness.embedder.texts_embedded
    os.utime(vault / "Shopping list.md", (1_700_000_000, 1_700_000_000))
    first = harness.indexer.refresh(["Shopping list.md"])
    assert (first.indexed, first.unchanged) == (0, 1)
    assert harness.embedder.texts_embedded == before
    # the new mtime is remembered: the next full pass does not even read the file
    assert harness.indexer.sync().indexed == 0


def test_only_the_changed_chunk_of_an_edited_note_is_embedded(vault: Path, tmp_path: Path) -> None:
    fake = FakeEmbedder()
    h = Harness(vault, tmp_path / "data", CachedEmbedder(fake, tmp_path / "cache.sqlite3"))  # type: ignore[arg-type]
    try:
        h.index.open()
        h.indexer.sync()
        before = fake.texts_embedded
        write(vault, LONG_NOTE, LONG_TEXT.replace("topic2 detail2x0", "topic2 rewritten", 1))
        h.indexer.refresh([LONG_NOTE])
        assert fake.texts_embedded - before == 1
    finally:
        h.close()


def test_many_notes_are_searchable_by_keyword_before_their_dense_vectors(vault: Path, tmp_path: Path) -> None:
    gated = GatedEmbedder()
    # this small vault stands for a large one
    h = Harness(vault, tmp_path / "data", gated, keyword_first_min=2)  # type: ignore[arg-type]
    try:
        h.index.open()
        job = threading.Thread(target=h.indexer.sync)
        job.start()
        assert gated.entered.wait(30)  # the dense pass has started and waits at the gate
        assert h.index.indexed_notes == 5
        assert h.index.dense_pending == 5
        outcome = h.search.search("PostgreSQL cutover", top_k=3)
        assert outcome.hits[0].payload["note_path"] == "Projects/Database migration.md"
        assert outcome.mode is SearchMode.KEYWORD
        assert outcome.degraded
        gated.gate.set()
        job.join(30)
        assert h.index.dense_pending == 0
        assert h.top_note("owe Sreenivas rupees", SearchMode.DENSE) == "Finance/Sreenivas.md"
    finally:
        gated.gate.set()
        h.close()


def test_a_rebuild_serves_the_old_index_until_it_switches(
    harness: Harness, vault: Path, tmp_path: Path
) -> None:
    old_generation = harness.index.generation
    gated = GatedEmbedder()
    harness.swap_embedder(gated)  # the same model, now slow: the rebuild waits at the gate
    rebuild = threading.Thread(target=harness.indexer.rebuild)
    rebuild.start()
    try:
        assert gated.entered.wait(30)
        # written after the rebuild listed the vault: the last pass before the switch must carry it over
        write(vault, "Recipes/Dal.md", "# Dal\n\nRed lentils, turmeric and cumin.\n")
        assert harness.index.generation == old_generation
        assert harness.top_note("PostgreSQL cutover") == "Projects/Database migration.md"
    finally:
        gated.gate.set()
    rebuild.join(60)
    assert harness.index.generation != old_generation
    assert harness.top_note("turmeric lentils") == "Recipes/Dal.md"  # carried over at the switch
    assert harness.index.indexed_notes == 6
    assert harness.catalog.generations() == [harness.index.generation]


def test_a_failed_rebuild_leaves_the_serving_index_as_it_was(harness: Harness) -> None:
    old_generation = harness.index.generation
    gated = GatedEmbedder()
    gated.fail_with = RuntimeError("disk full")
    gated.gate.set()
    harness.swap_embedder(gated)
    with pytest.raises(RuntimeError):
        harness.indexer.rebuild()
    assert harness.index.generation == old_generation
    assert harness.catalog.generations() == [old_generation]
    assert harness.top_note("PostgreSQL cutover", SearchMode.KEYWORD) == "Projects/Database migration.md"
