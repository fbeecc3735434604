"""Keep the few outlier channels of each feed-forward output projection in float32, the rest in int8.

Dynamic int8 quantises each call's activations with one scale for the whole tensor. The input of each layer's
second feed-forward projection (the GELU output) has a handful of channels that reach 8-24 while the median
channel peaks at about 1.5-1.9, so that one scale is set by them and the other ~1,530 channels lose most of
their precision. Keeping the whole projection in float32 (`int8-opt-ffn2fp32`) fixed the quality but left 40%
of a query's single-thread time in that float32 MatMul. Here only the widest channels stay float32: the
projection becomes `MatMul(x * mask, W) + MatMul(x[:, widest], W[widest])`, where the first product is
quantised like every other MatMul and its input's range no longer includes the outliers.

Which channels are widest is a property of the weights: measured over the example vault, SciFact, LoCoMo, the
Zettelkasten and the Obsidian help vault, each layer's widest one or two channels were the same everywhere.
They are found by running the float32 graph over `CALIBRATION_TEXTS` once, when the variant is built.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # onnx is imported only while a variant is built
    from onnx import GraphProto, NodeProto

    from backend.infrastructure.embedders.onnx_sources import ModelSource

# How many input channels of each feed-forward output projection stay float32. One already recovered most
# of the loss (mean cosine to fp32 on SciFact chunks: 0.9926 all int8, 0.9950 with 1, 0.9953 with 4, the
# same with 16); more channels cost a slightly wider float32 MatMul and protect against the calibration
# texts missing a channel that other text lights up.
OUTLIER_CHANNELS = 8

# Varied on purpose (notes, lists, links, code, numbers, dialogue, science, another language): the outlier
# channels show on nearly every token, but a channel that only some kinds of text light up is caught too.
CALIBRATION_TEXTS = (
    "Decision: we move the orders database from MySQL 5.7 to PostgreSQL 16 in two steps. First the read "
    "replicas, then the primary during the March maintenance window. Rollback plan: keep binlog replication "
    "running back to the old primary for a week.",
    "I owe Marta 1,250 rupees for the train tickets to Pune and half of the hotel. Paid back 500 on "
    "12 May; the rest after payday.",
    "## Meeting notes 2024-03-14\n- Attendees: Ana, Jo, Priya\n- [[Q2 roadmap]] is late by two weeks\n"
    "- Action: Jo to draft the hiring plan #todo\n- Next sync on Thursday",
    "---\ntags: [journal, running]\naliases: [Morning run]\n---\nRan 8 km along the river before work. Knee "
    "felt fine. Need new shoes before the half marathon in October. See [[Training plan#Week 6]].",
    "Background: Vitamin D deficiency is associated with an increased risk of respiratory infections. "
    "Methods: a randomised controlled trial of 2,814 adults over 24 months. Results: supplementation "
    "reduced the incidence of acute infections (odds ratio 0.88, 95% CI 0.81-0.96).",
    "```python\ndef merge(a: list[int], b: list[int]) -> list[int]:\n    return sorted(a + b)\n```\n"
    "The merge step is O(n log n) here; a linear merge would do since both inputs are sorted.",
    "Caroline: Hey Mel, how was the pottery class yesterday?\nMelanie: Really fun! I made a bowl for the "
    "kids. We are going camping at the lake next weekend.\nCaroline: That sounds lovely, send pictures!",
    "Recipe: roast the tomatoes with garlic and olive oil at 200 C for 25 minutes, blend with basil, season "
    "with salt and a pinch of sugar. Serves four.",
    "Zettel 202105121030. Spaced repetition works because retrieval strengthens memory more than re-reading. "
    "Link: [[Testing effect]], [[Desirable difficulties]]. Source: Make It Stick, chapter 2.",
    "| Month | Rent | Groceries | Savings |\n|---|---|---|---|\n| Jan | 1200 | 340 | 500 |\n"
    "| Feb | 1200 | 310 | 650 |",
    "Die Besprechung wurde auf Freitag verschoben. Bitte bringt die Zahlen zum dritten Quartal mit.",
    "which flat did we pick in the end, and why?",
    "Embeds like ![[diagram.png]] and block references ^quote-1 are part of Obsidian's syntax; callouts "
    "start with > [!note] and can fold.",
    "The mitochondrial protein import machinery TOM/TIM23 mediates translocation of presequence-containing "
    "precursors across both membranes in a membrane-potential dependent manner.",
    "Trip to Lisbon: flights TP1351 on 3 June 08:45, Airbnb in Alfama, tram 28 to the castle, pasteis de "
    "nata at Manteigaria. Budget 900 EUR.",
    "TODO: renew passport (expires 2025-01-09), call the dentist, back up the laptop to the NAS.",
)


def ffn_output_projections(graph: GraphProto) -> list[NodeProto]:
    """Each layer's second feed-forward MatMul: the one that reads the GELU output."""
    gelu_outputs = {
        out for node in graph.node if node.op_type in ("BiasGelu", "Gelu", "FastGelu") for out in node.output
    }
    found = [node for node in graph.node if node.op_type == "MatMul" and node.input[0] in gelu_outputs]
    if not found:
        raise RuntimeError("no feed-forward output projection found in the graph")
    return found


