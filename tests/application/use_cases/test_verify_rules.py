"""`verify` (application/indexing/verify.py) on the fakes: an index that matches the vault is clean, a touched
but unchanged note is not drift, and each kind of drift is found and named. (Repairing it is the indexer's:
tests/application/test_verify.py runs both on the embedded store.)"""

from __future__ import annotations

from backend.application.indexing.verify import verify_index
from backend.domain.models import PointRecord
from tests.application.use_cases.conftest import NOTES
from tests.fakes import FakeHandles


def test_an_index_that_matches_the_vault_is_clean_even_with_a_touched_note(handles: FakeHandles) -> None:
    handles.vault.mtimes["Shopping list.md"] = 2.0  # touched, not changed
    report = verify_index(handles.index, handles.vault)
    assert (report.drifted, report.findings()) == (False, [])
    assert (report.notes_on_disk, report.notes_indexed, report.dense_pending) == (len(NOTES), len(NOTES), 0)
    assert report.chunks == handles.index.store.count()


def test_every_kind_of_drift_is_found_and_named(handles: FakeHandles) -> None:
    vault, store, graph = handles.vault, handles.index.store, handles.index.graph_store
    vault.files["New.md"] = "# New\n\nnot indexed yet\n"
    del vault.files["Finance/Sreenivas.md"]
    vault.files["Shopping list.md"] = "# Shopping list\n\n- quince\n"
    store.delete_by_note("Projects/Runbook.md")
    (kept,) = [p for p in store.scroll(limit=500)[0] if p.payload["note_path"] == "Journal/2026-01-09.md"]
    orphan = PointRecord(id="00000000-0000-0000-0000-0000000000aa", sparse=store.shelf.points[kept.id].sparse,
                         payload={**kept.payload, "note_path": "Ghost.md"})  # fmt: skip
    store.upsert([orphan])
    del graph.shelf.notes["Projects/Database migration.md"]  # its record lost, its links and chunks kept
    report = verify_index(handles.index, vault)
    assert report.drifted
    assert report.findings() == [  # in the report's fixed order
        ("notes on disk missing from the index", ["New.md", "Projects/Database migration.md"]),
        ("indexed notes no longer on disk", ["Finance/Sreenivas.md"]),
        ("indexed notes whose text changed on disk", ["Shopping list.md"]),
        ("chunk points without a note record", ["Ghost.md", "Projects/Database migration.md"]),
        ("note records without chunk points", ["Projects/Runbook.md"]),
        ("links whose source note is gone", ["Projects/Database migration.md"]),
    ]


def test_missing_dense_vectors_are_drift_and_pending_ones_are_not(handles: FakeHandles) -> None:
    store = handles.index.store
    (point,) = [p for p in store.scroll(limit=500)[0] if p.payload["note_path"] == "Shopping list.md"]
    stored = store.shelf.points[point.id]
    store.upsert([PointRecord(id=stored.id, sparse=stored.sparse, payload=stored.payload, dense=None)])
    handles.index.add_notes({"Later.md": "# Later\n\nembedded when the embedder answers\n"}, dense=False)
    report = verify_index(handles.index, handles.vault)
    assert dict(report.findings()) == {
        "notes missing dense vectors they are recorded with": ["Shopping list.md"]
    }
    assert report.dense_pending == 1  # recorded as waiting: a sync embeds it, not drift
