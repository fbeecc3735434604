"""`/index/status` tells loading from failed: a model still being built is not a fault, and searches during
the first index say the index is filling in, not that the embedder failed."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from backend.api.status_answer import status_answer
from backend.application.indexing.indexer import build_index
from backend.application.search.service import SearchService
from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.errors import ModelNotFoundError
from backend.domain.models import IndexIdentity
from backend.domain.text.sparse import SparseEncoder
from backend.infrastructure.index_catalog import EdgeIndexCatalog
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.api.conftest import AppFactory
from tests.application.fakes import FakeEmbedder
from tests.live_server import wait_until


class SlowLoadingEmbedder(FakeEmbedder):
    """Not healthy until its model has "loaded" (the event): the ONNX embedder while it builds its graph."""

    def __init__(self) -> None:
        super().__init__()
        self.loaded = threading.Event()
        self.failure: Exception | None = None

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.loaded.wait(timeout=60)
        if self.failure is None and not self.available:
            return super().embed_documents(texts)  # raises EMBEDDER_UNAVAILABLE
        if self.failure is not None:
            raise self.failure
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]

    def health(self) -> bool:
        return self.available and self.loaded.is_set() and self.failure is None


def _services(tmp_path: Path, embedder: SlowLoadingEmbedder):  # type: ignore[no-untyped-def]
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Note.md").write_text("# Note\n\nsome words\n")
    settings = load_settings(vault_path=vault, data_dir=tmp_path / "data", watch=False)
    services = build_services(settings, embedder=embedder)
    services.supervisor.open(start_indexing=False)
    return services


def test_the_embedder_is_loading_then_ready(tmp_path: Path) -> None:
    embedder = SlowLoadingEmbedder()
    services = _services(tmp_path, embedder)
    try:
        services.supervisor.warm_embedder()
        loading = status_answer(services).embedder
        assert (loading.state, loading.healthy, loading.error) == ("loading", False, None)
        embedder.loaded.set()
        wait_until(lambda: not services.supervisor.embedder_warming, "the warm-up to finish")
        ready = status_answer(services).embedder
        assert (ready.state, ready.healthy, ready.error) == ("ready", True, None)
    finally:
        embedder.loaded.set()
        services.close()


def test_an_embedder_that_cannot_load_is_failed_with_its_error(tmp_path: Path) -> None:
    embedder = SlowLoadingEmbedder()
    embedder.failure = ModelNotFoundError("no model 'mxbai-embed-large'")
    embedder.loaded.set()
    services = _services(tmp_path, embedder)
    try:
        services.supervisor.warm_embedder()
        wait_until(lambda: not services.supervisor.embedder_warming, "the warm-up to finish")
        failed = status_answer(services).embedder
        assert failed.state == "failed"
        assert failed.error is not None
        assert failed.error.error_code == "MODEL_NOT_FOUND"
    finally:
        services.close()


def test_keyword_only_says_off(make_client: AppFactory) -> None:
    embedder = make_client().get("/index/status").json()["embedder"]
    assert (embedder["state"], embedder["error"]) == ("off", None)


def test_searches_during_the_first_index_say_it_is_filling_in_not_that_the_embedder_failed(
    tmp_path: Path,
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(3):
        (vault / f"Note {n}.md").write_text(f"# Note {n}\n\nsome words\n")
    embedder = SlowLoadingEmbedder()  # still loading: the dense pass waits for it
    encoder = SparseEncoder()
    index, indexer = build_index(
        catalog=EdgeIndexCatalog(tmp_path / "data"),
        embedder=embedder,
        vault=FileSystemVault(vault),
        parser=parse_note,
        encoder=encoder,
        identity=IndexIdentity(embedder.model_name, embedder.dimension, encoder.fingerprint),
        keyword_first_min=1,  # keyword vectors first, as for the first index of a large vault
    )
    search = SearchService(embedder=embedder, encoder=encoder, index=index)
    index.open()
    worker = threading.Thread(target=indexer.sync)
    worker.start()
    try:
        wait_until(lambda: index.indexed_notes == 3, "the keyword pass")
        warnings = search.search("words", top_k=1).warnings
        assert any("the index is still filling them in" in w for w in warnings), warnings
        assert not any("unavailable" in w for w in warnings), warnings
    finally:
        embedder.loaded.set()
        worker.join(timeout=60)
        index.close()
