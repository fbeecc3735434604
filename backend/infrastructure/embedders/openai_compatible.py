"""Dense embeddings from a server speaking OpenAI's embeddings API (`POST {base}/embeddings`): llama.cpp's
`llama-server --embeddings`, LM Studio, vLLM, Hugging Face text-embeddings-inference, a hosted API.

What every server does alike (batches, retries, checks, errors) is remote.py's; here is only what this API
speaks: `{"model", "input": [...], "encoding_format": "float"}` answered by `data[i].embedding`, put back in
the order of `data[i].index` (the API does not promise the order of `data`), and `{base}/models` for health.
"""

from __future__ import annotations

from typing import Any

from backend.domain.errors import EmbedderUnavailableError, KnowledgeBridgeError, ModelNotFoundError
from backend.domain.index.embedding_instructions import base_name
from backend.infrastructure.embedders.remote import (
    ERROR_SNIPPET,
    PROBE_TEXT,
    RemoteEmbedder,
    mentions_missing_model,
)

DEFAULT_BASE_URL = "http://127.0.0.1:8080/v1"  # llama.cpp's llama-server


class OpenAICompatibleEmbedder(RemoteEmbedder):
    """`backend.application.ports.Embedder` over an OpenAI-compatible `/embeddings`. Safe to share between
    threads."""

    server = "The OpenAI-compatible server"

    def _request(self, texts: list[str]) -> tuple[str, dict[str, Any]]:
        # appended to the base URL, which carries the API's path (…/v1)
        return "/embeddings", {"model": self._model, "input": texts, "encoding_format": "float"}

    def _vectors(self, body: object) -> list[Any]:
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list) or not all(isinstance(item, dict) for item in data):
            raise EmbedderUnavailableError(
                f"{self.server}'s /embeddings response has no 'data' list of objects. "
                f"Got: {str(body)[:ERROR_SNIPPET]}"
            )
        indexes = [item.get("index", position) for position, item in enumerate(data)]
        if not all(type(index) is int for index in indexes) or sorted(indexes) != list(range(len(data))):
            raise EmbedderUnavailableError(
                f"{self.server}'s /embeddings response numbers its items {indexes[:10]}, "
                f"not 0..{len(data) - 1}"
            )
        ordered = sorted(zip(indexes, data, strict=True), key=lambda pair: pair[0])
        return [item.get("embedding") for _, item in ordered]

    def _refusal(self, status: int, message: str) -> KnowledgeBridgeError | None:
        if mentions_missing_model(message):
            return self._model_not_found(message)
        if status == 404:  # no such route: most often a base URL without its /v1
            return EmbedderUnavailableError(
                f"{self.server} at {self._base_url} has no /embeddings (HTTP 404): {message}",
                suggestion="Check OPENAI_BASE_URL: it is the API's root, usually ending in /v1.",
            )
        return None

    def _model_not_found(self, message: str) -> ModelNotFoundError:
        return ModelNotFoundError(
            f"{self.server} at {self._base_url} has no embedding model '{self._model}' ({message})",
            suggestion="Load the model in the server, or set EMBEDDING_MODEL to a model it lists at /models.",
        )

    def health(self) -> bool:
        """True when `{base}/models` answers quickly and lists the model (or the one model it serves:
        llama.cpp names it after its file and embeds whatever name is asked); a server without `/models`
        (text-embeddings-inference answers 404) is asked to embed a short text instead."""
        try:
            response = self._client.get("/models", timeout=self._health_timeout)
            if response.status_code in (404, 405):
                return self._answers_probe()
            if response.status_code != 200:
                return False
            data = response.json().get("data") or []
            ids = [entry.get("id") for entry in data if isinstance(entry, dict)]
            names = {base_name(name) for name in ids if isinstance(name, str)}
            return base_name(self._model) in names or len(ids) == 1
        except Exception:  # health must never raise, whatever the server or network does
            return False

    def _answers_probe(self) -> bool:
        path, payload = self._request([PROBE_TEXT])
        response = self._client.post(path, json=payload, timeout=self._health_timeout)
        return response.status_code == 200


__all__ = ["DEFAULT_BASE_URL", "OpenAICompatibleEmbedder"]
