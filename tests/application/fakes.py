"""A deterministic embedder for use-case tests: bag-of-words vectors, so shared words mean similarity."""

from __future__ import annotations

import math
import threading
import zlib
from collections.abc import Sequence

from backend.domain.errors import EmbedderUnavailableError
from backend.domain.text.sparse import tokenize


class FakeEmbedder:
    """`spread`: each word adds its own weight (from its hash) instead of 1, so different texts practically
    never get the same cosine with a query: rankings without ties, as a real model gives."""

    def __init__(self, dimension: int = 32, model_name: str = "fake-bow", *, spread: bool = False) -> None:
        self._dimension = dimension
        self._model_name = model_name
        self._spread = spread
        self.calls = 0
        self.texts_embedded = 0
        self.available = True

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimension(self) -> int:
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not self.available:
            raise EmbedderUnavailableError("fake embedder switched off")
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        if not self.available:
            raise EmbedderUnavailableError("fake embedder switched off")
        return self._vector(text)

    def health(self) -> bool:
        return self.available

    def close(self) -> None:
        pass

    def _vector(self, text: str) -> list[float]:
        vec = [0.0] * self._dimension
        for token in tokenize(text):
            code = zlib.crc32(token.encode())
            vec[code % self._dimension] += 1.0 + (code >> 16) / 65536 if self._spread else 1.0
        norm = math.sqrt(sum(v * v for v in vec)) or 1.0
        return (
            [v / norm if norm else 0.0 for v in vec]
            if any(vec)
            else [1.0 / math.sqrt(self._dimension)] * self._dimension
        )


class GatedEmbedder(FakeEmbedder):
    """Document embedding waits for `gate`: a test can look at the index while dense vectors are pending.
    `entered` is set when a call is waiting at the gate."""

    def __init__(self, dimension: int = 32, model_name: str = "fake-bow") -> None:
        super().__init__(dimension, model_name)
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.fail_with: Exception | None = None

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.entered.set()
        if not self.gate.wait(timeout=60):
            raise EmbedderUnavailableError("gate never opened")
        if self.fail_with is not None:
            raise self.fail_with
        return super().embed_documents(texts)


class DyingEmbedder(FakeEmbedder):
    """Answers `calls_left` document batches, then is down (as if the embedding service died mid-index)
    until the test sets `available` again."""

    def __init__(self, calls_left: int, dimension: int = 32, model_name: str = "fake-bow") -> None:
        super().__init__(dimension, model_name)
        self.calls_left = calls_left

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if self.calls_left == 0:  # dies once; whatever the test does with `available` afterwards holds
            self.available = False
        self.calls_left -= 1
        return super().embed_documents(texts)
