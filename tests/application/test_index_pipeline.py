"""The dense pass as a pipeline: it starts once the keyword pass is done, reading and writing overlap the
embedder, memory stays bounded, a large note is embedded last and in pieces, and a note changed while its
old text was being embedded keeps its new vectors."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from backend.application.indexing import dense_pass
from backend.application.indexing.dense_pass import PIPELINE_DEPTH
from backend.domain.models import SearchMode
from backend.infrastructure.vault.file_system import FileSystemVault
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
    """A sync job's progress, as /index/status shows it: when the keyword pass ended (the phase moved on to
    embedding) and what the job's detail said."""

    def __init__(self) -> None:
        self.keyword_pass_done = threading.Event()
        self.details: list[str] = []

    def update(self, *, phase: str | None = None, detail: str | None = None, **counts: int | None) -> None:
        if phase == "embedding":
            self.keyword_pass_done.set()
        if detail is not None:
            self.details.append(detail)

    def advance(self, n: int = 1) -> None:
        pass


class NotesAtFirstCall(FakeEmbedder):
    """Records how many notes the index held keyword-searchable when the embedder was first called."""

    def __init__(self) -> None:
        super().__init__()
        self.harness: Harness | None = None
        self.notes_at_first_call: int | None = None

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.notes_at_first_call is None and self.harness is not None:
            self.notes_at_first_call = self.harness.index.indexed_notes
        return super().embed_documents(texts)


def test_every_note_is_searchable_by_keyword_before_the_embedder_starts(tmp_path: Path) -> None:
    embedder = NotesAtFirstCall()
    harness, _ = _harness(_vault(tmp_path, NOTES), tmp_path / "data", embedder)
    embedder.harness = harness
    harness.index.open()
    progress = KeywordPassProgress()
    harness.indexer.sync(progress)  # type: ignore[arg-type]  # the job's progress, watched
    # the keyword pass had the machine to itself: no embedding before its last note was written
    assert embedder.notes_at_first_call == NOTES
    assert progress.keyword_pass_done.is_set()
    assert harness.index.dense_pending == 0
    ((_, vector),) = harness.store.note_vectors("note 0599.md")
    assert len(vector) == embedder.dimension
    harness.close()


def _large_note(root: Path, paragraphs: int) -> None:
    body = "\n\n".join(f"paragraph {i} of the big log lighthouse" for i in range(paragraphs))
    (root / "big log.md").write_text(f"# Big log\n\n{body}\n", encoding="utf-8")


class CallSizes(FakeEmbedder):
    """Records the texts of each document call, and whether the big note's came after every other note."""

    def __init__(self) -> None:
        super().__init__()
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return super().embed_documents(texts)


def test_a_large_note_is_embedded_last_and_in_pieces_with_its_progress_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", WINDOW)
    monkeypatch.setattr(dense_pass, "LARGE_NOTE_PIECE", 8)
    root = _vault(tmp_path, 40)
    _large_note(root, 1000)  # one chunk per ~40 words: some 40 chunks, more texts than WINDOW
    embedder = CallSizes()
    harness, _ = _harness(root, tmp_path / "data", embedder)
    harness.index.open()
    progress = KeywordPassProgress()
    harness.indexer.sync(progress)  # type: ignore[arg-type]
    big = [i for i, call in enumerate(embedder.batches) if any("big log" in text.lower() for text in call)]
    small = [i for i, call in enumerate(embedder.batches) if any("harbour tide" in text for text in call)]
    assert len(big) >= 2
    assert max(small) < min(big)
    assert all(len(embedder.batches[i]) <= 8 for i in big)
    assert progress.details
    assert progress.details[-1].startswith("big log.md: ")
    assert harness.index.dense_pending == 0
    assert harness.top_note("lighthouse", mode=SearchMode.DENSE) == "big log.md"
    harness.close()


