"""When the recall gate is fitted again, and which weights judge meanwhile."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from pathlib import Path

from backend.application.search.recall_gate import RecallGate
from backend.domain.ranking.confidence import DENSE, KEYWORD_ONLY, Evidence
from backend.infrastructure.index_catalog.recall_gate_file import RecallGateFile


def _ask() -> Callable[[str], Sequence[Evidence]]:
    rng = random.Random(11)

    def ask(text: str) -> Sequence[Evidence]:
        cosine = rng.gauss(0.3, 0.05)
        return [Evidence(dense=cosine, keyword=0.0, covered=0, query_terms=2, dense_background=0.2)]

    return ask


def test_a_model_with_shipped_weights_keeps_them_and_is_never_fitted() -> None:
    gate = RecallGate()
    assert gate.calibration("all-MiniLM-L6-v2-int8", dense=True) is DENSE["all-MiniLM-L6-v2"]
    assert gate.state("all-MiniLM-L6-v2").source == "shipped"
    assert not gate.needs_fit("all-MiniLM-L6-v2", 1000)


def test_an_unknown_model_is_judged_by_keyword_until_fitted_then_by_its_own_gate(tmp_path: Path) -> None:
    gate = RecallGate(RecallGateFile(tmp_path))
    assert gate.calibration("mxbai-embed-large", dense=True) is KEYWORD_ONLY
    assert gate.needs_fit("mxbai-embed-large", 1000)
    stored = gate.fit("mxbai-embed-large", _ask(), 1000)
    assert stored is not None
    assert gate.calibration("mxbai-embed-large", dense=True) == stored.gate.calibration
    assert gate.calibration("mxbai-embed-large", dense=False) is KEYWORD_ONLY  # keyword-only hits
    assert gate.state("mxbai-embed-large").source == "fitted"
    # kept: a new service reads it back, and wants no fit for the same model and a like-sized vault
    again = RecallGate(RecallGateFile(tmp_path))
    assert again.calibration("mxbai-embed-large", dense=True) == stored.gate.calibration
    assert not again.needs_fit("mxbai-embed-large", 1500)


def test_another_model_or_a_vault_grown_or_shrunk_past_twice_is_fitted_again(tmp_path: Path) -> None:
    gate = RecallGate(RecallGateFile(tmp_path))
    gate.fit("nomic-embed-text", _ask(), 1000)
    assert gate.needs_fit("mxbai-embed-large", 1000)
    assert gate.calibration("mxbai-embed-large", dense=True) is KEYWORD_ONLY  # never another model's
    assert gate.needs_fit("nomic-embed-text", 2100)
    assert gate.needs_fit("nomic-embed-text", 450)
    assert not gate.needs_fit("nomic-embed-text", 1900)


def test_vaults_sharing_a_data_dir_keep_their_own_gate(tmp_path: Path) -> None:
    """Two backends on one DATA_DIR, each its VAULT_NAME: a gate fitted on one vault's chunks is not the
    other's (it fits its own)."""
    RecallGate(RecallGateFile(tmp_path)).fit("nomic-embed-text", _ask(), 1000)
    assert not RecallGate(RecallGateFile(tmp_path)).needs_fit("nomic-embed-text", 1000)
    assert RecallGate(RecallGateFile(tmp_path, "-beta")).needs_fit("nomic-embed-text", 1000)


def test_an_unreadable_gate_file_is_fitted_again(tmp_path: Path) -> None:
    (tmp_path / "recall_gate.json").write_text("{not json", encoding="utf-8")
    gate = RecallGate(RecallGateFile(tmp_path))
    assert gate.needs_fit("mxbai-embed-large", 1000)


def test_waiting_for_the_fit_waits_for_the_one_already_running(tmp_path: Path) -> None:
    """An evaluation asks its questions once the gate is in, even when the fit started after the index job."""
    import threading

    from backend.application.indexing.gate_upkeep import GateUpkeep

    release = threading.Event()
    asked = _ask()

    def slow(text: str) -> Sequence[Evidence]:
        release.wait()
        return asked(text)

    gate = RecallGate(RecallGateFile(tmp_path))

    class Search:
        def __init__(self) -> None:
            self.gate = gate
            self.chunks = type("Counter", (), {"count": staticmethod(lambda live: 1000)})()

        def serving_model(self) -> str:
            return "mxbai-embed-large"

    class Index:
        dense_pending = 0

        def serving(self) -> object:
            from contextlib import nullcontext

            return nullcontext(None)

    upkeep = GateUpkeep(search=Search(), index=Index())  # type: ignore[arg-type]
    upkeep._ask = slow  # type: ignore[method-assign]
    assert upkeep.check() is not None  # the job's end starts the fit
    assert upkeep.check() is None  # a second look finds it running
    threading.Timer(0.1, release.set).start()
    upkeep.wait()
    assert gate.state("mxbai-embed-large").source == "fitted"


def test_a_model_going_down_during_the_fit_leaves_no_gate_fitted_from_some_probes(tmp_path: Path) -> None:
    asked = _ask()
    turns = iter(range(10_000))

    def flaky(text: str) -> Sequence[Evidence]:
        if next(turns) == 100:  # one probe answered by keyword only
            return [Evidence(dense=None, keyword=1.0, covered=1, query_terms=2)]
        return asked(text)

    gate = RecallGate(RecallGateFile(tmp_path))
    assert gate.fit("mxbai-embed-large", flaky, 1000) is None
    assert gate.state("mxbai-embed-large").source == "keyword"
    assert not (tmp_path / "recall_gate.json").exists()
