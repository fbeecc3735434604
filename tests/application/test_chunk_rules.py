"""An index whose chunks were cut by older rules (domain/index/chunk_rules.py) is built again once, in the
background, on the first start of code with newer ones: what a chunk says of itself (the periods its heading
labels it with) reaches notes that did not change, with nothing re-embedded and searches answered meanwhile.
On the embedded store and real files; the older index is one written without the rules' record, as code
before it wrote them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from backend.application.indexing.index_supervisor import IndexSupervisor
from backend.domain.index.chunk_rules import CHUNK_RULES
from backend.domain.periods import written_periods
from backend.infrastructure.qdrant.edge_engine import IDENTITY_FILE
from tests.harness import Harness
from tests.vault_files import write_notes

LEDGER = "# Boat spend\n\n## 2024\n\n| Oct | stove | 450 |\n\n## 2025\n\n| Jan | batteries | 2,835 |\n"


def _built_by_older_rules(vault: Path, data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index as the code before CHUNK_RULES 1 built it: headings labelled no period, no rules recorded."""
    with monkeypatch.context() as older:
        older.setattr(written_periods, "title_span", lambda name, **_: None)
        first = Harness(vault, data, None)
        first.index.open()
        first.indexer.sync()
        first.close()
    for record in data.rglob(IDENTITY_FILE):
        stored = json.loads(record.read_text(encoding="utf-8"))
        del stored["chunk_rules"]
        record.write_text(json.dumps(stored), encoding="utf-8")


def _started(harness: Harness, vault: Path, *, auto_reembed: bool) -> IndexSupervisor:
    supervisor = harness.supervisor(vault, auto_reembed=auto_reembed)
    supervisor.open()
    return supervisor


def _periods_of_2025(harness: Harness) -> list[str]:
    hits = harness.search.search("batteries", top_k=1).hits
    return list(hits[0].payload["periods"])


def _recorded(data: Path) -> set[object]:
    return {json.loads(r.read_text(encoding="utf-8")).get("chunk_rules") for r in data.rglob(IDENTITY_FILE)}


@pytest.mark.parametrize("auto_reembed", [True, False])
def test_an_index_cut_by_older_rules_is_rebuilt_once_by_itself_unless_told_not_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auto_reembed: bool
) -> None:
    notes = {"Money/Boat spend.md": LEDGER, "Stove.md": "# Stove\n\nFitted.\n"}
    vault = write_notes(tmp_path / "vault", notes)
    data = tmp_path / "data"
    _built_by_older_rules(vault, data, monkeypatch)

    later = Harness(vault, data, None)
    supervisor = _started(later, vault, auto_reembed=auto_reembed)
    try:
        assert supervisor.jobs.wait(30)
        job = supervisor.jobs.current
        assert job is not None
        if auto_reembed:
            assert (job.kind, job.phase) == ("rebuild", "done")
            assert _periods_of_2025(later) == ["2025-01-01/2025-12-31"]
            assert _recorded(data) == {CHUNK_RULES}
        else:  # it catches up with the vault as it always did; POST /index/rebuild brings the rules
            assert job.kind == "sync"
            assert _periods_of_2025(later) == []
    finally:
        supervisor.stop()
        later.close()
    if not auto_reembed:
        return
    again = Harness(vault, data, None)  # the next start: nothing to rebuild
    supervisor = _started(again, vault, auto_reembed=True)
    try:
        assert supervisor.jobs.wait(30)
        job = supervisor.jobs.current
        assert job is not None
        assert (job.kind, job.phase) == ("sync", "done")
    finally:
        supervisor.stop()
        again.close()
