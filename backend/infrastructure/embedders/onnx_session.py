"""How the embedder's onnxruntime sessions are opened: their thread pools and how idle threads wait.

Queries run in a session of their own over the same graph file (so query and document vectors come from
the same variant): one text of ~20 tokens runs ~60 operators of a few tens of microseconds each, so how the
pool's second thread waits between them decides much of the latency. Its pool is set apart (`query_threads`,
`query_spinning`), and a search made while the indexer embeds does not queue inside the indexer's pool. It
costs one more copy of the weights (~40 MB), opened by the first query.

The document session has no pool: each run is one thread, and the embedder runs several side by side
(`onnx_minilm`), which did more work a second than one run spread over a pool.

Spinning: onnxruntime's idle pool threads spin-wait for work, by default for ~40 ms after every run, which
burnt a core after each search and each document batch, taken from the rest of the request, the next query
(a query right after a document batch ran 1.15-1.7x slower), the indexer's other stages and other programs.
Both sessions stop spinning when a run ends (the next run wakes them: once per run, not per operator). With
`query_spinning` (the default) the query session's idle thread spins for the next operator's work for at
most `QUERY_SPIN_MICROSECONDS`, then sleeps; without it, it sleeps at once and pays a wake-up per operator.
On this 2-core machine spinning made a query's embedding 1.43x faster when idle (p50 3.36 against 4.82 ms,
`make bench-embed`) and ~1.2x faster in the service at load average 2-7, where the second thread without it
bought nothing over one thread; but at load 8-9.5 (other programs oversubscribing the cores 4x) it left the
p50 as it was and made the embed p95 2.3-2.7x worse, hence the setting.
"""

from __future__ import annotations

from pathlib import Path

import onnxruntime as ort

from backend.infrastructure.embedders import onnx_graph_names

# onnxruntime's own warnings (initializers it drops, fusions it skips) say nothing a user can act on, and
# came out as unformatted lines on stderr at every first start; its errors still do.
ort.set_default_logger_severity(3)

# How long the query session's idle thread spins for the next operator before it sleeps. Measured on 2
# cores: 10 us lost most of the gain over sleeping; 50-100 us gained no more than 30 us with the cores to
# itself, and lost 10-20% more with them oversubscribed (the spin burns a core the awaited thread could use).
QUERY_SPIN_MICROSECONDS = 30


def open_session(
    path: Path,
    *,
    threads: int | None,
    dimension: int,
    query: bool = False,
    query_spinning: bool = True,
    fuse_skip_layer_norm: bool = True,
) -> ort.InferenceSession:
    """A CPU session on the graph file `path` (the document session, or with `query` the query session);
    ValueError when the graph's inputs or output size are not the embedder's. `fuse_skip_layer_norm=False`
    keeps onnxruntime from fusing the residual adds and LayerNorms back into SkipLayerNormalization (see
    `onnx_model_files.Recipe`)."""
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.inter_op_num_threads = 1
    if threads is not None:
        options.intra_op_num_threads = threads
    # idle threads spin between the operators of a run, never after it (see the module docstring)
    options.add_session_config_entry("session.force_spinning_stop", "1")
    if query and query_spinning:
        options.add_session_config_entry("session.intra_op.spin_duration_us", str(QUERY_SPIN_MICROSECONDS))
    elif query:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(
        str(path),
        sess_options=options,
        providers=["CPUExecutionProvider"],
        disabled_optimizers=[] if fuse_skip_layer_norm else ["SkipLayerNormFusion"],
    )
    names = {i.name for i in session.get_inputs()}
    out = session.get_outputs()[0]
    fed = (
        {onnx_graph_names.INPUT_IDS, onnx_graph_names.ATTENTION_MASK},
        {onnx_graph_names.INPUTS_EMBEDS, onnx_graph_names.ATTENTION_MASK},
    )
    if names not in fed or out.shape[-1] != dimension:
        raise ValueError(f"{path} has unexpected inputs {sorted(names)} / output shape {out.shape}")
    return session
