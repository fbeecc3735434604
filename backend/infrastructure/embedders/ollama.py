"""Dense embeddings from an Ollama server (`POST /api/embed`), e.g. `mxbai-embed-large` in docker compose.

What every server does alike (batches, retries, checks, errors) is remote.py's; here is only what Ollama
speaks: the request, where its vectors are, how it says a model is missing, and `/api/tags` for health.
"""

from __future__ import annotations

from typing import Any

from backend.domain.errors import EmbedderUnavailableError, KnowledgeBridgeError, ModelNotFoundError
from backend.infrastructure.embedders.remote import (
    ERROR_SNIPPET,
    KNOWN_DIMENSIONS,
    RemoteEmbedder,
    known_dimension,
    mentions_missing_model,
)

DEFAULT_MODEL = "mxbai-embed-large"


class OllamaEmbedder(RemoteEmbedder):
    """`backend.application.ports.Embedder` backed by Ollama's HTTP API. Safe to share between threads.
    `concurrency` batches are in flight at once (Ollama serves parallel requests, OLLAMA_NUM_PARALLEL on its
    side)."""

    server = "Ollama"

    def __init__(self, *, base_url: str, model: str = DEFAULT_MODEL, **options: Any) -> None:
        super().__init__(base_url=base_url, model=model, **options)

    def _request(self, texts: list[str]) -> tuple[str, dict[str, Any]]:
        # truncate=true makes Ollama cut inputs longer than the model's context instead of failing the batch.
        return "/api/embed", {"model": self._model, "input": texts, "truncate": True}

    def _vectors(self, body: object) -> list[Any]:
        if not isinstance(body, dict) or not isinstance(body.get("embeddings"), list):
            raise EmbedderUnavailableError(
                f"Ollama's /api/embed response has no 'embeddings' list. Got: {str(body)[:ERROR_SNIPPET]}"
            )
        vectors: list[Any] = body["embeddings"]
        return vectors

    def _refusal(self, status: int, message: str) -> KnowledgeBridgeError | None:
        if status == 404 or mentions_missing_model(message):
            return self._model_not_found(message)
        return None

    def _model_not_found(self, message: str) -> ModelNotFoundError:
        return ModelNotFoundError(
            f"Ollama at {self._base_url} has no embedding model '{self._model}' ({message})",
            suggestion=f"Pull the model first: `ollama pull {self._model}`.",
        )

    def health(self) -> bool:
        """True when Ollama answers `/api/tags` quickly and lists the configured model."""
        try:
            response = self._client.get("/api/tags", timeout=self._health_timeout)
            if response.status_code != 200:
                return False
            models = response.json().get("models") or []
            names = {entry.get("name") for entry in models if isinstance(entry, dict)}
            names |= {entry.get("model") for entry in models if isinstance(entry, dict)}
            return _with_tag(self._model) in {_with_tag(name) for name in names if isinstance(name, str)}
        except Exception:  # health must never raise, whatever the server or network does
            return False


def _with_tag(name: str) -> str:
    """Ollama lists `mxbai-embed-large` as `mxbai-embed-large:latest`."""
    last_segment = name.rsplit("/", 1)[-1]
    return name if ":" in last_segment else f"{name}:latest"


__all__ = ["DEFAULT_MODEL", "KNOWN_DIMENSIONS", "OllamaEmbedder", "known_dimension"]