def widest_channels(
    graph_path: Path, source: ModelSource, matmul_inputs: list[str], k: int
) -> list[list[int]]:
    """For each tensor named in `matmul_inputs`, the `k` channels (last axis) with the largest absolute value
    over the calibration texts, run one at a time (tokenised and fed as the embedder does, from `source`)
    through the float32 graph at `graph_path`."""
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper

    model = onnx.load(str(graph_path))
    for name in matmul_inputs:
        model.graph.output.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, None))
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    tokenizer = source.tokenizer()
    peaks: list[np.ndarray | None] = [None] * len(matmul_inputs)
    for text in CALIBRATION_TEXTS:
        ids = np.array([tokenizer.encode(source.text(text, query=False)).ids], dtype=np.int64)
        outputs = session.run(matmul_inputs, source.feeds(ids, np.ones_like(ids)))
        for i, output in enumerate(outputs):
            peak = np.abs(output).reshape(-1, output.shape[-1]).max(axis=0)
            peaks[i] = peak if peaks[i] is None else np.maximum(peaks[i], peak)
    return [sorted(int(c) for c in np.argsort(-peak)[:k]) for peak in peaks if peak is not None]


def split_ffn_outputs(
    graph_path: Path, source: ModelSource, target: Path, *, k: int = OUTLIER_CHANNELS
) -> list[str]:
    """Write to `target` the graph at `graph_path` with each feed-forward output projection split into the
    masked product (quantised later) and the product over its `k` widest input channels; return the names of
    the latter MatMuls, which the quantiser must leave in float32."""
    import onnx
    from onnx import helper, numpy_helper

    model = onnx.load(str(graph_path))
    graph = model.graph
    projections = ffn_output_projections(graph)
    channels = widest_channels(graph_path, source, [node.input[0] for node in projections], k)
    weights = {init.name: init for init in graph.initializer}
    kept_fp32: list[str] = []
    for projection, widest in zip(projections, channels, strict=True):
        w = numpy_helper.to_array(weights[projection.input[1]])
        mask = np.ones(w.shape[0], dtype=np.float32)
        mask[widest] = 0.0
        prefix = f"{projection.name}_outliers"
        graph.initializer.extend(
            [
                numpy_helper.from_array(np.array(widest, dtype=np.int64), f"{prefix}_channels"),
                numpy_helper.from_array(mask, f"{prefix}_mask"),
                numpy_helper.from_array(w[widest], f"{prefix}_weight"),
            ]
        )
        x, y = projection.input[0], projection.output[0]
        projection.input[0], projection.output[0] = f"{prefix}_rest_in", f"{prefix}_rest_out"
        before = [
            helper.make_node("Mul", [x, f"{prefix}_mask"], [f"{prefix}_rest_in"], name=f"{prefix}_mask"),
            helper.make_node(
                "Gather", [x, f"{prefix}_channels"], [f"{prefix}_in"], axis=-1, name=f"{prefix}_gather"
            ),
            helper.make_node(
                "MatMul", [f"{prefix}_in", f"{prefix}_weight"], [f"{prefix}_out"], name=f"{prefix}_matmul"
            ),
        ]
        after = helper.make_node("Add", [f"{prefix}_rest_out", f"{prefix}_out"], [y], name=f"{prefix}_add")
        position = list(graph.node).index(projection)
        for offset, node in enumerate(before):
            graph.node.insert(position + offset, node)
        graph.node.insert(position + len(before) + 1, after)
        kept_fp32.append(f"{prefix}_matmul")
    onnx.save(model, str(target))
    return kept_fp32
