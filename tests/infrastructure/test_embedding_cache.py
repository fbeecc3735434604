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


def test_a_text_repeated_in_one_call_is_sent_once(tmp_path: Path) -> None:
    """The same template paragraph in many daily notes, embedded in one call: the model sees it once."""
    fake = FakeEmbedder()
    cache = CachedEmbedder(fake, tmp_path / "cache.sqlite3")
    texts = ["## Morning\n\nGratitude: ...", "walked the dog", "## Morning\n\nGratitude: ..."] * 100
    vectors = cache.embed_documents(texts)
    assert fake.texts_embedded == 2
    assert vectors[0] == vectors[2] == vectors[297]
    assert cache.embedding_counts() == (2, 298)


def test_a_data_dirs_earlier_cache_is_read_and_copied_into_the_shared_one(tmp_path: Path) -> None:
    """An install from before the shared cache keeps its vectors: nothing is embedded again, and the
    vectors found there serve another vault through the shared cache."""
    old = tmp_path / "data" / "embedding_cache.sqlite3"
    CachedEmbedder(FakeEmbedder(), old).embed_documents(["kept from before", "also kept"])
    shared = tmp_path / "cache" / "embeddings.sqlite3"
    fake = FakeEmbedder()
    upgraded = CachedEmbedder(fake, shared, also_read=[old])
    upgraded.embed_documents(["kept from before", "new text"])
    assert fake.texts_embedded == 1  # only "new text"
    upgraded.close()
    another_vault = FakeEmbedder()
    CachedEmbedder(another_vault, shared).embed_documents(["kept from before", "new text"])
    assert another_vault.texts_embedded == 0


def test_two_services_share_one_cache_file(tmp_path: Path) -> None:
    """Two vaults' services on one machine (each its own connection) write the same file at once; each
    text is then known to both."""
    shared = tmp_path / "embeddings.sqlite3"
    work, personal = CachedEmbedder(FakeEmbedder(), shared), CachedEmbedder(FakeEmbedder(), shared)
    texts = [f"shared template line {i}" for i in range(300)]
    threads = [
        threading.Thread(target=lambda c=cache, o=offset: [c.embed_documents([t]) for t in texts[o::2]])
        for offset, cache in enumerate((work, personal))
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fake = FakeEmbedder()
    CachedEmbedder(fake, shared).embed_documents(texts)
    assert fake.texts_embedded == 0


def test_past_its_size_cap_the_cache_drops_the_vectors_used_least_recently(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    cache = CachedEmbedder(FakeEmbedder(dimension=256), path, max_bytes=400_000)
    old = [f"old text {i}" for i in range(100)]
    cache.embed_documents(old)
    cache._db.execute("UPDATE vectors SET used = 1")  # noqa: SLF001 - as if embedded long ago
    cache._db.commit()  # noqa: SLF001
    cache.embed_documents([f"new text {i}" for i in range(400)])
    cache.close()
    assert path.stat().st_size < 1_000_000
    fake = FakeEmbedder(dimension=256)
    CachedEmbedder(fake, path, max_bytes=400_000).embed_documents(["new text 399", *old])
    assert fake.texts_embedded == len(old)  # the old ones were dropped, the newest kept


def test_a_new_cache_file_is_readable_by_its_user_only(tmp_path: Path) -> None:
    """It holds vectors of the notes' text, in a cache folder other programs of the machine may read."""
    path = tmp_path / "embeddings.sqlite3"
    CachedEmbedder(FakeEmbedder(), path).embed_documents(["a private note"])
    assert path.stat().st_mode & 0o777 == 0o600
