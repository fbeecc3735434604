"""The dense-behind pass as a pipeline: reading and writing overlap the embedder, memory stays bounded, and a
note changed while its old text was being embedded keeps its new vectors."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from backend.application import dense_pass
from backend.application.dense_pass import PIPELINE_DEPTH
from backend.domain.models import SearchMode
from backend.infrastructure.fs_vault import FileSystemVault
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness

WAIT = 30.0
NOTES = 600  # one chunk each
WINDOW = 32  # chunks per dense call here (the service's is wider), so the bound shows on a small vault


class CountingVault(FileSystemVault):
    """The real vault, counting the notes read so a test can see how far reading got."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads = 0
        self.lock = threading.Lock()
        self.read_ahead = threading.Event()  # set once the pass reads past the first embedder call's notes

    def read_text(self, rel_path: str) -> tuple[str, list[str]]:
        with self.lock:
            self.reads += 1
            if self.reads > self.first_call_done_at + WINDOW:
                self.read_ahead.set()
        return super().read_text(rel_path)

    first_call_done_at = 10**9  # set by the test when the dense pass starts


class HeldEmbedder(FakeEmbedder):
    """The first document call of the dense pass waits until `release` (or the read-ahead it expects)."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.holding = threading.Event()
        self.hold_next = False

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.hold_next:
            self.hold_next = False
            self.holding.set()
            assert self.release.wait(WAIT), "never released"
        return super().embed_documents(texts)


def _vault(tmp_path: Path, count: int) -> Path:
    root = tmp_path / "vault"
    root.mkdir()
    for i in range(count):
        (root / f"note {i:04d}.md").write_text(
            f"# Note {i}\n\nharbour tide number{i} words\n", encoding="utf-8"
        )
    return root


def _harness(root: Path, data: Path, embedder: FakeEmbedder) -> tuple[Harness, CountingVault]:
    vault = CountingVault(root)  # the same real files, counted
    return Harness(root, data, embedder, vault_reader=vault), vault


def test_the_next_notes_are_read_while_the_embedder_works_and_reading_stays_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", WINDOW)
    embedder = HeldEmbedder()
    harness, vault = _harness(_vault(tmp_path, NOTES), tmp_path / "data", embedder)
    harness.index.open()
    embedder.available = False  # the keyword pass first, with no dense vectors
    harness.indexer.sync()
    assert harness.index.dense_pending == NOTES
    embedder.available = True
    vault.first_call_done_at = vault.reads
    embedder.hold_next = True
    done = threading.Thread(target=harness.indexer.sync)
    done.start()
    try:
        assert embedder.holding.wait(WAIT)
        # while the embedder holds its first batch, the reader goes on with the next ones ...
        assert vault.read_ahead.wait(WAIT), "nothing was read while the embedder worked"
        # ... but only a few batches ahead, not the whole vault
        with vault.lock:
            ahead = vault.reads - vault.first_call_done_at
        assert ahead <= (PIPELINE_DEPTH + 3) * WINDOW < NOTES
    finally:
        embedder.release.set()
        done.join(WAIT)
    assert harness.index.dense_pending == 0
    ((_, vector),) = harness.store.note_vectors("note 0417.md")
    assert len(vector) == embedder.dimension
    harness.close()


def test_a_note_changed_while_its_old_text_is_embedded_keeps_the_new_vectors(tmp_path: Path) -> None:
    root = _vault(tmp_path, 40)
    embedder = HeldEmbedder()
    harness, _ = _harness(root, tmp_path / "data", embedder)
    harness.index.open()
    embedder.available = False
    harness.indexer.sync()
    embedder.available = True
    embedder.hold_next = True
    done = threading.Thread(target=harness.indexer.sync)
    done.start()
    try:
        assert embedder.holding.wait(WAIT)  # "note 0000" (first in order) is being embedded with its old text
        (root / "note 0000.md").write_text("# Note 0\n\nvolcano submarine\n", encoding="utf-8")
        harness.indexer.refresh(["note 0000.md"])  # the watcher's change, embedded and written at once
    finally:
        embedder.release.set()
        done.join(WAIT)
    assert harness.index.dense_pending == 0
    ((payload, _vector),) = harness.store.note_vectors("note 0000.md")
    assert "volcano" in str(payload["content"])
    # its dense vector is the new text's, not the old one the pipeline was embedding
    assert harness.top_note("volcano submarine", mode=SearchMode.DENSE) == "note 0000.md"
    harness.close()


class KeywordPassProgress:
    """A sync job's progress that, after the keyword pass's first batch, waits for the embedder to start:
    a dense pass that only begins once every note is written by keyword never gets there."""

    def __init__(self, embedder: HeldEmbedder) -> None:
        self._embedder = embedder
        self._phase: str | None = None
        self.dense_started_early = False
        self.keyword_pass_done = threading.Event()

    def update(self, *, phase: str | None = None, done: int | None = None, total: int | None = None) -> None:
        if phase == "embedding":
            self.keyword_pass_done.set()
        self._phase = phase or self._phase

    def advance(self, n: int = 1) -> None:
        if self._phase == "indexing" and not self.dense_started_early:
            self.dense_started_early = self._embedder.holding.wait(WAIT)
            assert self.dense_started_early, "the embedder waited for the keyword pass"


def test_the_dense_pass_embeds_the_first_notes_while_the_keyword_pass_writes_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", WINDOW)
    embedder = HeldEmbedder()
    embedder.hold_next = True
    harness, _ = _harness(_vault(tmp_path, NOTES), tmp_path / "data", embedder)
    harness.index.open()
    progress = KeywordPassProgress(embedder)
    failures: list[BaseException] = []

    def first_index() -> None:
        try:
            harness.indexer.sync(progress)  # type: ignore[arg-type]  # the job's progress, watched
        except BaseException as exc:
            failures.append(exc)

    done = threading.Thread(target=first_index)
    done.start()
    try:
        # the embedder holds its first call, made while the keyword pass had written only its first batch
        assert embedder.holding.wait(WAIT)
        # the keyword pass does not wait for it: every note becomes keyword-searchable
        assert progress.keyword_pass_done.wait(WAIT), failures
        assert progress.dense_started_early
        assert harness.index.indexed_notes == NOTES
        assert harness.index.dense_pending > 0
        assert harness.top_note("number599", mode=SearchMode.KEYWORD) == "note 0599.md"
    finally:
        embedder.release.set()
        done.join(WAIT)
    assert not failures
    assert harness.index.dense_pending == 0
    ((_, vector),) = harness.store.note_vectors("note 0599.md")  # the last note written got its vector too
    assert len(vector) == embedder.dimension
    harness.close()
