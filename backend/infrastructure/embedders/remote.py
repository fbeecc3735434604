"""What every embedder served over HTTP does the same way: Ollama's (ollama.py) and an OpenAI-compatible
server's (openai_compatible.py) differ only in the request they send, where the vectors are in the answer and
how they say a model is missing; batching, concurrency, retries, the checks of each answer and the errors are
written once, here.

Errors surface only as domain errors: `ModelNotFoundError` when the server does not have the model,
`EmbeddingModelMismatchError` when the model answers with vectors of another size than expected, and
`EmbedderUnavailableError` for everything else (unreachable, timeouts, 5xx after retries, rejected requests,
a refused key, responses that do not match the request).

The dimension is known without asking the server when it is given (EMBEDDING_DIMENSION, or the index's
recorded identity) or the model is in `KNOWN_DIMENSIONS`, so the service starts while the server is down;
every answer is then checked against it. Otherwise the first request (or a probe) tells it.
"""

from __future__ import annotations

import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Any

import httpx
import numpy as np

from backend.domain.errors import (
    EmbedderUnavailableError,
    EmbeddingModelMismatchError,
    KnowledgeBridgeError,
    ModelNotFoundError,
)
from backend.domain.index.embedding_instructions import base_name
from backend.infrastructure.embedders.pacing import NoPacing, Pacer, read_timeout

logger = logging.getLogger(__name__)

# Loading a model into memory on the first request can take many seconds on CPU, so reads get room;
# a refused or unroutable connection should fail fast instead.
DEFAULT_TIMEOUT = httpx.Timeout(120.0, connect=5.0)
DEFAULT_HEALTH_TIMEOUT = 2.0
PROBE_TEXT = "dimension probe"
ERROR_SNIPPET = 300
API_KEY_SETTING = "EMBEDDING_API_KEY"

# Vector sizes of embedding models in Ollama's library whose every tag has the same size (so a tag such as
# `mxbai-embed-large:335m` is covered). A model missing here needs EMBEDDING_DIMENSION, an existing index of
# it, or the server answering at start. A wrong entry cannot corrupt an index: answers are checked against it.
KNOWN_DIMENSIONS = {
    "mxbai-embed-large": 1024,  # English
    "nomic-embed-text": 768,  # English
    "all-minilm": 384,  # English
    "bge-large": 1024,  # English
    # multilingual (docs/languages.md): for a vault not (only) in English
    "bge-m3": 1024,  # ~100 languages, 8k tokens
    "snowflake-arctic-embed2": 1024,
    "paraphrase-multilingual": 768,  # paraphrase-multilingual-mpnet-base-v2, 50 languages
    "embeddinggemma": 768,  # 100+ languages, 300M parameters
}


def known_dimension(model: str) -> int | None:
    """The vector size of a well-known Ollama model (`name`, `name:tag`, `library/name`), else None."""
    return KNOWN_DIMENSIONS.get(base_name(model))


class _NotSent(Exception):
    """A batch skipped because another batch of the same call had already failed."""


