"""The vaults of one service share a model (backend/infrastructure/embedders/shared.py): loaded once, closed
with its last user, and a question asked of several vaults embedded once."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.shared import MODELS_IN_PROCESS, RECENT, ModelLease, SharedModels
from backend.vault_set import Library
from tests.application.fakes import FakeEmbedder
from tests.vault_files import write_notes


class CountingModel(FakeEmbedder):
    """Counts queries and closes; a query waits at `gate` once `hold` is set, so two can overlap."""

    def __init__(self) -> None:
        super().__init__()
        self.queries: list[str] = []
        self.closed = 0
        self.entered = threading.Event()
        self.gate = threading.Event()
        self.gate.set()

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        self.entered.set()
        assert self.gate.wait(timeout=30)
        return super().embed_query(text)

    def close(self) -> None:
        self.closed += 1


def test_vaults_naming_the_same_model_share_one_and_the_last_to_close_closes_it() -> None:
    pool, built = SharedModels(), []

    def build() -> CountingModel:
        built.append(CountingModel())
        return built[-1]

    work, personal = pool.lease("minilm", build), pool.lease("minilm", build)
    other = pool.lease("e5", build)
    assert len(built) == 2
    assert pool.held() == 2
    work.close()
    work.close()  # closing twice gives it back once
    assert built[0].closed == 0
    assert personal.embed_query("tides") == FakeEmbedder().embed_query("tides")  # still served
    personal.close()
    assert built[0].closed == 1
    assert built[1].closed == 0
    assert pool.held() == 1
    again = pool.lease("minilm", build)  # after the last closed: a fresh one
    assert len(built) == 3
    again.close()
    other.close()
    assert pool.held() == 0


def test_a_question_asked_of_two_vaults_at_once_is_embedded_once() -> None:
    pool, model = SharedModels(), CountingModel()
    work, personal = pool.lease("m", lambda: model), pool.lease("m", lambda: model)
    model.gate.clear()
    answers: dict[str, list[float]] = {}

    def ask(name: str, lease: ModelLease) -> threading.Thread:
        thread = threading.Thread(target=lambda: answers.__setitem__(name, lease.embed_query("the ledger")))
        thread.start()
        return thread

    first = ask("work", work)
    assert model.entered.wait(timeout=30)  # the work vault is embedding it now
    second = ask("personal", personal)
    model.gate.set()
    first.join(timeout=30)
    second.join(timeout=30)
    assert model.queries == ["the ledger"]
    assert answers["work"] == answers["personal"] == FakeEmbedder().embed_query("the ledger")
    # another text is embedded; the recent ones are kept, RECENT of them
    for n in range(RECENT):
        work.embed_query(f"question {n}")
    personal.embed_query("question 0")
    work.embed_query("the ledger")  # pushed out by RECENT newer ones
    assert model.queries.count("question 0") == 1
    assert model.queries.count("the ledger") == 2


class FailingModel(FakeEmbedder):
    def embed_query(self, text: str) -> list[float]:
        raise EmbedderUnavailableError("the model's server went away")

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        raise EmbedderUnavailableError("the model's server went away")


def test_a_failed_query_is_not_kept_and_says_why_to_every_vault() -> None:
    pool = SharedModels()
    lease = pool.lease("m", FailingModel)
    for _ in range(2):
        with pytest.raises(EmbedderUnavailableError, match="went away"):
            lease.embed_query("the ledger")


def test_a_service_of_two_vaults_on_the_default_model_loads_it_once(tmp_path: Path) -> None:
    work = write_notes(tmp_path / "Work", {"Budget.md": "# Budget\n\nThe quarterly budget review.\n"})
    personal = write_notes(tmp_path / "Personal", {"Garden.md": "# Garden\n\nTomato seeds and basil.\n"})
    settings = load_settings(
        vaults=f"work={work},personal={personal}", data_dir=tmp_path / "data", watch=False
    )
    held = MODELS_IN_PROCESS.held()
    library = Library.open(settings, build_services)
    try:
        assert MODELS_IN_PROCESS.held() == held + 1
        vectors = [services.embedder.embed_query("seeds") for _, services in library.each()]
        assert vectors[0] == vectors[1]
        assert len(vectors[0]) == 384
    finally:
        library.close()
    assert MODELS_IN_PROCESS.held() == held
