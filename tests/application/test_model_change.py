"""An index built for another model, variant or keyword encoding (an upgrade, a changed setting): it keeps
answering as it was built, with the model that made its vectors, while a rebuild re-embeds the vault for the
configured settings, then switches. Only what cannot be served is left out, and says so."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from backend.domain.errors import EmbeddingModelMismatchError
from backend.domain.models import IndexIdentity, SearchMode
from backend.domain.text.sparse import SparseEncoder
from backend.domain.text.text_analysis import TextAnalyzer
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness

OLD, NEW = "model-old", "model-new"


def _built_with(vault: Path, data: Path, embedder: FakeEmbedder | None, **options: object) -> None:
    first = Harness(vault, data, embedder, **options)  # type: ignore[arg-type]
    first.index.open()
    first.indexer.sync()
    first.close()


class OldModel:
    """What the service can load for an index's recorded model: here the old fake, counted."""

    def __init__(self) -> None:
        self.embedder = FakeEmbedder(dimension=32, model_name=OLD)
        self.asked: list[IndexIdentity] = []

    def __call__(self, stored: IndexIdentity) -> FakeEmbedder | None:
        self.asked.append(stored)
        return self.embedder if stored.embedding_model == OLD else None


def test_an_index_of_the_old_model_answers_hybrid_with_it_takes_edits_and_switches_after_the_rebuild(
    vault: Path, tmp_path: Path
) -> None:
    _built_with(vault, tmp_path / "data", FakeEmbedder(dimension=32, model_name=OLD))
    old, configured = OldModel(), FakeEmbedder(dimension=16, model_name=NEW)
    later = Harness(vault, tmp_path / "data", configured, serving_embedder=old)
    try:
        assert later.index.open() is False
        assert later.index.model_mismatch
        assert later.index.serving_identity.embedding_model == OLD
        outcome = later.search.search("basmati")
        assert (outcome.mode, outcome.warnings) == (SearchMode.HYBRID, [])  # not degraded
        assert later.top_note("owe rupees", mode=SearchMode.DENSE) == "Finance/Sreenivas.md"
        # a note saved meanwhile is searchable at once, its vectors made by the old model, like the rest
        (vault / "Tides.md").write_text("# Tides\n\nThe harbour tide turns at noon.\n", encoding="utf-8")
        later.indexer.refresh(["Tides.md"])
        assert later.top_note("harbour tide", mode=SearchMode.DENSE) == "Tides.md"
        assert configured.texts_embedded == 0
        assert old.embedder.texts_embedded > 0

        later.indexer.rebuild()
        assert not later.index.model_mismatch
        assert later.index.serving_identity.embedding_model == NEW
        assert later.top_note("harbour tide", mode=SearchMode.DENSE) == "Tides.md"
        assert configured.texts_embedded > 0
        ((_, vector),) = later.store.note_vectors("Tides.md")
        assert len(vector) == 16
    finally:
        later.close()


def test_when_the_old_model_cannot_be_loaded_it_answers_by_keyword_and_waits_for_the_rebuild(
    vault: Path, tmp_path: Path
) -> None:
    _built_with(vault, tmp_path / "data", FakeEmbedder(dimension=32, model_name="model-removed"))
    old = OldModel()
    later = Harness(
        vault, tmp_path / "data", FakeEmbedder(dimension=16, model_name=NEW), serving_embedder=old
    )
    try:
        later.index.open()
        assert [s.embedding_model for s in old.asked] == ["model-removed"]
        outcome = later.search.search("basmati")
        assert outcome.mode is SearchMode.KEYWORD
        assert "model-removed" in outcome.warnings[0]
        assert "keyword search only" in outcome.warnings[0]
        assert outcome.hits[0].payload["note_path"] == "Shopping list.md"
        with pytest.raises(EmbeddingModelMismatchError):
            later.indexer.sync()  # its dense vectors can be made by no model here: nothing is written
        later.indexer.rebuild()
        assert later.search.search("basmati").mode is SearchMode.HYBRID
    finally:
        later.close()


def test_keyword_settings_changed_it_answers_from_its_dense_vectors_until_the_rebuild(
    vault: Path, tmp_path: Path
) -> None:
    _built_with(vault, tmp_path / "data", FakeEmbedder())
    later = Harness(
        vault, tmp_path / "data", FakeEmbedder(), encoder=SparseEncoder(analyzer=TextAnalyzer(stemming=False))
    )
    try:
        later.index.open()
        outcome = later.search.search("basmati rice")  # same model: its dense vectors still answer
        assert outcome.mode is SearchMode.DENSE
        assert "keyword" in outcome.warnings[0]
        assert "dense search only" in outcome.warnings[0]
        assert outcome.hits[0].payload["note_path"] == "Shopping list.md"
        with pytest.raises(EmbeddingModelMismatchError):
            later.indexer.sync()  # keyword vectors of two encodings are never mixed
        later.indexer.rebuild()
        assert (later.search.search("basmati").mode, later.index.model_mismatch) == (SearchMode.HYBRID, False)
    finally:
        later.close()


@pytest.mark.parametrize("auto_reembed", [True, False])
def test_the_service_starts_the_re_embedding_by_itself_unless_told_not_to(
    vault: Path, tmp_path: Path, auto_reembed: bool
) -> None:
    _built_with(vault, tmp_path / "data", FakeEmbedder(dimension=32, model_name=OLD))
    later = Harness(
        vault, tmp_path / "data", FakeEmbedder(dimension=16, model_name=NEW), serving_embedder=OldModel()
    )
    supervisor = later.supervisor(vault, auto_reembed=auto_reembed)
    try:
        supervisor.open()
        job = supervisor.jobs.current
        assert job is not None
        assert supervisor.jobs.wait(30)
        if auto_reembed:
            assert (job.kind, supervisor.jobs.current.phase) == ("rebuild", "done")  # type: ignore[union-attr]
            assert later.index.serving_identity.embedding_model == NEW
        else:  # it still catches up with the vault, with the model its vectors are of
            assert job.kind == "sync"
            assert later.index.serving_identity.embedding_model == OLD
            assert later.search.search("basmati").mode is SearchMode.HYBRID
    finally:
        supervisor.stop()
        later.close()


def test_a_restart_says_what_left_each_extra_generation(
    vault: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    built = Harness(vault, data, None)
    built.index.open()
    built.indexer.sync()
    built.indexer.rebuild()  # g1 replaced by g2
    active = built.index.generation
    built.close()
    older = built.catalog.new_generation()  # stand-ins for what a kill leaves: a replaced generation not yet
    newer = built.catalog.new_generation()  # dropped (older than the active one), an unfinished build
    for generation in (older, newer):
        store, graph = built.catalog.open(generation)
        store.create(IndexIdentity("none", None, SparseEncoder().fingerprint))
        graph.reset()
        store.close()
        graph.close()
    # the older one is named below the active one, as a replaced generation always is
    (data / older).rename(data / "g1")
    caplog.set_level(logging.WARNING)
    restarted = Harness(vault, data, None)
    try:
        restarted.index.open()
        messages = [r.getMessage() for r in caplog.records if "dropping index generation" in r.getMessage()]
        assert sorted(messages) == sorted(
            [
                f"dropping index generation g1 replaced by {active} when a rebuild finished "
                "(it was not dropped then)",
                f"dropping index generation {newer} left by a rebuild that stopped before it switched",
            ]
        )
        assert restarted.catalog.generations() == [active]
    finally:
        restarted.close()
