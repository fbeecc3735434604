"""Fixtures of the application tests: a small real vault and the harness over it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.application.fakes import FakeEmbedder
from tests.harness import NOTES, Harness
from tests.vault_files import write_notes


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The three NOTES, and a note under .obsidian that indexing must skip."""
    root = write_notes(tmp_path / "vault", NOTES)
    (root / ".obsidian").mkdir()
    (root / ".obsidian" / "ignored.md").write_text("# ignored\n\nMySQL PostgreSQL\n")
    return root


@pytest.fixture
def harness(vault: Path, make_harness: Callable[..., Harness]) -> Harness:
    """Opened on a new data dir (so a full pass is due) and not synced yet."""
    h = make_harness(vault, FakeEmbedder())
    assert h.index.open() is True
    return h


@pytest.fixture
def synced_harness(vault: Path, make_harness: Callable[..., Harness]) -> Harness:
    """Opened and synced once: the index holds the vault."""
    h = make_harness(vault, FakeEmbedder())
    h.index.open()
    h.indexer.sync()
    return h
