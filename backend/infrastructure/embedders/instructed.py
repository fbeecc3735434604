"""The instructions a model served over HTTP was trained with (domain/index/embedding_instructions.py), put
before each text on its way to the server: the query instruction before a search query, the document
instruction before a note's text.

It sits in front of the embedding cache (adapters.py: instructed -> cache -> server), so the cache keys the
instructed text: vectors made with another instruction are never returned for this one. The in-process models
add their own and are never wrapped.
"""

from __future__ import annotations

from collections.abc import Sequence

from backend.application.ports import Embedder
from backend.domain.index.embedding_instructions import Instructions


class InstructedEmbedder:
    """`Embedder` that prefixes every text with its side's instruction before `server` (the cache in front of
    the server) embeds it."""

    def __init__(self, server: Embedder, instructions: Instructions) -> None:
        self._server = server
        self.instructions = instructions

    @property
    def model_name(self) -> str:
        return self._server.model_name

    @property
    def dimension(self) -> int:
        return self._server.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        prefix = self.instructions.document
        return self._server.embed_documents([prefix + text for text in texts] if prefix else texts)

    def embed_query(self, text: str) -> list[float]:
        return self._server.embed_query(self.instructions.query + text)

    def health(self) -> bool:
        return self._server.health()

    def embedding_counts(self) -> tuple[int, int]:
        """The cache's counts behind it (CountsEmbeddings): what a remote model was sent, for the status."""
        counts = getattr(self._server, "embedding_counts", None)
        return counts() if callable(counts) else (0, 0)

    def close(self) -> None:
        self._server.close()
