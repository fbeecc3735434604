"""The persistent embedding cache, in front of a counting fake embedder, on a real SQLite file."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from backend.infrastructure.embedders.cache import CachedEmbedder
from tests.application.fakes import FakeEmbedder
from tests.harness import NOTES, Harness


def test_a_text_is_embedded_once_and_read_back_the_same(tmp_path: Path) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, tmp_path / "cache.sqlite3")
    first = cache.embed_documents(["alpha beta", "gamma"])
    again = cache.embed_documents(["gamma", "alpha beta"])
    assert fake.texts_embedded == 2
    assert again == [pytest.approx(first[1], abs=1e-6), pytest.approx(first[0], abs=1e-6)]
    assert (cache.hits, cache.misses) == (2, 2)


def test_only_missing_texts_reach_the_embedder_and_order_is_kept(tmp_path: Path) -> None:
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, tmp_path / "cache.sqlite3")
    cache.embed_documents(["one", "three"])
    vectors = cache.embed_documents(["one", "two", "three", "four"])
    assert fake.texts_embedded == 4  # "one" and "three" came from the cache
    direct = FakeEmbedder().embed_documents(["one", "two", "three", "four"])
    assert vectors == [pytest.approx(v, abs=1e-6) for v in direct]


def test_the_cache_survives_a_restart(tmp_path: Path) -> None:
    first = CachedEmbedder(FakeEmbedder(), tmp_path / "cache.sqlite3")
    first.embed_documents(["persisted text"])
    first.close()
    fake = FakeEmbedder()
    second = CachedEmbedder(fake, tmp_path / "cache.sqlite3")
    second.embed_documents(["persisted text"])
    assert fake.calls == 0


def test_vectors_of_another_model_are_never_reused(tmp_path: Path) -> None:
    CachedEmbedder(FakeEmbedder(model_name="model-a"), tmp_path / "cache.sqlite3").embed_documents(["shared"])
    other = FakeEmbedder(model_name="model-b")
    CachedEmbedder(other, tmp_path / "cache.sqlite3").embed_documents(["shared"])
    assert other.texts_embedded == 1


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    cache = CachedEmbedder(FakeEmbedder(), tmp_path / "cache.sqlite3")
    texts = [f"text {i}" for i in range(200)]

    def work(offset: int) -> None:
        for i in range(offset, 200, 4):
            cache.embed_documents([texts[i]])

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fake = FakeEmbedder()
    CachedEmbedder(fake, tmp_path / "cache.sqlite3").embed_documents(texts)
    assert fake.calls == 0


def test_a_rebuild_of_an_unchanged_vault_costs_no_embedding_calls(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text)
    fake = FakeEmbedder()
    cached = CachedEmbedder(fake, tmp_path / "cache.sqlite3")
    h = Harness(vault, tmp_path / "data", cached)  # type: ignore[arg-type]
    try:
        h.index.open()
        h.indexer.sync()
        calls = fake.calls
        assert calls > 0
        h.indexer.rebuild()
        assert fake.calls == calls
        assert h.index.indexed_notes == len(NOTES)
    finally:
        h.close()
