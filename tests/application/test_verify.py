"""`verify` on a real index: clean when it matches the vault, and each kind of drift found and named."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from backend.application.indexing.verify import verify_index
from backend.domain.models import PointRecord
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.harness import NOTES, Harness
from tests.vault_files import write


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for rel, text in NOTES.items():
        write(root, rel, text)
    write(root, "Links.md", "# Links\n\n[[Shopping list]] and [[Sreenivas]]\n")
    return root


@pytest.fixture
def harness(synced_harness: Harness) -> Harness:
    return synced_harness


def test_an_index_that_matches_the_vault_is_consistent(harness: Harness, vault: Path) -> None:
    os.utime(vault / "Shopping list.md")  # touched, not changed: not drift
    report = verify_index(harness.index, FileSystemVault(vault))
    assert not report.drifted
    assert report.findings() == []
    assert (report.notes_on_disk, report.notes_indexed, report.dense_pending) == (4, 4, 0)
    assert report.chunks == harness.store.count()


def test_every_kind_of_drift_is_found_and_a_sync_repairs_it(harness: Harness, vault: Path) -> None:
    # the disk moves on without the index
    write(vault, "New.md", "# New\n\nnot indexed yet\n")
    (vault / "Finance/Sreenivas.md").unlink()
    write(vault, "Shopping list.md", "# Shopping list\n\n- quince\n")
    # and the store loses or gains things behind the index's back
    store, graph = harness.store, harness.graph_store
    store.delete_by_note("Projects/Database migration.md")
    (ghost,) = [p for p in store.scroll(limit=500)[0] if p.payload["note_path"] == "Links.md"][:1]
    store.upsert(
        [PointRecord(id=ghost.id, sparse=_any_sparse(harness), payload={**ghost.payload}, dense=None)]
    )
    orphan = {**ghost.payload, "note_path": "Ghost.md"}
    store.upsert(
        [PointRecord(id="00000000-0000-0000-0000-0000000000aa", sparse=_any_sparse(harness), payload=orphan)]
    )
    # a note record lost while its links stayed: the record goes with its links, the links come back alone
    links = graph.outlinks("Links.md")
    assert links
    graph.delete_note("Links.md")
    graph.put_many([], links)

    report = verify_index(harness.index, FileSystemVault(vault))
    assert report.drifted
    found = dict(report.findings())
    assert found == {
        "notes on disk missing from the index": ["Links.md", "New.md"],
        "indexed notes no longer on disk": ["Finance/Sreenivas.md"],
        "indexed notes whose text changed on disk": ["Shopping list.md"],
        "chunk points without a note record": ["Ghost.md", "Links.md"],
        "note records without chunk points": ["Projects/Database migration.md"],
        "links whose source note is gone": ["Links.md"],
    }

    harness.index.close()  # a restart: the in-memory picture comes from the stored records again
    harness.index.open()
    report = harness.indexer.sync()
    assert report.repaired == 1  # the note without chunk points
    assert not verify_index(harness.index, FileSystemVault(vault)).drifted
    assert harness.top_note("PostgreSQL") == "Projects/Database migration.md"


def test_missing_dense_vectors_are_drift_and_get_embedded_again(harness: Harness, vault: Path) -> None:
    store = harness.store
    (point,) = [p for p in store.scroll(limit=500)[0] if p.payload["note_path"] == "Shopping list.md"]
    store.upsert([PointRecord(id=point.id, sparse=_any_sparse(harness), payload=point.payload, dense=None)])
    report = verify_index(harness.index, FileSystemVault(vault))
    assert dict(report.findings()) == {
        "notes missing dense vectors they are recorded with": ["Shopping list.md"]
    }
    assert harness.indexer.sync().repaired == 1
    assert all(entry.has_dense for entry in store.inventory())


def _any_sparse(harness: Harness):  # type: ignore[no-untyped-def]
    return harness.encoder.encode_query("anything")
