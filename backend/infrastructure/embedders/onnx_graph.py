"""Build an ONNX sentence-embedding graph for a BERT encoder from plain numpy weights.

Pure: no file or network I/O. The graph takes `input_ids` and `attention_mask` (int64, [batch, seq]) and
returns `sentence_embedding` (float32, [batch, hidden]): mean pooling over the attention mask followed by L2
normalisation, which is what sentence-transformers' Transformer -> Pooling(mean) -> Normalize stack computes.
`token_type_ids` is not an input: sentence embedding only ever uses segment 0, so that row is folded into the
position table.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# the names a graph is run by live apart, so that running one never imports onnx (onnx_graph_names)
from backend.infrastructure.embedders.onnx_graph_names import (
    ATTENTION_MASK,
    GRAPH_VERSION,
    INPUT_IDS,
    INPUTS_EMBEDS,
    OUTPUT,
)

OPSET = 17  # first opset with LayerNormalization

# Big enough that exp() underflows to exactly 0 for masked keys, small enough to stay finite after adding
# a score (float32 min would overflow to -inf and risk NaN in a fully masked row).
_MASK_BIAS = -1.0e9
# Same epsilons as torch's mean pooling clamp and F.normalize in sentence-transformers.
_POOL_EPS = 1.0e-9
_NORM_EPS = 1.0e-12


@dataclass(frozen=True, slots=True)
class BertConfig:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    layer_norm_eps: float

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> BertConfig:
        """From a Hugging Face `config.json`; only absolute positions and erf GELU are supported."""
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(f"unsupported position_embedding_type {raw['position_embedding_type']!r}")
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"unsupported hidden_act {raw['hidden_act']!r}")
        config = cls(
            hidden_size=int(raw["hidden_size"]),
            num_hidden_layers=int(raw["num_hidden_layers"]),
            num_attention_heads=int(raw["num_attention_heads"]),
            intermediate_size=int(raw["intermediate_size"]),
            layer_norm_eps=float(raw.get("layer_norm_eps", 1e-12)),
        )
        if config.hidden_size % config.num_attention_heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads")
        return config


class _GraphBuilder:
    """Accumulates nodes and initializers; every helper returns the name of its output."""

    def __init__(self, weights: Mapping[str, np.ndarray], prefix: str) -> None:
        self._weights = weights
        self._prefix = prefix
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []
        self._counter = 0

    def weight(self, key: str) -> np.ndarray:
        full = self._prefix + key
        if full not in self._weights:
            raise KeyError(f"missing weight {full!r}")
        return np.asarray(self._weights[full], dtype=np.float32)

    def const(self, name: str, value: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def op(self, op_type: str, inputs: list[str], **attrs: Any) -> str:
        self._counter += 1
        out = f"{op_type.lower()}_{self._counter}"
        self.nodes.append(
            helper.make_node(op_type, inputs, [out], name=f"{op_type}_{self._counter}", **attrs)
        )
        return out

    def linear(self, x: str, key: str, *, scale: float = 1.0) -> str:
        # torch Linear stores [out, in]; MatMul wants [in, out]. Transposing once here keeps the graph lean.
        w = self.const(f"{key}.weight_t", (self.weight(f"{key}.weight") * scale).T)
        b = self.const(f"{key}.bias", self.weight(f"{key}.bias") * scale)
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def layer_norm(self, x: str, key: str, eps: float) -> str:
        scale = self.const(f"{key}.weight", self.weight(f"{key}.weight"))
        bias = self.const(f"{key}.bias", self.weight(f"{key}.bias"))
        return self.op("LayerNormalization", [x, scale, bias], axis=-1, epsilon=eps)


def _detect_prefix(weights: Mapping[str, np.ndarray], external_words: bool) -> str:
    # Checkpoints saved from BertModel have bare keys; ones saved from a task head prefix them with "bert.".
    table = "embeddings.position_embeddings.weight" if external_words else "embeddings.word_embeddings.weight"
    for prefix in ("", "bert."):
        if f"{prefix}{table}" in weights:
            return prefix
    raise KeyError("no BERT embeddings found in weights")


def build_sentence_embedding_graph(
    weights: Mapping[str, np.ndarray], config: BertConfig, *, external_words: bool = False
) -> onnx.ModelProto:
    """A checked ONNX model computing L2-normalised mean-pooled BERT embeddings.

    `external_words`: the graph takes `inputs_embeds` (each token's word embedding, [batch, sequence,
    hidden]) instead of `input_ids`, for a vocabulary too large to keep in float32 in every session."""
    g = _GraphBuilder(weights, _detect_prefix(weights, external_words))
    hidden = config.hidden_size
    heads = config.num_attention_heads
    head_dim = hidden // heads
    eps = config.layer_norm_eps

    # --- embeddings -------------------------------------------------------------------------------------
    position_plus_type = (
        g.weight("embeddings.position_embeddings.weight")
        + g.weight("embeddings.token_type_embeddings.weight")[0]
    )
    position_table = g.const("embeddings.position_plus_type", position_plus_type)
    # Position ids built elementwise from input_ids (cumsum of ones) rather than by slicing the table to the
    # sequence length: that keeps every activation's shape provably [batch, sequence, hidden], which
    # onnxruntime needs before it fuses Add+LayerNormalization into SkipLayerNormalization.
    zero_i = g.const("const.zero_i", np.array(0, dtype=np.int64))
    one_i = g.const("const.one_i", np.array(1, dtype=np.int64))
    ones = g.op("Add", [g.op("Mul", [ATTENTION_MASK if external_words else INPUT_IDS, zero_i]), one_i])
    position_ids = g.op("Sub", [g.op("CumSum", [ones, one_i]), one_i])
    positions = g.op("Gather", [position_table, position_ids], axis=0)
    if external_words:
        words = INPUTS_EMBEDS
    else:
        table = g.const("embeddings.word_embeddings.weight", g.weight("embeddings.word_embeddings.weight"))
        words = g.op("Gather", [table, INPUT_IDS], axis=0)
    x = g.op("Add", [words, positions])
    x = g.layer_norm(x, "embeddings.LayerNorm", eps)

    # --- additive attention bias: 0 for real tokens, large negative for padding, shape [batch, 1, 1, seq] --
    # Unsqueeze, Unsqueeze, Cast, Sub, Mul: the order of a Hugging Face export, which onnxruntime's
    # transformer optimiser recognises when it fuses each layer's attention into one Attention node.
    mask_f = g.op("Cast", [ATTENTION_MASK], to=TensorProto.FLOAT)
    one_f = g.const("const.one_f", np.array(1.0, dtype=np.float32))
    bias_scale = g.const("const.mask_bias", np.array(_MASK_BIAS, dtype=np.float32))
    axes_1 = g.const("const.axes_1", np.array([1], dtype=np.int64))
    axes_2 = g.const("const.axes_2", np.array([2], dtype=np.int64))
    mask_4d = g.op("Unsqueeze", [g.op("Unsqueeze", [ATTENTION_MASK, axes_1]), axes_2])
    attn_bias = g.op("Mul", [g.op("Sub", [one_f, g.op("Cast", [mask_4d], to=TensorProto.FLOAT)]), bias_scale])

    split_heads = g.const("const.split_heads", np.array([0, 0, heads, head_dim], dtype=np.int64))
    merge_heads = g.const("const.merge_heads", np.array([0, 0, hidden], dtype=np.int64))
    sqrt2 = g.const("const.sqrt2", np.array(math.sqrt(2.0), dtype=np.float32))
    half = g.const("const.half", np.array(0.5, dtype=np.float32))
    # Scores are divided by sqrt(head_dim) after the product (not folded into the query weights) because
    # that is the pattern the attention fusion matches; the fused kernel applies the scale itself.
    score_scale = g.const("const.score_scale", np.array(math.sqrt(head_dim), dtype=np.float32))

    for i in range(config.num_hidden_layers):
        layer = f"encoder.layer.{i}"
        q = g.op("Reshape", [g.linear(x, f"{layer}.attention.self.query"), split_heads])
        k = g.op("Reshape", [g.linear(x, f"{layer}.attention.self.key"), split_heads])
        v = g.op("Reshape", [g.linear(x, f"{layer}.attention.self.value"), split_heads])
        q = g.op("Transpose", [q], perm=[0, 2, 1, 3])  # [batch, heads, seq, head_dim]
        k = g.op("Transpose", [k], perm=[0, 2, 3, 1])  # [batch, heads, head_dim, seq]
        v = g.op("Transpose", [v], perm=[0, 2, 1, 3])
        scores = g.op("Add", [g.op("Div", [g.op("MatMul", [q, k]), score_scale]), attn_bias])
        probs = g.op("Softmax", [scores], axis=-1)
        context = g.op("Transpose", [g.op("MatMul", [probs, v])], perm=[0, 2, 1, 3])
        context = g.op("Reshape", [context, merge_heads])
        attn_out = g.linear(context, f"{layer}.attention.output.dense")
        x = g.layer_norm(g.op("Add", [attn_out, x]), f"{layer}.attention.output.LayerNorm", eps)

        h = g.linear(x, f"{layer}.intermediate.dense")
        # Exact (erf) GELU as in BERT, not the tanh approximation: h * (1 + erf(h / sqrt(2))) * 0.5, in the
        # node order onnxruntime recognises and fuses (with the bias Add) into one BiasGelu kernel.
        erf_plus_one = g.op("Add", [g.op("Erf", [g.op("Div", [h, sqrt2])]), one_f])
        gelu = g.op("Mul", [g.op("Mul", [h, erf_plus_one]), half])
        ffn_out = g.linear(gelu, f"{layer}.output.dense")
        x = g.layer_norm(g.op("Add", [ffn_out, x]), f"{layer}.output.LayerNorm", eps)

    # --- mean pooling over real tokens, then L2 normalisation --------------------------------------------
    mask_3d = g.op("Unsqueeze", [mask_f, axes_2])  # [batch, seq, 1]
    summed = g.op("ReduceSum", [g.op("Mul", [x, mask_3d]), axes_1], keepdims=0)
    pool_eps = g.const("const.pool_eps", np.array(_POOL_EPS, dtype=np.float32))
    counts = g.op("Max", [g.op("ReduceSum", [mask_3d, axes_1], keepdims=0), pool_eps])
    mean = g.op("Div", [summed, counts])
    norm_eps = g.const("const.norm_eps", np.array(_NORM_EPS, dtype=np.float32))
    # ReduceL2 still takes axes as an attribute at opset 17 (ReduceSum moved them to an input at 13).
    norm = g.op("Max", [g.op("ReduceL2", [mean], axes=[1], keepdims=1), norm_eps])
    g.nodes.append(helper.make_node("Div", [mean, norm], [OUTPUT], name="normalize"))

    graph = helper.make_graph(
        g.nodes,
        "sentence_embedding",
        inputs=[
            helper.make_tensor_value_info(INPUTS_EMBEDS, TensorProto.FLOAT, ["batch", "sequence", hidden])
            if external_words
            else helper.make_tensor_value_info(INPUT_IDS, TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info(ATTENTION_MASK, TensorProto.INT64, ["batch", "sequence"]),
        ],
        outputs=[helper.make_tensor_value_info(OUTPUT, TensorProto.FLOAT, ["batch", hidden])],
        initializer=g.initializers,
    )
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name="knowledge-bridge",
        producer_version=str(GRAPH_VERSION),
    )
    # Keep the IR version at what the opset needs so older onnxruntime builds still load the file.
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model
