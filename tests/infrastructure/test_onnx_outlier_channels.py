"""The `int8-opt-outliers` variant: int8 feed-forward output projections, outlier channels in float32."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from tokenizers import Tokenizer

from backend.infrastructure.embedders.onnx_minilm import DEFAULT_VARIANT, OnnxMiniLMEmbedder
from backend.infrastructure.embedders.onnx_outlier_channels import OUTLIER_CHANNELS, split_ffn_outputs
from backend.infrastructure.embedders.onnx_sources import MiniLMSource
from backend.infrastructure.embedders.onnx_variant_build import build_fp32_model, build_optimized_model

pytestmark = pytest.mark.slow

EXAMPLE_VAULT = Path(__file__).resolve().parents[2] / "docs" / "example-vault"


def _notes() -> list[str]:
    """The example vault's notes as the indexer would cut them (up to ~200 words), real Markdown."""
    return [
        " ".join(p.read_text(encoding="utf-8").split()[:200]) for p in sorted(EXAMPLE_VAULT.rglob("*.md"))
    ]


def _run(graph: Path, tokenizer: Tokenizer, texts: list[str]) -> np.ndarray:
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    rows = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        rows.append(session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0])
    return np.array(rows)


def test_splitting_off_the_outlier_channels_computes_the_same_vectors_in_float32(tmp_path: Path) -> None:
    # the split is exact algebra (masked product + product over the widest channels); only quantising the
    # masked product may change a vector, so before quantisation nothing may
    source = MiniLMSource()
    fp32, optimized, split = tmp_path / "fp32.onnx", tmp_path / "opt.onnx", tmp_path / "split.onnx"
    build_fp32_model(source, fp32)
    build_optimized_model(source, fp32, optimized, fuse_skip_layer_norm=False)
    kept = split_ffn_outputs(optimized, source, split)
    assert len(kept) == 6  # one per layer of all-MiniLM-L6-v2
    tokenizer = source.tokenizer()
    texts = _notes()[:12]
    np.testing.assert_allclose(_run(split, tokenizer, texts), _run(optimized, tokenizer, texts), atol=2e-5)
    widths = [
        len(onnx.numpy_helper.to_array(init))
        for init in onnx.load(str(split)).graph.initializer
        if init.name.endswith("_outliers_channels")
    ]
    assert widths == [OUTLIER_CHANNELS] * 6


def test_keeping_the_outlier_channels_in_float32_brings_int8_vectors_closer_to_fp32(tmp_path: Path) -> None:
    # the reason the variant exists: all-int8 feed-forward outputs lose precision to a few wide channels
    texts = _notes()
    vectors = {}
    # the default variant as the suite prepared it for the services (conftest.py, ONNX_MODEL_DIR: the same
    # build), not built a second time; the other two are built here
    prepared = {DEFAULT_VARIANT: Path(os.environ["ONNX_MODEL_DIR"])} if "ONNX_MODEL_DIR" in os.environ else {}
    assert DEFAULT_VARIANT == "int8-opt-outliers"
    for variant in ("fp32", "int8-opt", "int8-opt-outliers"):
        embedder = OnnxMiniLMEmbedder(cache_dir=tmp_path, variant=variant, prebuilt_dir=prepared.get(variant))
        try:
            vectors[variant] = np.array(embedder.embed_documents(texts))
        finally:
            embedder.close()
    cosine = {v: (vectors[v] * vectors["fp32"]).sum(axis=1) for v in ("int8-opt", "int8-opt-outliers")}
    assert cosine["int8-opt-outliers"].min() > 0.98
    assert cosine["int8-opt-outliers"].mean() > cosine["int8-opt"].mean()
    assert (1 - cosine["int8-opt-outliers"]).mean() < 0.8 * (1 - cosine["int8-opt"]).mean()
