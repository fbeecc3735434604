"""One embedding cache for every vault and data dir of a user: the configured embedder (Ollama, served by a
real local HTTP server) sends a text to the model once, whichever data dir or vault asks for it again."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.adapters import build_embedder
from backend.config import load_settings
from backend.data_dirs import embedding_cache
from backend.infrastructure.embedders.cache import CachedEmbedder
from tests.application.fakes import FakeEmbedder
from tests.fake_ollama import MODEL, FakeOllama

TEXTS = ["## Morning\n\nGratitude:", "Project kickoff notes", "Recipe: red lentil dal"]


def _embed(server: FakeOllama, vault: Path, data_dir: Path, **settings: object) -> None:
    embedder = build_embedder(
        load_settings(
            vault_path=vault,
            data_dir=data_dir,
            embedding_provider="ollama",
            ollama_url=server.url,
            embedding_model=MODEL,
            **settings,
        )
    )
    assert embedder is not None
    try:
        embedder.embed_documents(TEXTS)
    finally:
        embedder.close()


def test_another_data_dir_and_another_vault_send_nothing_again(tmp_path: Path) -> None:
    """`make eval` and the benchmarks index a vault into data dirs of their own, a wiped data dir starts
    empty, a personal vault shares templates with a work vault: none of them re-embeds a known text."""
    work, personal = tmp_path / "work", tmp_path / "personal"
    work.mkdir()
    personal.mkdir()
    with FakeOllama() as server:
        _embed(server, work, tmp_path / "data-work")
        assert server.texts == len(TEXTS)
        _embed(server, work, tmp_path / "data-eval")
        _embed(server, personal, tmp_path / "data-personal")
        assert server.texts == len(TEXTS)


def test_an_install_keeps_the_vectors_its_data_dir_cached_before(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    data = tmp_path / "data"
    CachedEmbedder(FakeEmbedder(32, MODEL), data / "embedding_cache.sqlite3").embed_documents(TEXTS)
    with FakeOllama() as server:
        _embed(server, vault, data)
        assert server.texts == 0


def test_the_cache_sits_in_the_users_cache_folder_unless_told(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    shared = tmp_path / "xdg" / "knowledge-bridge" / "embeddings.sqlite3"
    assert embedding_cache(None, tmp_path / "data") == shared
    assert embedding_cache(tmp_path / "mine", tmp_path / "data") == tmp_path / "mine" / "embeddings.sqlite3"
