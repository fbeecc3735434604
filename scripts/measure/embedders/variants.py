"""The in-process embedder's variants side by side, with today's path as the baseline, in one run.

python -m scripts.measure.embedders.variants [--scifact 600] [--zettel 1200] [--repeats 3] [--queries 200]

Variants differ by graph (today's = the graph of `--baseline-ref`; ours; after onnxruntime's transformer
optimiser; fp32 or dynamic int8), by how batches are assembled (sorted by token length inside each embed call
of `window` chunks, or taken in arrival order), by batch size and by onnxruntime's intra-op threads. Every
variant embeds the same fixed samples of SciFact and Zettelkasten chunks (the texts the indexer embeds: title,
heading path and chunk). Variants run round-robin, `--repeats` times, so drift of a shared machine spreads
over all of them; figures are medians, and ratios are against today's path in the same run. Query latency is
one SciFact claim at a time, also interleaved: today's graph through the batch path, each graph's query
session, and the default variant under other query thread settings.

Writes its own section of docs/benchmarks.md (between the bench-embed markers, which `make bench` keeps) and
docs/embedder_variants.png.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import numpy as np
import onnxruntime as ort

from backend.application.indexing.dense_pass import DENSE_WINDOW
from backend.domain.index.index_texts import embedding_text
from backend.domain.notes.chunking import chunk_note
from backend.infrastructure.embedders import onnx_minilm
from backend.infrastructure.embedders.onnx_minilm import OnnxMiniLMEmbedder
from backend.infrastructure.markdown.parser import parse_note
from scripts.measure.common import machine, percentile, replace_marked

K = TypeVar("K")  # what is measured round-robin: a variant, or a query path's label
CORPORA = Path("../shared/corpora")
# The last commit before issue 18: its graph and its embedding path (fp32, batch 32, the indexer handing
# 64 chunks per call, each call sorted by length) are "today".
BASELINE_REF = "d380806"
SECTION_START = "<!-- bench-embed: written by scripts/measure/embedders/variants.py, kept by make bench -->"
SECTION_END = "<!-- /bench-embed -->"


@dataclass(frozen=True)
class Variant:
    name: str
    graph: str  # "today" or an onnx_minilm variant
    batch_size: int = 32
    window: int = 64  # chunks per embed_documents call (each call sorted by token length)
    threads: int | None = None

    @property
    def label(self) -> str:
        return self.name


# The default variant before int8-opt-outliers, and how the service ran it.
PREVIOUS_DEFAULT = "int8-opt-ffn2fp32"


def variants(default_window: int) -> list[Variant]:
    best = onnx_minilm.DEFAULT_VARIANT
    w = default_window
    return [
        Variant("today (fp32, graph v2, batch 32, calls of 64)", "today"),
        Variant("fp32 (new graph)", "fp32"),
        Variant("fp32-opt (transformer optimiser)", "fp32-opt"),
        Variant("int8", "int8"),
        Variant("int8-opt", "int8-opt"),
        Variant(PREVIOUS_DEFAULT, PREVIOUS_DEFAULT),
        Variant(f"{PREVIOUS_DEFAULT}, sorted over {w}, batch 16 (service before)", PREVIOUS_DEFAULT, 16, w),
        Variant(best, best),
        Variant(f"{best}, arrival order", best, window=32),  # one call per batch: nothing is reordered
        Variant(f"{best}, sorted over {w}", best, window=w),
        Variant(f"{best}, sorted over {w}, batch 16 (the service now)", best, 16, w),
        Variant(f"{best}, sorted over {w}, batch 64", best, 64, w),
        Variant(f"{best}, sorted over {w}, 1 thread", best, 32, w, threads=1),
        Variant(f"{best}, sorted over {w}, 4 threads", best, 32, w, threads=4),
    ]


def sample_texts(vault: Path, count: int, seed: int = 18) -> tuple[list[str], int]:
    """`count` chunk texts of `vault` drawn with a fixed seed, and how many chunks it has in all."""
    hidden = lambda path: any(part.startswith(".") for part in path.relative_to(vault).parts)  # noqa: E731
    texts: list[str] = []
    for path in sorted(p for p in vault.rglob("*.md") if not hidden(p)):
        text = path.read_text(encoding="utf-8", errors="replace")
        note = parse_note(path.relative_to(vault).as_posix(), text)
        chunks = chunk_note(note, max_tokens=200, overlap_tokens=30)
        texts += [embedding_text(note, chunk) for chunk in chunks]
    random.Random(seed).shuffle(texts)
    return texts[:count], len(texts)


def baseline_graph_module(ref: str) -> ModuleType:
    """`onnx_graph` as it was at `ref`, imported under another name."""
    source = subprocess.run(
        ["git", "show", f"{ref}:backend/infrastructure/embedders/onnx_graph.py"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    folder = Path(tempfile.mkdtemp(prefix="bench-embed-graph-"))
    (folder / "baseline_onnx_graph.py").write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("baseline_onnx_graph", folder / "baseline_onnx_graph.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


class _BaselineEmbedder(OnnxMiniLMEmbedder):
    """Today's graph (built by the baseline's `onnx_graph`) behind the same tokenising and batching code."""

    def __init__(self, graph_file: Path, **kwargs: object) -> None:
        super().__init__(variant="fp32", **kwargs)  # type: ignore[arg-type]
        self._graph_file = graph_file

    def _load_session(self) -> ort.InferenceSession:
        return self._open_session(self._graph_file)


def build_baseline(ref: str, target: Path) -> Path:
    from safetensors.numpy import load_file

    graph = baseline_graph_module(ref)
    model_dir = onnx_minilm.locate_model_dir()
    config = graph.BertConfig.from_dict(json.loads((model_dir / "config.json").read_text(encoding="utf-8")))
    model = graph.build_sentence_embedding_graph(load_file(model_dir / "model.safetensors"), config)
    target.write_bytes(model.SerializeToString())
    return target


def embedders(chosen: list[Variant], cache: Path, baseline_file: Path) -> dict[Variant, OnnxMiniLMEmbedder]:
    built: dict[Variant, OnnxMiniLMEmbedder] = {}
    for variant in chosen:
        if variant.graph == "today":
            embedder: OnnxMiniLMEmbedder = _BaselineEmbedder(
                baseline_file, cache_dir=cache, batch_size=variant.batch_size, threads=variant.threads
            )
        else:
            embedder = OnnxMiniLMEmbedder(
                cache_dir=cache, variant=variant.graph, batch_size=variant.batch_size, threads=variant.threads
            )
        embedder.load()
        built[variant] = embedder
    return built


def chunks_per_second(embedder: OnnxMiniLMEmbedder, texts: list[str], window: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), window):
        embedder.embed_documents(texts[start : start + window])
    return len(texts) / (time.perf_counter() - started)


def query_latencies(embed: Callable[[str], list[float]], queries: list[str]) -> list[float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        embed(query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


QUERY_EMBEDDERS: list[OnnxMiniLMEmbedder] = []  # made for the query settings only, closed at the end


def query_paths(
    today: OnnxMiniLMEmbedder,
    graphs: list[Variant],
    built: dict[Variant, OnnxMiniLMEmbedder],
    cache: Path,
) -> dict[str, Callable[[str], list[float]]]:
    """How a query can be embedded: today's graph through the batch path (as before the query session),
    each graph's `embed_query` (the query session, the embedder's defaults), the previous default variant as
    the service ran it, and the default variant's batch path and query session under each thread setting."""
    best = onnx_minilm.DEFAULT_VARIANT
    paths: dict[str, Callable[[str], list[float]]] = {
        f"{graphs[0].label}, batch path": lambda q: today.embed_documents([q])[0],
    }
    for v in graphs[1:]:
        paths[f"{v.label}, query session"] = built[v].embed_query
    default = next(built[v] for v in graphs if v.graph == best)
    paths[f"{best}, batch path (before the query session)"] = lambda q: default.embed_documents([q])[0]
    settings = [(PREVIOUS_DEFAULT, None, False)]  # the service before this change: no spin
    settings += [(best, threads, spin) for threads in (None, 1) for spin in (False, True)]
    for variant, threads, spinning in settings:
        embedder = OnnxMiniLMEmbedder(
            cache_dir=cache, variant=variant, query_threads=threads, query_spinning=spinning
        )
        embedder.load()
        QUERY_EMBEDDERS.append(embedder)
        setting = f"{threads or 'default'} thread(s), {'spinning' if spinning else 'no spin'}"
        paths[f"{variant}, query session, {setting}"] = embedder.embed_query
    return paths


