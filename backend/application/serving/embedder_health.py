"""What the use cases know about the embedder between calls: its last failure, and whether to try it now.

An embedder that fails (down, model missing, vectors of the wrong size) makes indexing write keyword vectors
only and searches answer by keyword; the failure is kept so `/index/status` and search warnings can say what
is wrong and what to do (e.g. MODEL_NOT_FOUND with the `ollama pull` command). While a failure stands, the
embedder's cheap health probe (for Ollama one GET of `/api/tags`, no retries) decides whether the next call
is worth making; a "no" is believed for `probe_interval`. So during an outage a search or a watcher batch
answers at once instead of waiting through the embedder's retries and backoff, and the first call after the
embedder is back uses it again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from backend.application.ports import CountsEmbeddings, Embedder
from backend.domain.errors import (
    EmbedderUnavailableError,
    EmbeddingModelMismatchError,
    KnowledgeBridgeError,
    ModelNotFoundError,
)

# What an embedder may raise that means "no dense vectors now", not "the request is wrong".
EMBEDDER_FAILURES: tuple[type[KnowledgeBridgeError], ...] = (
    EmbedderUnavailableError,
    ModelNotFoundError,
    EmbeddingModelMismatchError,
)
PROBE_INTERVAL_SECONDS = 5.0


class EmbedderHealth:
    def __init__(
        self,
        embedder: Embedder,
        *,
        dimension: int | None,
        probe_interval: float = PROBE_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._embedder = embedder
        self._dimension = dimension
        self._probe_interval = probe_interval
        self._clock = clock
        self._lock = threading.Lock()
        self._problem: KnowledgeBridgeError | None = None
        self._unhealthy_until = 0.0  # until then a failed probe is believed without asking again

    def embedding_counts(self) -> tuple[int, int] | None:
        """(texts sent to the model, texts the cache answered) so far; None when the embedder does not say."""
        embedder = self._embedder
        return embedder.embedding_counts() if isinstance(embedder, CountsEmbeddings) else None

    @property
    def problem(self) -> KnowledgeBridgeError | None:
        """The last failure, until a call succeeds again."""
        return self._problem

    def describe(self) -> str:
        """The standing failure for a search warning: code, what happened and what to do."""
        problem = self._problem
        if problem is None:
            return "the embedder is unavailable"
        return f"the embedder is unavailable ({problem.code}: {problem.detail}; {problem.suggestion})"

    def worth_trying(self) -> bool:
        """True unless a failure stands and the health probe says no (a "no" holds for `probe_interval`)."""
        with self._lock:
            if self._problem is None:
                return True
            if self._clock() < self._unhealthy_until:
                return False
        healthy = self._embedder.health()  # outside the lock: it may be an HTTP call
        if not healthy:
            with self._lock:
                self._unhealthy_until = self._clock() + self._probe_interval
        return healthy

    @property
    def model_name(self) -> str:
        return self._embedder.model_name

    def healthy(self) -> bool:
        """The embedder's own health probe, asked now (for Ollama an HTTP call)."""
        return self._embedder.health()

    def close(self) -> None:
        """Release the embedder (a model loaded for an outdated generation, once it no longer serves)."""
        self._embedder.close()

    def documents(self, texts: Sequence[str]) -> list[list[float]] | None:
        """One vector per text, or None (the failure is kept) when the embedder cannot give them all."""
        return self._embed(lambda: self._embedder.embed_documents(texts))

    def query(self, text: str) -> list[float] | None:
        vectors = self._embed(lambda: [self._embedder.embed_query(text)])
        return vectors[0] if vectors is not None else None

    def _embed(self, call: Callable[[], list[list[float]]]) -> list[list[float]] | None:
        """The vectors `call` gives, each checked; a failure is kept (None returned), a success clears it."""
        try:
            vectors = call()
            for vector in vectors:
                self._check(vector)
        except EMBEDDER_FAILURES as exc:
            self.failed(exc)
            return None
        self.succeeded()
        return vectors

    def failed(self, exc: KnowledgeBridgeError) -> None:
        with self._lock:
            self._problem = exc

    def succeeded(self) -> None:
        with self._lock:
            self._problem = None
            self._unhealthy_until = 0.0

    def _check(self, vector: Sequence[float]) -> None:
        # Whatever the adapter checks itself: a vector of another size must never reach the index.
        if self._dimension is not None and len(vector) != self._dimension:
            raise EmbeddingModelMismatchError(
                f"the embedder {self._embedder.model_name} returned a {len(vector)}-dimensional vector, "
                f"but the index holds {self._dimension}-dimensional ones; it will not mix them",
                suggestion="Serve the model the index was built with, or rebuild the index with this one.",
            )
