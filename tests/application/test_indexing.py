"""Indexing and search use cases on the real embedded store and real files, with a fake embedder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.application.indexing import dense_pass
from backend.application.indexing.note_writer import EMBED_BATCH
from backend.domain.errors import EmbeddingModelMismatchError, IndexNotReadyError
from backend.domain.models import PointFilter, SearchMode
from backend.domain.text.sparse import SparseEncoder
from backend.domain.text.text_analysis import TextAnalyzer
from tests.application.fakes import DyingEmbedder, FakeEmbedder
from tests.harness import NOTES, Harness


def test_search_before_the_first_pass_says_the_index_is_not_ready(harness: Harness) -> None:
    with pytest.raises(IndexNotReadyError):
        harness.search.search("PostgreSQL")


def test_indexes_every_note_and_finds_each_by_its_words(harness: Harness) -> None:
    report = harness.indexer.sync()
    assert (report.scanned, report.indexed, report.removed) == (3, 3, 0)
    assert harness.index.indexed_notes == 3
    assert harness.top_note("PostgreSQL cutover", SearchMode.KEYWORD) == "Projects/Database migration.md"
    assert harness.top_note("owe Sreenivas rupees", SearchMode.DENSE) == "Finance/Sreenivas.md"
    assert harness.top_note("basmati lemons") == "Shopping list.md"


def test_hits_carry_heading_path_lines_tags_and_date(harness: Harness) -> None:
    harness.indexer.sync()
    hit = harness.search.search("cutover downtime", top_k=1, mode=SearchMode.KEYWORD).hits[0]
    p = hit.payload
    assert p["heading_context"] == "Database migration > Risks"
    lines = NOTES["Projects/Database migration.md"].splitlines()
    assert "Downtime during the cutover." in "\n".join(lines[p["start_line"] - 1 : p["end_line"]])
    assert set(p["tags"]) == {"work", "project"}
    assert p["date"] == "2026-02-01"


def test_filters_restrict_results(harness: Harness) -> None:
    harness.indexer.sync()
    only_finance = PointFilter(tags=("finance",))
    hits = harness.search.search("PostgreSQL rupees lemons", top_k=10, point_filter=only_finance).hits
    assert {h.payload["note_path"] for h in hits} == {"Finance/Sreenivas.md"}


def test_second_sync_of_an_unchanged_vault_embeds_nothing(harness: Harness) -> None:
    harness.indexer.sync()
    assert harness.embedder is not None
    calls = harness.embedder.calls
    report = harness.indexer.sync()
    assert (report.indexed, report.unchanged) == (0, 3)
    assert harness.embedder.calls == calls


def test_touched_but_unchanged_note_is_not_reembedded(harness: Harness, vault: Path) -> None:
    harness.indexer.sync()
    assert harness.embedder is not None
    before = harness.embedder.texts_embedded
    path = vault / "Shopping list.md"
    os.utime(path, (path.stat().st_atime, path.stat().st_mtime + 10))
    assert harness.indexer.sync().unchanged == 3
    assert harness.embedder.texts_embedded == before


def test_edited_note_replaces_its_chunks_and_leaves_no_stale_ones(harness: Harness, vault: Path) -> None:
    long_note = "# Journal\n\n" + "\n\n".join(
        f"## Day {i}\n\nWalked {i} kilometres by the river." for i in range(8)
    )
    (vault / "Journal.md").write_text(long_note)
    harness.indexer.sync()
    many = harness.store.count(PointFilter(note_paths=("Journal.md",)))
    (vault / "Journal.md").write_text("# Journal\n\nShort now: only swimming.\n")
    harness.indexer.sync()
    assert harness.store.count(PointFilter(note_paths=("Journal.md",))) == 1 < many
    assert harness.top_note("kilometres river", SearchMode.KEYWORD) != "Journal.md"
    assert harness.top_note("swimming", SearchMode.KEYWORD) == "Journal.md"


def test_deleted_note_disappears_from_search(harness: Harness, vault: Path) -> None:
    harness.indexer.sync()
    (vault / "Shopping list.md").unlink()
    assert harness.indexer.sync().removed == 1
    assert harness.top_note("basmati lemons", SearchMode.KEYWORD) != "Shopping list.md"
    assert harness.store.count(PointFilter(note_paths=("Shopping list.md",))) == 0


def test_reindexing_does_not_duplicate_points(harness: Harness) -> None:
    harness.indexer.sync()
    count = harness.store.count()
    harness.indexer.rebuild()
    assert harness.store.count() == count


def test_restart_keeps_the_index_and_needs_no_full_pass(vault: Path, tmp_path: Path) -> None:
    first = Harness(vault, tmp_path / "data", FakeEmbedder())
    first.index.open()
    first.indexer.sync()
    first.close()
    second = Harness(vault, tmp_path / "data", FakeEmbedder())
    try:
        assert second.index.open() is False
        assert second.index.indexed_notes == 3
        assert second.top_note("basmati", SearchMode.KEYWORD) == "Shopping list.md"
        assert second.indexer.sync().indexed == 0
    finally:
        second.close()


def test_an_index_built_with_another_model_answers_by_keyword_and_is_never_written(
    vault: Path, tmp_path: Path
) -> None:
    first = Harness(vault, tmp_path / "data", FakeEmbedder(dimension=32, model_name="model-a"))
    first.index.open()
    first.indexer.sync()
    first.close()
    other = Harness(vault, tmp_path / "data", FakeEmbedder(dimension=16, model_name="model-b"))
    try:
        assert other.index.open() is False
        outcome = other.search.search("basmati")  # its keyword vectors are still right: it keeps answering
        assert outcome.mode is SearchMode.KEYWORD
        assert outcome.hits[0].payload["note_path"] == "Shopping list.md"
        assert "model-a" in outcome.warnings[0]
        assert "model-b" in outcome.warnings[0]
        assert "rebuild" in outcome.warnings[0]
        with pytest.raises(EmbeddingModelMismatchError):
            other.indexer.sync()
        other.indexer.rebuild()  # the way out the error suggests
        assert other.top_note("basmati") == "Shopping list.md"
    finally:
        other.close()


def test_hybrid_answers_from_keywords_when_the_embedder_is_down(harness: Harness) -> None:
    harness.indexer.sync()
    assert harness.embedder is not None
    harness.embedder.available = False
    outcome = harness.search.search("basmati lemons", top_k=3)
    assert outcome.mode is SearchMode.KEYWORD
    assert outcome.degraded
    assert "unavailable" in outcome.warnings[0]
    assert outcome.hits[0].payload["note_path"] == "Shopping list.md"
    harness.embedder.available = True
    assert harness.search.search("basmati lemons", top_k=3).mode is SearchMode.HYBRID


def test_keyword_only_index_without_an_embedder(vault: Path, tmp_path: Path) -> None:
    h = Harness(vault, tmp_path / "data", None)
    try:
        h.index.open()
        h.indexer.sync()
        outcome = h.search.search("Sreenivas rupees", top_k=3)
        assert outcome.mode is SearchMode.KEYWORD
        assert outcome.hits[0].payload["note_path"] == "Finance/Sreenivas.md"
    finally:
        h.close()


def test_note_problems_survive_a_restart(vault: Path, tmp_path: Path) -> None:
    (vault / "Broken.md").write_text("---\n: : :\n---\n# Broken\n\nBody still counts.\n")
    first = Harness(vault, tmp_path / "data", None)
    first.index.open()
    first.indexer.sync()
    assert [f.rel_path for f in first.index.failed_files] == ["Broken.md"]
    first.close()
    second = Harness(vault, tmp_path / "data", None)
    try:
        second.index.open()
        assert [f.rel_path for f in second.index.failed_files] == ["Broken.md"]
    finally:
        second.close()


def test_an_index_built_with_other_keyword_settings_is_refused(vault: Path, tmp_path: Path) -> None:
    first = Harness(vault, tmp_path / "data", None)
    first.index.open()
    first.indexer.sync()
    first.close()
    other = Harness(
        vault, tmp_path / "data", None, encoder=SparseEncoder(analyzer=TextAnalyzer(stemming=False))
    )
    try:
        assert other.index.open() is False
        with pytest.raises(EmbeddingModelMismatchError) as info:
            other.search.search("basmati")
        assert "keyword" in info.value.detail
        other.indexer.rebuild()
        assert other.top_note("basmati") == "Shopping list.md"
    finally:
        other.close()


def test_embedder_down_while_indexing_gives_a_keyword_index_and_dense_catches_up(
    vault: Path, tmp_path: Path
) -> None:
    embedder = FakeEmbedder()
    embedder.available = False
    h = Harness(vault, tmp_path / "data", embedder)
    try:
        h.index.open()
        report = h.indexer.sync()  # does not fail: every note is written with keyword vectors
        assert report.indexed == 3
        assert h.index.dense_pending == 3
        embedder.available = True  # the embedder is back, but no note has dense vectors yet
        outcome = h.search.search("basmati lemons", top_k=3)
        assert outcome.mode is SearchMode.KEYWORD
        assert any("not built yet" in w for w in outcome.warnings)
        assert outcome.hits[0].payload["note_path"] == "Shopping list.md"

        (vault / "New.md").write_text("# New\n\nA note written while the embedder is back.\n")
        h.indexer.sync()  # catches up: the three pending notes are embedded, unchanged text or not
        assert h.index.dense_pending == 0
        assert embedder.texts_embedded >= 4
        healthy = h.search.search("basmati lemons", top_k=3)
        assert healthy.mode is SearchMode.HYBRID
        assert healthy.warnings == []
    finally:
        h.close()


def test_a_partly_embedded_index_answers_hybrid_and_says_which_notes_lack_dense(
    vault: Path, tmp_path: Path
) -> None:
    embedder = FakeEmbedder()
    h = Harness(vault, tmp_path / "data", embedder)
    try:
        h.index.open()
        h.indexer.sync()
        embedder.available = False
        (vault / "Late.md").write_text("# Late\n\nWritten during an embedder outage: quince jam.\n")
        h.indexer.sync()
        embedder.available = True
        outcome = h.search.search("quince jam", top_k=3)
        assert outcome.mode is SearchMode.HYBRID
        assert outcome.degraded
        assert "1 of 4 notes have no dense vectors yet" in outcome.warnings[0]
        # found by its keywords alone: top of the keyword list, so it ties with the best dense hit
        assert "Late.md" in [hit.payload["note_path"] for hit in outcome.hits[:2]]
    finally:
        h.close()


def test_pending_dense_survives_a_restart(vault: Path, tmp_path: Path) -> None:
    embedder = FakeEmbedder()
    embedder.available = False
    first = Harness(vault, tmp_path / "data", embedder)
    first.index.open()
    first.indexer.sync()
    first.close()
    second = Harness(vault, tmp_path / "data", FakeEmbedder())
    try:
        second.index.open()
        assert second.index.dense_pending == 3
        second.indexer.sync()
        assert second.index.dense_pending == 0
    finally:
        second.close()


@pytest.mark.parametrize(
    ("notes", "paragraphs"),
    [
        pytest.param(8, 25, id="few notes: embedded batch by batch as they are written"),
        pytest.param(40, 5, id="many notes: keyword first, the embedding pass dies"),
    ],
)
def test_an_embedder_dying_mid_index_leaves_a_complete_keyword_index_and_dense_catches_up(
    tmp_path: Path, notes: int, paragraphs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", EMBED_BATCH)  # the dense pass too embeds 64 chunks a call
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(notes):
        # one chunk per paragraph (150 words): 200 chunks, embedded in batches of 64
        body = "\n\n".join(" ".join(f"w{n}x{p}x{i}" for i in range(150)) for p in range(paragraphs))
        (vault / f"note {n:02}.md").write_text(f"# Note {n}\n\nuniqueword{n}\n\n{body}\n")
    embedder = DyingEmbedder(calls_left=2)
    h = Harness(vault, tmp_path / "data", embedder)
    try:
        h.index.open()
        h.indexer.sync()
        assert embedder.calls == 2  # it answered twice, then died
        assert h.index.indexed_notes == notes  # every note written, by keyword at least
        assert 0 < h.index.dense_pending < notes
        for n in range(notes):
            assert h.top_note(f"uniqueword{n}", SearchMode.KEYWORD) == f"note {n:02}.md"
        embedder.available = True
        h.indexer.sync()  # the embedder is back: dense catches up
        assert h.index.dense_pending == 0
        assert all(entry.has_dense for entry in h.store.inventory())
        outcome = h.search.search("uniqueword3", top_k=3)
        assert (outcome.mode, outcome.warnings) == (SearchMode.HYBRID, [])
    finally:
        h.close()


def test_a_rename_in_a_keyword_only_index_is_applied(vault: Path, tmp_path: Path) -> None:
    h = Harness(vault, tmp_path / "data", None)
    try:
        h.index.open()
        h.indexer.sync()
        os.rename(vault / "Shopping list.md", vault / "Groceries.md")
        report = h.indexer.refresh(["Shopping list.md", "Groceries.md"])
        assert (report.renamed, report.reused_vectors) == (1, 0)
        assert h.top_note("basmati", SearchMode.KEYWORD) == "Groceries.md"
    finally:
        h.close()
