"""Own notes embedded ahead while the keyword pass runs (WarmAhead): the dense pass finds their vectors in the
embedding cache and sends no text to the model twice; notes saved from elsewhere wait for the dense pass."""

from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from backend.application.indexing.indexer import build_index
from backend.domain.models import IndexIdentity
from backend.domain.text.sparse import SparseEncoder
from backend.infrastructure.embedders.cache import CachedEmbedder
from backend.infrastructure.index_catalog import EdgeIndexCatalog
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.application.fakes import FakeEmbedder

WAIT = 30.0
SAVED, OWN = 20, 180  # one chunk each: the keyword pass writes them in batches of 64 chunks
HOLD_AT = 150  # the keyword pass's read held until something was warmed: two batches are written by then


class RecordingEmbedder(FakeEmbedder):
    """Every text sent to the model, in order; `warmed` is set once three are (the keyword pass is held)."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []
        self.lock = threading.Lock()
        self.three_sent = threading.Event()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        with self.lock:
            self.sent.extend(texts)
            if len(self.sent) >= 3:
                self.three_sent.set()
        return super().embed_documents(texts)


class HoldingVault(FileSystemVault):
    """The real files; the keyword pass's `HOLD_AT`-th read waits until the model was sent three texts."""

    def __init__(self, root: Path, model: RecordingEmbedder) -> None:
        super().__init__(root)
        self._model = model
        self._read: set[str] = set()
        self.sent_while_held: list[str] | None = None

    def read_text(self, rel_path: str) -> tuple[str, list[str]]:
        if rel_path not in self._read:  # the keyword pass reads each note once; the dense pass again
            self._read.add(rel_path)
            if len(self._read) == HOLD_AT:
                assert self._model.three_sent.wait(WAIT), "nothing was embedded while the keyword pass ran"
                with self._model.lock:
                    self.sent_while_held = list(self._model.sent)
        return super().read_text(rel_path)


def _vault(root: Path) -> Path:
    root.mkdir()
    for i in range(SAVED):
        (root / f"clip {i:03d}.md").write_text(
            f"---\nsource: https://example.com/{i}\n---\n# Clip {i}\n\nclipword harbour number{i}\n",
            encoding="utf-8",
        )
    for i in range(OWN):
        (root / f"own {i:03d}.md").write_text(f"# Own {i}\n\nownword tide number{i}\n", encoding="utf-8")
    return root


def test_own_notes_are_embedded_during_the_keyword_pass_and_no_text_twice(tmp_path: Path) -> None:
    model = RecordingEmbedder()
    vault = HoldingVault(_vault(tmp_path / "vault"), model)
    encoder = SparseEncoder()
    catalog = EdgeIndexCatalog(tmp_path / "data")
    index, indexer = build_index(
        catalog=catalog,
        embedder=CachedEmbedder(model, tmp_path / "cache.sqlite3"),
        vault=vault,
        parser=parse_note,
        encoder=encoder,
        identity=IndexIdentity(model.model_name, model.dimension, encoder.fingerprint, 0),
        warm_ahead=True,
    )
    try:
        index.open()
        indexer.sync()
        assert index.dense_pending == 0
        warmed = vault.sent_while_held
        assert warmed, "the keyword pass was never held"
        assert all("ownword" in text for text in warmed)  # saved notes wait for the dense pass
        assert Counter(model.sent) == Counter(set(model.sent))  # a warmed text is not embedded again
        assert len(model.sent) == SAVED + OWN
    finally:
        index.close()
        catalog.close()


class BrokenCache(RecordingEmbedder):
    """Warms by raising, as a cache on a failing disk would: `three_sent` says it was asked."""

    def warm(self, texts: Sequence[str], stop: object) -> int:
        self.three_sent.set()
        raise OSError("disk I/O error")


def test_embedding_ahead_that_breaks_leaves_the_work_to_the_dense_pass(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = BrokenCache()
    encoder = SparseEncoder()
    catalog = EdgeIndexCatalog(tmp_path / "data")
    index, indexer = build_index(
        catalog=catalog,
        embedder=model,
        vault=HoldingVault(_vault(tmp_path / "vault"), model),  # held until warming was tried
        parser=parse_note,
        encoder=encoder,
        identity=IndexIdentity(model.model_name, model.dimension, encoder.fingerprint, 0),
        warm_ahead=True,
    )
    try:
        index.open()
        with caplog.at_level(logging.WARNING):
            indexer.sync()
        assert index.dense_pending == 0
        assert len(model.sent) == len(set(model.sent)) == SAVED + OWN  # every text once, by the dense pass
        assert "embedding ahead stopped: disk I/O error" in caplog.text
    finally:
        index.close()
        catalog.close()
