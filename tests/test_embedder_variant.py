"""The in-process model's variant (ONNX_VARIANT) is part of what an index and the embedding cache record."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.infrastructure.embedders.cache import CachedEmbedder, cache_key
from backend.infrastructure.embedders.onnx_minilm import DEFAULT_VARIANT, OnnxMiniLMEmbedder
from tests.application.fakes import FakeEmbedder


def _vault(tmp_path: Path) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Tides.md").write_text(
        "# Tides\n\nThe tide turns twice a day at the harbour.\n", encoding="utf-8"
    )
    (vault / "Debts.md").write_text("# Debts\n\nI owe Sam 50 dollars for the concert.\n", encoding="utf-8")
    return vault


def test_the_cache_key_includes_the_variant(tmp_path: Path) -> None:
    names = [OnnxMiniLMEmbedder(cache_dir=tmp_path, variant=v).model_name for v in ("fp32", DEFAULT_VARIANT)]
    assert cache_key(names[0], "same text") != cache_key(names[1], "same text")
    path = tmp_path / "cache.sqlite3"
    # counting fakes under the names the two variants record
    first = FakeEmbedder(model_name=names[0])
    CachedEmbedder(first, path).embed_documents(["same text"])
    second = FakeEmbedder(model_name=names[1])
    CachedEmbedder(second, path).embed_documents(["same text"])
    assert (first.texts_embedded, second.texts_embedded) == (1, 1)  # never served the other's vector


@pytest.mark.slow
def test_an_index_of_another_variant_is_not_written_into_and_a_rebuild_switches_it(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    data = tmp_path / "data"

    def services(variant: str):  # noqa: ANN202 - the composition root's Services
        settings = load_settings(vault_path=vault, data_dir=data, onnx_variant=variant, watch=False)
        return build_services(settings)

    built = services(DEFAULT_VARIANT)  # the index is created with the default variant's identity
    try:
        built.index.open()
        assert built.index.identity.embedding_model == f"all-MiniLM-L6-v2-{DEFAULT_VARIANT}"
    finally:
        built.close()

    switched = services("fp32")
    try:
        switched.index.open()
        assert switched.index.model_mismatch  # fp32 vectors never go into the default variant's index
        assert switched.index.keyword_fallback is not None  # still answers, by keyword
        switched.indexer.rebuild()  # the zero-downtime rebuild of a model change
        assert not switched.index.model_mismatch
        assert switched.index.identity.embedding_model == "all-MiniLM-L6-v2"
        assert switched.index.dense_pending == 0
        assert switched.index.indexed_notes == 2
    finally:
        switched.close()