def cosine_to(reference: list[list[float]], vectors: list[list[float]]) -> float:
    """The smallest cosine between a variant's vectors and the reference ones (both unit length)."""
    return float(np.min(np.sum(np.asarray(reference) * np.asarray(vectors), axis=1)))


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def interleaved(
    chosen: list[K], repeats: int, measure: Callable[[K], float | list[float]], what: str
) -> dict[K, list]:
    results: dict[K, list] = {variant: [] for variant in chosen}
    for rep in range(repeats):
        for variant in chosen:
            results[variant].append(measure(variant))
        print(f"  {what}: round {rep + 1}/{repeats} done, load {load_average()}")
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scifact", type=int, default=600, help="SciFact chunks per measurement")
    ap.add_argument("--zettel", type=int, default=1200, help="Zettelkasten chunks per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200, help="SciFact claims for query latency")
    ap.add_argument(
        "--window",
        type=int,
        default=DENSE_WINDOW,
        help="chunks per call of the sorted-window variants (default: the dense pass's, as the service runs)",
    )
    ap.add_argument("--baseline-ref", default=BASELINE_REF)
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"))
    ap.add_argument("--output", type=Path, default=Path("docs/benchmarks.md"))
    ap.add_argument("--plot", type=Path, default=Path("docs/embedder_variants.png"))
    args = ap.parse_args(argv)
    host = machine()
    loads = [load_average()]
    started = time.monotonic()

    print("sampling chunks ...")
    if not (args.corpora / "scifact" / "vault").is_dir():
        ap.error(f"no corpora under {args.corpora} (pass --corpora)")
    scifact, scifact_total = sample_texts(args.corpora / "scifact" / "vault", args.scifact)
    zettel, zettel_total = sample_texts(args.corpora / "zettelkasten" / "vault", args.zettel)
    queries = [json.loads(line)["text"] for line in (args.corpora / "scifact" / "queries-train.jsonl").open()]
    queries = queries[: args.queries]
    chosen = variants(args.window)
    args.models_cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        baseline_file = build_baseline(args.baseline_ref, Path(tmp) / "baseline.onnx")
        print("loading variants (building any graph not cached yet) ...")
        built = embedders(chosen, args.models_cache, baseline_file)
        today = chosen[0]
        reference = built[today].embed_documents(scifact[:200])
        fidelity = {v: cosine_to(reference, built[v].embed_documents(scifact[:200])) for v in chosen}
        for embedder in built.values():  # warm: first runs allocate
            embedder.embed_documents(scifact[:32])
        print("SciFact chunks ...")
        sci = interleaved(
            chosen, args.repeats, lambda v: chunks_per_second(built[v], scifact, v.window), "scifact"
        )
        loads.append(load_average())
        print("Zettelkasten chunks ...")
        zet = interleaved(
            chosen, args.repeats, lambda v: chunks_per_second(built[v], zettel, v.window), "zettel"
        )
        loads.append(load_average())
        graphs = [v for v in chosen if v.batch_size == 32 and v.window == 64 and v.threads is None]
        paths = query_paths(built[graphs[0]], graphs, built, args.models_cache)
        print("query latency ...")
        lat = interleaved(list(paths), args.repeats, lambda p: query_latencies(paths[p], queries), "queries")
        loads.append(load_average())
        for embedder in [*built.values(), *QUERY_EMBEDDERS]:
            embedder.close()
    minutes = (time.monotonic() - started) / 60

    sci_med = {v: statistics.median(sci[v]) for v in chosen}
    zet_med = {v: statistics.median(zet[v]) for v in chosen}
    lines = [
        SECTION_START,
        "## Embedder variants",
        "",
        f"`make bench-embed` (`python -m scripts.measure.embedders.variants --scifact {args.scifact} "
        f"--zettel {args.zettel} --repeats {args.repeats}`), run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
        f"{minutes:.0f} minutes; load average (1 min) {' / '.join(loads)} at the start / after each part.",
        "",
        f"- machine: {host}",
        f"- data: the same {len(scifact)} of SciFact's {scifact_total} chunks and {len(zettel)} of the "
        f"Zettelkasten's {zettel_total} chunks (fixed seed) for every variant, as the indexer embeds them "
        "(title and heading path, then the chunk; at most 256 tokens); the first "
        f"{len(queries)} SciFact train claims for query latency",
        f"- today: the graph of commit {args.baseline_ref}, fp32, batch 32, the indexer handing the embedder "
        "64 chunks per call (each call sorted by token length), onnxruntime's default threads",
        f"- {args.repeats} rounds, variants round-robin; chunks/s is the median of the rounds, x is against "
        "today in the same run; cos is the lowest cosine to today's vectors over 200 SciFact chunks",
        "",
        "| variant | SciFact chunks/s | x | Zettelkasten chunks/s | x | min cos |",
        "|---|---|---|---|---|---|",
    ]
    for v in chosen:
        lines.append(
            f"| {v.label} | {sci_med[v]:.1f} ({min(sci[v]):.1f}-{max(sci[v]):.1f}) | "
            f"{sci_med[v] / sci_med[today]:.2f} | {zet_med[v]:.1f} ({min(zet[v]):.1f}-{max(zet[v]):.1f}) | "
            f"{zet_med[v] / zet_med[today]:.2f} | {fidelity[v]:.4f} |"
        )
    lines += [
        "",
        f"Query embedding (`embed_query`, one claim at a time, {len(queries)} claims x {args.repeats} "
        "rounds), milliseconds; median over rounds of each round's p50 and p95:",
        "",
        "| graph, query path | p50 | p95 | p50 x |",
        "|---|---|---|---|",
    ]
    p50 = {p: statistics.median(percentile(run, 0.5) for run in lat[p]) for p in paths}
    first = next(iter(paths))
    for p in paths:
        p95 = statistics.median(percentile(run, 0.95) for run in lat[p])
        lines.append(f"| {p} | {p50[p]:.2f} | {p95:.2f} | {p50[first] / p50[p]:.2f} |")
    lines += ["", f"Plot: `{args.plot.as_posix()}`.", "", SECTION_END]
    replace_marked(args.output, SECTION_START, SECTION_END, "\n".join(lines), new="# Benchmarks\n")
    plot(chosen, sci_med, zet_med, args.plot)
    print("\n".join(lines))
    return 0


def plot(chosen: list[Variant], sci: dict[Variant, float], zet: dict[Variant, float], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [v.label for v in chosen]
    rows = np.arange(len(chosen))
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(chosen) + 1.5))
    ax.barh(rows - 0.2, [sci[v] for v in chosen], height=0.4, label="SciFact chunks (long)")
    ax.barh(rows + 0.2, [zet[v] for v in chosen], height=0.4, label="Zettelkasten chunks (short)")
    ax.set_yticks(rows, labels)
    ax.invert_yaxis()
    ax.set_xlabel("chunks/s (median of rounds)")
    ax.set_title("all-MiniLM-L6-v2 on onnxruntime, 2 cores")
    ax.legend(loc="lower right")
    fig.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(target, dpi=110)


if __name__ == "__main__":
    raise SystemExit(main())
