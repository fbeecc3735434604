"""Building a variant's ONNX graph file from the weights, once per cache (a cold start or `prepare-model`).

Each variant's `Recipe` (onnx_model_files) says which steps it takes. `fp32` is the graph as `onnx_graph`
emits it; `-opt` runs onnxruntime's transformer optimiser over it offline (each layer's attention becomes one
Attention kernel, with BiasGelu, EmbedLayerNormalization and, unless the recipe says otherwise,
SkipLayerNormalization); `int8` is onnxruntime's dynamic quantisation (weights int8 per channel, activations
quantised per call), but for what the recipe keeps in float32: each layer's feed-forward output projection
(`-ffn2fp32`) or only that projection's outlier input channels (`-outliers`, see `onnx_outlier_channels`).
Dynamic int8 quantises each call's activations with one scale for the whole batch, so an int8 vector depends
slightly on the texts embedded with it (cosine to the same text alone > 0.99); fp32 vectors do not.

Every file is written beside its target and renamed over it, so a reader never sees half a graph. The
safetensors, onnx and optimiser imports happen inside the builders: a warm start only loads a built file.
"""

from __future__ import annotations

import logging
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from backend.infrastructure.embedders import onnx_graph
from backend.infrastructure.embedders.onnx_model_files import RECIPES
from backend.infrastructure.embedders.onnx_outlier_channels import ffn_output_projections, split_ffn_outputs
from backend.infrastructure.embedders.onnx_sources import ModelSource

logger = logging.getLogger(__name__)


def build_variant(source: ModelSource, variant: str, target: Path) -> None:
    """Build `variant`'s graph from `source`'s weights into the file `target`: one log line, with
    its duration. The quantiser and the optimiser log dozens of INFO and WARNING lines about tensors and
    shape inference that ask nothing of a user; they are left out of the log while this thread builds."""
    started = time.perf_counter()
    with _third_party_quiet():
        _build(source, variant, target)
    logger.info(
        "built the %s ONNX graph of %s in %.1f s: %s",
        variant,
        source.name,
        time.perf_counter() - started,
        target,
    )


@contextmanager
def _third_party_quiet() -> Iterator[None]:
    """Drop records of other libraries logged from this thread (onnxruntime's tools log to the root logger
    and loggers of their own), at every handler of the root logger, until the block ends."""
    building = threading.get_ident()

    def ours(record: logging.LogRecord) -> bool:
        return record.thread != building or record.name.startswith("backend")

    handlers = list(logging.getLogger().handlers)
    for handler in handlers:
        handler.addFilter(ours)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(ours)


def _build(source: ModelSource, variant: str, target: Path) -> None:
    recipe = RECIPES[variant]
    if not recipe.optimize and not recipe.int8:
        build_fp32_model(source, target)
        return
    # the steps before the last one are scratch files next to the target (same file system), never kept
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".build-") as scratch:
        current = Path(scratch) / "fp32.onnx"
        build_fp32_model(source, current)
        if recipe.optimize:
            optimized = Path(scratch) / "opt.onnx"
            build_optimized_model(
                source, current, optimized, fuse_skip_layer_norm=recipe.fuse_skip_layer_norm
            )
            current = optimized
        if not recipe.int8:
            os.replace(current, target)
            return
        kept_fp32: list[str] = []
        if recipe.ffn_output == "fp32":
            kept_fp32 = _ffn_output_projections(current)
        elif recipe.ffn_output == "outliers-fp32":
            split = Path(scratch) / "split.onnx"
            kept_fp32 = split_ffn_outputs(current, source, split)
            current = split
        build_int8_model(current, target, keep_fp32=kept_fp32)


def _ffn_output_projections(graph_path: Path) -> list[str]:
    import onnx

    graph = onnx.load(str(graph_path), load_external_data=False).graph
    return [node.name for node in ffn_output_projections(graph)]


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


def build_fp32_model(source: ModelSource, target: Path) -> None:
    model = onnx_graph.build_sentence_embedding_graph(
        source.weights(), source.bert_config(), external_words=source.external_words
    )
    data = model.SerializeToString()
    _atomic_write(target, lambda tmp: tmp.write_bytes(data))


def build_int8_model(fp32_path: Path, target: Path, *, keep_fp32: list[str] | None = None) -> None:
    """Dynamic int8 quantisation of every MatMul but the nodes named in `keep_fp32`."""
    from onnx import TensorProto
    from onnxruntime.quantization import QuantType, quantize_dynamic  # only needed on a cold start

    # Per-channel weight scales: per-tensor int8 dropped cosine-to-fp32 to ~0.86 on some texts; per-channel
    # keeps it at ~0.97 or better for about the same speed. The default tensor type lets the quantiser type
    # the outputs of the optimiser's contrib ops (Attention, SkipLayerNormalization), which ONNX's shape
    # inference does not know; every activation of this graph is float32.
    # What stays float32 and why: the feed-forward output projection's input (the GELU output) has the
    # widest range, so one int8 scale per call loses most there (mean cosine to fp32 on SciFact chunks:
    # 0.9946 all int8, 0.9974 with that projection in float32); `onnx_outlier_channels` keeps only its
    # outlier channels in float32 instead.
    _atomic_write(
        target,
        lambda tmp: quantize_dynamic(
            fp32_path,
            tmp,
            weight_type=QuantType.QInt8,
            per_channel=True,
            extra_options={"DefaultTensorType": TensorProto.FLOAT},
            nodes_to_exclude=list(keep_fp32 or ()),
        ),
    )


def build_optimized_model(
    source: ModelSource, fp32_path: Path, target: Path, *, fuse_skip_layer_norm: bool = True
) -> None:
    """onnxruntime's transformer optimiser (model type bert) over our graph: fused attention and norms."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    config = source.bert_config()
    options = FusionOptions("bert")
    # Its symbolic shape inference needs sympy, which we do not ship; the fusions our graph needs do not.
    options.enable_shape_inference = False
    options.enable_skip_layer_norm = fuse_skip_layer_norm
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
