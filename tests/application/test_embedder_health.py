"""EmbedderHealth: the last failure is kept for status and warnings, and while the embedder is down a cheap
health probe (not a full embedding call with retries) decides whether to try it."""

from __future__ import annotations

from collections.abc import Sequence

from backend.application.serving.embedder_health import EmbedderHealth
from backend.domain.errors import EmbeddingModelMismatchError, ModelNotFoundError
from tests.application.fakes import FakeEmbedder
from tests.fakes.clock import ManualClock


class CountingEmbedder(FakeEmbedder):
    def __init__(self, dimension: int = 8) -> None:
        super().__init__(dimension)
        self.probes = 0
        self.queries = 0
        self.fail_with: Exception | None = None

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.fail_with is not None:
            raise self.fail_with
        return super().embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return super().embed_query(text)

    def health(self) -> bool:
        self.probes += 1
        return super().health()


def test_while_down_the_probe_decides_and_a_no_holds_for_the_interval() -> None:
    embedder, clock = CountingEmbedder(), ManualClock(100.0)
    health = EmbedderHealth(embedder, dimension=8, probe_interval=5.0, clock=clock)
    assert health.worth_trying()
    assert embedder.probes == 0  # nothing failed: no probe at all

    embedder.available = False
    assert health.query("q") is None
    assert health.problem is not None
    assert health.problem.code == "EMBEDDER_UNAVAILABLE"
    assert not health.worth_trying()  # probed: no
    assert not health.worth_trying()  # believed without asking again
    assert embedder.probes == 1
    clock.now += 5.0
    embedder.available = True
    assert health.worth_trying()  # asked again, and it is back
    assert health.query("q") is not None
    assert health.problem is None


def test_a_missing_model_is_kept_with_its_suggestion_for_status_and_warnings() -> None:
    embedder = CountingEmbedder()
    embedder.fail_with = ModelNotFoundError("no model house-embed", suggestion="`ollama pull house-embed`")
    health = EmbedderHealth(embedder, dimension=8)

    assert health.documents(["a", "b"]) is None

    assert health.problem is embedder.fail_with
    assert "MODEL_NOT_FOUND" in health.describe()
    assert "ollama pull house-embed" in health.describe()


def test_vectors_of_another_size_than_the_index_are_never_handed_out() -> None:
    health = EmbedderHealth(CountingEmbedder(dimension=8), dimension=16)

    assert health.documents(["a"]) is None
    assert health.query("a") is None
    assert isinstance(health.problem, EmbeddingModelMismatchError)
    assert "8-dimensional" in health.problem.detail