class RemoteEmbedder(ABC):
    """`backend.application.ports.Embedder` over an embedding server's HTTP API. Safe to share between
    threads. A subclass says what to send (`_request`), where the vectors are (`_vectors`), what a missing
    model looks like and how to ask whether the server is up (`health`)."""

    server = "the embedding server"  # in messages: "<server> rejected the embedding request ..."

    def __init__(
        self,
        *,
        base_url: str,
        model: str,
        batch_size: int = 64,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = 3,
        backoff_seconds: float = 0.5,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        health_timeout: float = DEFAULT_HEALTH_TIMEOUT,
        dimension: int | None = None,
        concurrency: int = 2,
        api_key: str | None = None,
    ) -> None:
        """`dimension`: the size the model's vectors must have (None: `known_dimension(model)`, and when
        that is None too, whatever the first answer says). `concurrency`: batches of one call in flight at
        once. `api_key`: sent as `Authorization: Bearer` (never logged)."""
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        if backoff_seconds < 0:
            raise ValueError("backoff_seconds must not be negative")
        if dimension is not None and dimension < 1:
            raise ValueError("dimension must be at least 1")
        self._base_url = base_url.rstrip("/")
        self._model = model
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._backoff_seconds = backoff_seconds
        self._sleep = sleep
        self._health_timeout = health_timeout
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self._client = httpx.Client(
            base_url=self._base_url, timeout=timeout, transport=transport, headers=headers
        )
        self._expected = dimension if dimension is not None else known_dimension(model)
        self._dimension: int | None = self._expected
        self._dimension_lock = threading.Lock()
        self._concurrency = concurrency
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        # batches and requests in flight adapted to the server's answers, never past the two above
        waits = read_timeout(timeout.read if isinstance(timeout, httpx.Timeout) else timeout, 120.0)
        self._pacer = Pacer(max_in_flight=concurrency, max_batch=batch_size, timeout_seconds=waits)

    # -- what a server speaks ----------------------------------------------------------------------

    @abstractmethod
    def _request(self, texts: list[str]) -> tuple[str, dict[str, Any]]:
        """The path (relative to the base URL) and JSON body that embed `texts`."""

    @abstractmethod
    def _vectors(self, body: object) -> list[Any]:
        """The vectors of a successful answer, in the order of the request's texts (checked by the caller);
        raises `EmbedderUnavailableError` when the answer has none where they belong."""

    @abstractmethod
    def health(self) -> bool:
        """True when the server answers quickly and serves the configured model; never raises."""

    def _refusal(self, status: int, message: str) -> KnowledgeBridgeError | None:
        """The error for a 4xx answer a server means in its own way (a missing model), else None."""
        return None

    def _model_not_found(self, message: str) -> ModelNotFoundError:
        return ModelNotFoundError(
            f"{self.server} at {self._base_url} has no embedding model '{self._model}' ({message})"
        )

    # -- the port ----------------------------------------------------------------------------------

    @property
    def model_name(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._embed_batch([PROBE_TEXT])
        assert self._dimension is not None  # set by any successful batch
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """All vectors in the order of `texts`, or an error: never some of them. Batches go out up to
        `concurrency` at a time, each with its own retries; once one fails for good, batches not sent yet
        are not sent, and the call raises the failure of the first failed batch in input order."""
        size = self._pacer.batch_size()
        batches = [list(texts[start : start + size]) for start in range(0, len(texts), size)]
        if len(batches) <= 1 or self._concurrency == 1:
            return [vector for batch in batches for vector in self._embed_batch(batch)]
        failed = threading.Event()

        def send(batch: list[str]) -> list[list[float]]:
            if failed.is_set():
                raise _NotSent
            try:
                return self._embed_batch(batch)
            except BaseException:
                failed.set()
                raise

        pool = self._executor()
        futures: list[Future[list[list[float]]]] = [pool.submit(send, batch) for batch in batches]
        wait(futures)
        vectors: list[list[float]] = []
        for future in futures:
            problem = future.exception()
            if problem is not None and not isinstance(problem, _NotSent):
                raise problem
        for future in futures:
            vectors.extend(future.result())  # _NotSent only ever follows a real failure, raised above
        return vectors

    def embed_query(self, text: str) -> list[float]:
        return self._embed_batch([text], pacer=NoPacing())[0]  # a search's question is never held

    def close(self) -> None:
        with self._pool_lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        self._client.close()

    # -- internals -------------------------------------------------------------------------------

    def _executor(self) -> ThreadPoolExecutor:
        # Shared by every call: concurrent callers (indexing, the watcher) together still keep at most
        # `concurrency` requests in flight.
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._concurrency, thread_name_prefix="remote-embed")
            return self._pool

    def _embed_batch(self, texts: list[str], pacer: Pacer | NoPacing | None = None) -> list[list[float]]:
        pacer = pacer or self._pacer
        path, payload = self._request(texts)
        attempts = self._max_retries + 1
        last_problem = ""
        for attempt in range(attempts):
            started = time.monotonic()
            try:
                with pacer.slot():
                    started = time.monotonic()
                    response = self._client.post(path, json=payload)
            except httpx.TimeoutException as exc:
                pacer.record(seconds=time.monotonic() - started, timed_out=True)
                last_problem = f"request timed out ({type(exc).__name__})"
            except httpx.TransportError as exc:
                last_problem = f"cannot reach {self.server} ({type(exc).__name__}: {exc})"
            else:
                took, retry_after = time.monotonic() - started, response.headers.get("Retry-After")
                pacer.record(seconds=took, status=response.status_code, retry_after=retry_after)
                if response.status_code < 400:
                    return self._parse(response, expected=len(texts))
                message = error_message(response)
                if response.status_code in (401, 403):
                    raise EmbedderUnavailableError(
                        f"{self.server} at {self._base_url} refused the API key "
                        f"(HTTP {response.status_code}): {message}",
                        suggestion=f"Set {API_KEY_SETTING} to a key the server accepts.",
                    )
                refusal = self._refusal(response.status_code, message)
                if refusal is not None:
                    raise refusal
                if response.status_code < 500 and response.status_code != 429:  # 429: busy, asked to wait
                    raise EmbedderUnavailableError(
                        f"{self.server} rejected the embedding request for model '{self._model}' "
                        f"(HTTP {response.status_code}): {message}"
                    )
                last_problem = f"HTTP {response.status_code}: {message}"
            if attempt + 1 < attempts:
                delay = self._backoff_seconds * (2**attempt)
                logger.warning(
                    "%s embed attempt %d/%d failed (%s); retrying in %.2fs",
                    self.server,
                    attempt + 1,
                    attempts,
                    last_problem,
                    delay,
                )
                self._sleep(delay)
                if len(texts) > pacer.batch_size():  # it timed out: the rest goes in smaller requests
                    size = pacer.batch_size()
                    pieces = [texts[start : start + size] for start in range(0, len(texts), size)]
                    return [vector for piece in pieces for vector in self._embed_batch(piece)]
        raise EmbedderUnavailableError(
            f"{self.server} at {self._base_url} gave no embeddings after {attempts} attempt(s): "
            f"{last_problem}"
        )

    def _parse(self, response: httpx.Response, *, expected: int) -> list[list[float]]:
        try:
            body = response.json()
        except ValueError as exc:
            raise EmbedderUnavailableError(
                f"{self.server} returned a response that is not JSON (HTTP {response.status_code}): "
                f"{response.text[:ERROR_SNIPPET]!r}"
            ) from exc
        raw_vectors = self._vectors(body)
        if len(raw_vectors) != expected:
            raise EmbedderUnavailableError(
                f"{self.server} returned {len(raw_vectors)} embeddings for {expected} inputs "
                f"(model '{self._model}')"
            )
        width: int | None = None
        for position, vector in enumerate(raw_vectors):
            if not _is_number_list(vector):
                raise EmbedderUnavailableError(
                    f"{self.server} returned embedding #{position} that is not a non-empty list of numbers"
                )
            if width is None:
                width = len(vector)
            elif len(vector) != width:
                raise EmbedderUnavailableError(
                    f"{self.server} returned embeddings of different dimensions in one batch "
                    f"({width} and {len(vector)})"
                )
        assert width is not None  # expected >= 1 whenever a request is sent
        self._remember_dimension(width)
        matrix = np.asarray(raw_vectors, dtype=np.float64)
        if not np.isfinite(matrix).all():
            raise EmbedderUnavailableError(f"{self.server} returned embeddings containing NaN or infinity")
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        # A zero vector has no direction; leave it as is rather than divide by zero.
        normalised = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        vectors: list[list[float]] = normalised.tolist()
        return vectors

    def _remember_dimension(self, width: int) -> None:
        if self._expected is not None and width != self._expected:
            raise EmbeddingModelMismatchError(
                f"{self.server} model '{self._model}' returns {width}-dimensional embeddings, but this "
                f"service expects {self._expected} (the index's dimension, EMBEDDING_DIMENSION or the "
                "model's known size); its vectors are not used",
                suggestion=(
                    f"If the model is right, set EMBEDDING_DIMENSION={width} and rebuild the index "
                    "(POST /index/rebuild); otherwise serve the model the index was built with."
                ),
            )
        with self._dimension_lock:
            if self._dimension is None:
                self._dimension = width
            elif self._dimension != width:
                raise EmbedderUnavailableError(
                    f"{self.server} model '{self._model}' returned {width}-dimensional embeddings, "
                    f"but earlier ones had {self._dimension}; was the model replaced?"
                )


def error_message(response: httpx.Response) -> str:
    """Ollama reports failures as `{"error": "..."}`, OpenAI-compatible servers as `{"error": {"message":
    "..."}}`; fall back to the raw body for anything else."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:ERROR_SNIPPET] or response.reason_phrase
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        error = error["message"]
    if isinstance(error, str):
        return error[:ERROR_SNIPPET]
    return str(body)[:ERROR_SNIPPET]


def mentions_missing_model(message: str) -> bool:
    # e.g. `model "mxbai-embed-large" not found, try pulling it first` (wording varies across servers)
    lowered = message.lower()
    return "model" in lowered and ("not found" in lowered or "does not exist" in lowered)


def _is_number_list(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) > 0
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value)
    )