def test_the_watcher_leaves_a_large_note_to_a_background_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", WINDOW)
    root = _vault(tmp_path, 5)
    embedder = CallSizes()
    harness, _ = _harness(root, tmp_path / "data", embedder)
    harness.index.open()
    harness.indexer.sync()
    _large_note(root, 1000)
    (root / "note 0001.md").write_text("# Note 1\n\nharbour tide edited\n", encoding="utf-8")
    report = harness.indexer.refresh(["big log.md", "note 0001.md"])
    # both searchable by keyword at once, the small one dense too; the big one waits for a background pass
    assert report.dense_deferred == 1
    assert harness.top_note("lighthouse", mode=SearchMode.KEYWORD) == "big log.md"
    assert harness.index.dense_pending == 1
    harness.indexer.sync()  # what the supervisor starts for it
    assert harness.index.dense_pending == 0
    harness.close()


def _rounded(vector: Sequence[float] | None) -> list[float] | None:
    """Stored vectors come back as float32: equal to 6 places whichever write stored them."""
    return None if vector is None else [round(x, 6) for x in vector]


def _stored(harness: Harness) -> tuple[list[tuple[object, ...]], list[object], list[object]]:
    """Everything the index holds: each point (id, payload, keyword vector, dense vector, windows), the
    note records and the links."""
    points, offset = [], None
    while True:
        page, offset = harness.store.export(offset=offset)
        points += [
            (p.id, p.payload, p.sparse, _rounded(p.dense), [_rounded(w) for w in p.windows]) for p in page
        ]
        if offset is None:
            break
    graph = harness.graph_store
    return sorted(points, key=lambda p: str(p[0])), graph.all_notes(), graph.all_links()


def test_a_note_given_its_vectors_after_the_keyword_pass_is_stored_as_if_embedded_at_once(
    tmp_path: Path,
) -> None:
    # The dense pass adds vectors to the points the keyword pass wrote; nothing else of the note may differ
    # from an index that embedded it while writing it: text, keyword vector, windows, record, links.
    root = tmp_path / "vault"
    root.mkdir()
    chat = "\n\n".join(f"Message {i}: the harbour tide was {i} metres at dawn today." for i in range(40))
    (root / "Chat.md").write_text(f"---\ntags: [sea]\n---\n# Chat\n\n{chat}\n[[Log]]\n", encoding="utf-8")
    (root / "Log.md").write_text("# Log\n\n## Monday\nTide tables, see [[Chat#Chat]].\n", encoding="utf-8")
    at_once = Harness(root, tmp_path / "at-once", FakeEmbedder(), dense_windows=12)
    embedder = FakeEmbedder()
    later = Harness(root, tmp_path / "later", embedder, dense_windows=12)
    try:
        at_once.index.open()
        at_once.indexer.sync()
        later.index.open()
        embedder.available = False
        later.indexer.sync()
        assert later.index.dense_pending == 2
        embedder.available = True
        later.indexer.sync()
        assert later.index.dense_pending == 0
        expected, made_later = _stored(at_once), _stored(later)
        assert any(windows for *_, windows in expected[0])  # the chat's chunks have windows to compare
        assert made_later == expected
    finally:
        at_once.close()
        later.close()
    again = Harness(root, tmp_path / "later", embedder, dense_windows=12)
    again.index.open()
    assert again.index.dense_pending == 0  # the records say so: a restart embeds nothing again
    assert again.top_note("harbour tide metres", mode=SearchMode.DENSE) == "Chat.md"
    again.close()


def test_a_note_recorded_before_chunks_were_counted_is_written_whole_with_its_vectors(tmp_path: Path) -> None:
    # An index from before records counted their chunks: the vectors cannot be matched to the points
    # written, so the note is written again as a whole, and still gets them.
    root = _vault(tmp_path, 3)
    embedder = FakeEmbedder()
    harness = Harness(root, tmp_path / "data", embedder)
    harness.index.open()
    embedder.available = False
    harness.indexer.sync()
    graph = harness.graph_store
    old = graph.get_notes(["note 0001.md"])["note 0001.md"]
    graph.put_note(replace(old, chunk_count=None), graph.outlinks("note 0001.md"))
    harness.close()
    embedder.available = True

    again = Harness(root, tmp_path / "data", embedder)
    again.index.open()
    assert again.index.dense_pending == 3
    again.indexer.sync()
    assert again.index.dense_pending == 0
    assert again.top_note("harbour tide number1", mode=SearchMode.DENSE) == "note 0001.md"
    assert again.graph_store.get_notes(["note 0001.md"])["note 0001.md"].chunk_count == 1
    again.close()
