"""What running a built graph needs to know of it: its input and output names, and the version of the code
that built it (part of every graph file's name).

Apart from `onnx_graph`, which builds graphs and so imports `onnx`: a process that only loads a prepared
graph (the Docker image, which leaves `onnx` out) never imports it.
"""

from __future__ import annotations

# Bump whenever the emitted graph changes, so cached .onnx files built by older code are rebuilt.
GRAPH_VERSION = 3
INPUT_IDS = "input_ids"
INPUTS_EMBEDS = "inputs_embeds"  # the word embeddings looked up outside the graph (a large vocabulary)
ATTENTION_MASK = "attention_mask"
OUTPUT = "sentence_embedding"
