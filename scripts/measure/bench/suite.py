"""`make bench`: indexing, search, freshness and quality benchmarks on ../shared/corpora, written to
docs/benchmarks.md with a plot of search latency against vault size (docs/search_latency_vs_size.png).

    python -m scripts.measure.bench.suite          # the full run: about 10 minutes on the reference machine
    python -m scripts.measure.bench.suite --quick  # one repeat, fewer queries, smaller vaults: about 3 min
    python -m scripts.measure.bench.suite --only index search
    python -m scripts.measure.bench.suite --only first-index large-vaults --compare-with /tmp/base  # vs it

The first run takes about 7 minutes more on the reference machine (2 cores): the SciFact dense index is built
once into data/eval/scifact and reused, as `make eval` does. It reuses the pieces that measure each thing on
its own, beside it in scripts/measure/bench/: index.py (indexing), search.py (latency over HTTP), live.py
(freshness with the watcher), and `python -m backend eval` (quality). Figures are the median of `--repeats`
runs with their spread (min-max); ratios compare with the reference baselines of ../shared/corpora/README.md
(quality) and with the earlier figures of docs/measurements.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.domain.models import SearchMode
from backend.infrastructure.eval_files import read_qrels, read_queries
from scripts.measure.bench import growth, live, real_vault, remote, speed, vaults
from scripts.measure.bench.index import index_once
from scripts.measure.bench.search import MODES, measure
from scripts.measure.common import log, machine, percentile, spread, subset_vault
from scripts.measure.service import ServiceProcess

CORPORA = Path("../shared/corpora")
EVAL_DATA = Path("data/eval/scifact")  # where `make eval` keeps the SciFact index: built once, reused
PARTS = (
    "index",
    "quality",
    "search",
    "speed",
    "freshness",
    "scaling",
    "first-index",
    "large-vaults",
    "real-vault",
    "remote",
    "vaults",
)
TITLES = {  # each part's section heading, so a run of a few parts keeps the others' sections
    "index": "## Indexing throughput",
    "quality": "## Retrieval quality",
    "search": "## Search latency over HTTP",
    "speed": "## Where a search's time goes",
    "freshness": "## Freshness with the watcher",
    "scaling": "## Search latency against vault size",
    "first-index": "## First start",
    "large-vaults": "## Flat as the vault grows",
    "real-vault": "## First index of a real vault",
    "remote": "## The work sent to a remote model",
    "vaults": "## Several vaults, one service",
}
EARLIER_NOTE = "_Figures of an earlier `make bench` run: this part was not run the last time (`--only`)._"
# docs/measurements.md, earlier code on the same kind of machine: what a change should be compared with
EARLIER = {
    "keyword notes/s scifact": 788.0,
    "keyword notes/s zettelkasten": 645.0,
    "embedder chunks/s": 20.9,
    "hybrid p50": 14.0,
    "dense p50": 12.5,
    "keyword p50": 6.9,
}
# ../shared/corpora/README.md, SciFact train queries, note level
REFERENCE = {
    "keyword": ("BM25 (bm25s)", {"ndcg_10": 0.664, "recall_10": 0.785, "hit_3": 0.679, "mrr_10": 0.631}),
    "dense": ("dense MiniLM", {"ndcg_10": 0.647, "recall_10": 0.781, "hit_3": 0.687, "mrr_10": 0.610}),
    "hybrid": ("RRF of both", {"ndcg_10": 0.696, "recall_10": 0.816, "hit_3": 0.742, "mrr_10": 0.663}),
}  # fmt: skip


def ratio(value: float, reference: float) -> str:
    return f"{value / reference:.2f}x" if reference else "n/a"


def bench_index(args: argparse.Namespace) -> list[str]:
    lines = ["## Indexing throughput", ""]
    lines += ["From an empty index (no embedding cache), in-process (`scripts/measure/bench/index.py`).", ""]
    lines += ["| vault | embedder | notes | chunks | seconds | notes/s | chunks/s | vs measurements.md |"]
    lines += ["|---|---|---|---|---|---|---|---|"]
    for name, key in (
        ("scifact", "keyword notes/s scifact"),
        ("zettelkasten", "keyword notes/s zettelkasten"),
    ):
        runs = [index_once(CORPORA / name / "vault", "none", args.models_cache) for _ in range(args.repeats)]
        rates = [r.notes / r.seconds for r in runs]
        lines.append(
            f"| {name} | none (keyword only) | {runs[0].notes} | {runs[0].chunks} | "
            f"{spread([r.seconds for r in runs])} | {spread(rates, digits=0)} | "
            f"{spread([r.chunks / r.seconds for r in runs], digits=0)} | "
            f"{ratio(statistics.median(rates), EARLIER[key])} |"
        )
        log(f"indexed {name} keyword-only: {statistics.median(rates):.0f} notes/s")
    with tempfile.TemporaryDirectory() as tmp:
        vault = subset_vault(CORPORA / "scifact" / "vault", args.embed_notes, Path(tmp) / "vault")
        runs = [index_once(vault, "onnx", args.models_cache) for _ in range(args.repeats)]
    embedder_rates = [r.chunks / r.embed_seconds for r in runs]
    lines.append(
        f"| scifact, first {args.embed_notes} notes | onnx all-MiniLM-L6-v2 | {runs[0].notes} | "
        f"{runs[0].chunks} | "
        f"{spread([r.seconds for r in runs])} | {spread([r.notes / r.seconds for r in runs])} | "
        f"{spread([r.chunks / r.seconds for r in runs])} | "
        f"embedder alone {spread(embedder_rates)} chunks/s = "
        f"{ratio(statistics.median(embedder_rates), EARLIER['embedder chunks/s'])} |"
    )
    share = statistics.median(r.embed_seconds / r.seconds for r in runs)
    lines += ["", f"With the real embedder, {share:.0%} of the time is spent inside it.", ""]
    return lines


def scifact_vault(args: argparse.Namespace) -> Path:
    """The SciFact vault, or for a quick run a subset kept under data/bench (so its index is reused): the
    first 500 notes plus every note judged relevant to the queries asked."""
    scifact = CORPORA / "scifact"
    if not args.quick:
        return scifact / "vault"
    subset = args.eval_data.parent / "vault"
    if not subset.is_dir():
        asked = {q.id for q in read_queries(scifact / "queries-train.jsonl")[: args.quality_queries]}
        judged = {
            note
            for qid, notes in read_qrels(scifact / "qrels-train.tsv").items()
            if qid in asked
            for note in notes
        }
        subset_vault(scifact / "vault", 500, subset)
        for note in judged:
            shutil.copy2(scifact / "vault" / note, subset / note)
    return subset


def bench_quality(args: argparse.Namespace) -> list[str]:
    scifact = CORPORA / "scifact"
    vault = scifact_vault(args)
    notes = sum(1 for _ in vault.glob("*.md"))
    command = [
        sys.executable, "-m", "backend", "eval", "--vault", str(vault),
        "--queries", str(scifact / "queries-train.jsonl"), "--qrels", str(scifact / "qrels-train.tsv"),
        "--data-dir", str(args.eval_data), "--json",
    ]  # fmt: skip
    if args.quality_queries:
        command += ["--limit", str(args.quality_queries)]
    log("quality: python -m backend eval (builds the SciFact index on the first run)")
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, env={**os.environ, "LOG_LEVEL": "WARNING"}
    )
    scores = {row["mode"]: row for row in json.loads(done.stdout)}
    queries = next(iter(scores.values()))["queries"]
    lines = ["## Retrieval quality (SciFact train queries)", ""]
    if args.quick:
        lines += [
            "Quick run: a subset vault (500 notes and the judged ones), not comparable with the references.",
            "",
        ]
    lines += [
        f"`python -m backend eval` on {queries} judged queries, {notes:,} notes, note-level scores; ratios "
        "against the reference baselines of ../shared/corpora/README.md (each mode against its like).",
        "",
    ]
    lines += [
        "| mode | nDCG@10 | recall@10 | hit@3 | MRR@10 | queries/s | reference | nDCG ratio | recall ratio |"
    ]
    lines += ["|---|---|---|---|---|---|---|---|---|"]
    for mode in MODES:
        row = scores[mode]
        name, ref = REFERENCE[mode]
        ratios = (  # a quick run's subset vault is easier than the whole corpus: no ratio
            "n/a | n/a |"
            if args.quick
            else f"{ratio(row['ndcg_10'], ref['ndcg_10'])} | {ratio(row['recall_10'], ref['recall_10'])} |"
        )
        lines.append(
            f"| {mode} | {row['ndcg_10']:.3f} | {row['recall_10']:.3f} | {row['hit_3']:.3f} "
            f"| {row['mrr_10']:.3f} | {row['queries'] / row['seconds']:.0f} "
            f"| {name}: {ref['ndcg_10']:.3f} / {ref['recall_10']:.3f} | {ratios}"
        )
    return [*lines, ""]


def bench_search(args: argparse.Namespace) -> list[str]:
    scifact = CORPORA / "scifact"
    queries = [q.text for q in read_queries(scifact / "queries-train.jsonl")[: args.search_queries]]
    runs = []
    with ServiceProcess(scifact_vault(args), args.eval_data, env={"WATCH": "false"}) as service:
        status = service.wait_idle(timeout=3600)
        for _ in range(args.repeats):
            runs.append(measure(service.url, queries))
    log("search latency measured")
    lines = ["## Search latency over HTTP (SciFact)", ""]
    lines += [
        "`scripts/measure/bench/search.py`: the service in its own process on loopback "
        f"({status['indexed_notes']} notes, {status['indexed_chunks']} chunks, hybrid index), one client, "
        f"{len(queries)} SciFact claims per mode, top_k 10, {args.repeats} run(s). Milliseconds: the median "
        "over runs of each run's p50 (with their spread), and of each run's p95. Parts from the "
        '`Server-Timing` header. "p50 vs before": this client p50 over the one measured for issue 4 '
        "(docs/measurements.md: 14.0 / 12.5 / 6.9 ms), before secret redaction, sensitivity flags, memory "
        "and access guards joined every answer.",
        "",
    ]
    lines += [
        "| mode | client p50 | client p95 | query embedding p50 | store p50 | ours p50 | p50 vs before |"
    ]
    lines += ["|---|---|---|---|---|---|---|"]
    for mode in MODES:
        p50 = [percentile(run[mode]["client"], 0.5) for run in runs]
        p95 = [percentile(run[mode]["client"], 0.95) for run in runs]
        part = {k: [percentile(run[mode][k], 0.5) for run in runs] for k in ("embed", "store", "ours")}
        lines.append(
            f"| {mode} | {spread(p50)} | {spread(p95)} | {spread(part['embed'])} | {spread(part['store'])} "
            f"| {spread(part['ours'])} | {ratio(statistics.median(p50), EARLIER[mode + ' p50'])} |"
        )
    return [*lines, ""]


def bench_freshness(args: argparse.Namespace) -> list[str]:
    source = CORPORA / "zettelkasten" / "vault"
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(source, vault, symlinks=True)
        settings = load_settings(
            vault_path=vault, data_dir=Path(tmp) / "data", embedding_provider="none", watch=True
        )
        services = build_services(settings)
        try:
            keyword_s, _ = live.first_index(services)
            notes = services.index.indexed_notes
            services.start_watcher()
            live.wait_for(lambda: services.supervisor.watcher_running)
            fresh = live.freshness(services, vault, args.rounds)
            cpu = live.idle_cpu(services, args.idle_seconds)
        finally:
            services.close()
    log("freshness measured")
    lines = ["## Freshness with the watcher (Zettelkasten)", ""]
    lines += [
        f"`scripts/measure/bench/live.py` functions on a temp copy of the Zettelkasten ({notes} notes), "
        "keyword-only (the real embedder adds one note's embedding, tens of ms, to each change), "
        f"DEBOUNCE_SECONDS {settings.debounce_seconds:g}: seconds from the change on disk to the first "
        f"search that shows it, {args.rounds} rounds.",
        "",
    ]
    lines += ["| change | median (min-max) | p95 |", "|---|---|---|"]
    for kind, values in fresh.items():
        lines.append(f"| {kind} | {spread(values, ' s', 2)} | {percentile(values, 0.95):.2f} s |")
    lines += [
        "",
        f"First index, keyword-searchable after {keyword_s:.1f} s; idle CPU with the watcher running "
        f"{cpu:.2f}% of one core over {args.idle_seconds:g} s.",
        "",
    ]
    return lines


def bench_scaling(args: argparse.Namespace) -> tuple[list[str], list[tuple[int, float, float]]]:
    source = CORPORA / "zettelkasten" / "vault"
    rng = random.Random(11)
    points: list[tuple[int, float, float]] = []
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as tmp:
            vault = subset_vault(source, size, Path(tmp) / "vault")
            paths = sorted(p for p in vault.rglob("*.md"))
            # the same kind of question at every size: a few words from a note of the smallest subset
            words = [
                w
                for p in paths[: min(args.sizes)]
                for w in p.read_text(errors="replace").split()
                if w.isalpha()
            ]
            queries = [" ".join(rng.sample(words, 3)) for _ in range(args.scaling_queries)]
            settings = load_settings(
                vault_path=vault, data_dir=Path(tmp) / "data", embedding_provider="none", watch=False
            )
            services = build_services(settings)
            try:
                services.index.open()
                report = services.indexer.sync()
                latencies = []
                for query in queries:
                    started = time.perf_counter()
                    services.search.search(query, top_k=10, mode=SearchMode.KEYWORD, include_related=True)
                    latencies.append((time.perf_counter() - started) * 1000)
            finally:
                services.close()
        p50, p95 = percentile(latencies, 0.5), percentile(latencies, 0.95)
        points.append((report.indexed, p50, p95))
        rows.append(f"| {report.indexed} | {report.chunks} | {p50:.2f} | {p95:.2f} |")
        log(f"scaling: {report.indexed} notes, keyword p50 {p50:.2f} ms")
    lines = ["## Search latency against vault size", ""]
    lines += [
        "The first N notes of the Zettelkasten (sorted by path), keyword-only index, "
        f"{args.scaling_queries} queries of three words each, in-process `SearchService.search` (top_k 10, "
        "related notes included, no HTTP), milliseconds. Plot: `docs/search_latency_vs_size.png`. Keyword "
        "only: a dense index of the largest subsets takes about 25 minutes to embed on this machine.",
        "",
    ]
    lines += ["| notes | chunks | p50 | p95 |", "|---|---|---|---|", *rows, ""]
    return lines, points


def plot(points: list[tuple[int, float, float]], target: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [p[0] for p in points]
    figure, axes = plt.subplots(figsize=(7, 4.2), dpi=110)
    axes.plot(sizes, [p[1] for p in points], marker="o", label="p50")
    axes.plot(sizes, [p[2] for p in points], marker="s", label="p95")
    axes.set_xscale("log")
    axes.set_xticks(sizes, [f"{size:,}" for size in sizes])
    axes.minorticks_off()
    axes.set_xlabel("notes in the vault (Zettelkasten subsets)")
    axes.set_ylabel("keyword search latency, ms (in-process)")
    axes.set_ylim(bottom=0)
    axes.set_title("Search latency against vault size")
    axes.grid(True, alpha=0.3)
    axes.legend()
    figure.tight_layout()
    target.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(target)
    plt.close(figure)


def kept_sections(output: Path, skipped: list[str]) -> list[str]:
    """Sections carried over from the file as it is: those of the parts not run this time (`--only`), marked
    as earlier figures, and those other scripts own in it (make bench-embed's)."""
    from scripts.measure.embedders.variants import SECTION_END, SECTION_START

    text = output.read_text(encoding="utf-8") if output.is_file() else ""
    ours = text.split(SECTION_START, 1)[0]
    kept: list[str] = []
    for section in ours.split("\n## ")[1:]:
        title = f"## {section.splitlines()[0]}"
        if any(title.startswith(TITLES[part]) for part in skipped):
            body = section.split("\n", 1)[1] if "\n" in section else ""
            note = "" if EARLIER_NOTE in body else f"\n{EARLIER_NOTE}\n"
            kept += [f"{title}\n{note}{body.rstrip()}", ""]
    if SECTION_START in text and SECTION_END in text:
        block = SECTION_START + text.split(SECTION_START, 1)[1].split(SECTION_END, 1)[0] + SECTION_END
        kept += ["", block, ""]
        after = text.split(SECTION_END, 1)[1].strip()  # sections other scripts add after it (bench-recall's)
        if after:
            kept += [after, ""]
    return kept


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="one repeat, fewer queries, smaller vaults")
    ap.add_argument("--only", nargs="+", choices=PARTS, default=list(PARTS))
    ap.add_argument("--repeats", type=int, help="runs per measurement (default 3, quick 1)")
    ap.add_argument("--output", type=Path, default=Path("docs/benchmarks.md"))
    ap.add_argument("--plot", type=Path, default=Path("docs/search_latency_vs_size.png"))
    ap.add_argument("--eval-data", type=Path, default=EVAL_DATA, help="the SciFact index (reused)")
    ap.add_argument("--before", type=Path, help="a checkout of the code before a change (the speed part)")
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"), help="reuse a built ONNX graph")
    growth.add_arguments(ap)
    real_vault.add_arguments(ap)
    remote.add_arguments(ap)
    vaults.add_arguments(ap)
    args = ap.parse_args(argv)
    quick = args.quick
    if quick and args.eval_data == EVAL_DATA:
        args.eval_data = Path("data/bench/scifact-quick/data")
    args.repeats = args.repeats or (1 if quick else 3)
    args.embed_notes = 100 if quick else 500
    args.quality_queries = 100 if quick else None
    args.search_queries = 50 if quick else 300
    args.concurrent_seconds = 10.0 if quick else 30.0
    args.rounds, args.idle_seconds = (3, 3.0) if quick else (10, 10.0)
    args.sizes = [250, 1000, 3000] if quick else [500, 1000, 2000, 4000, 8000, 13410]
    args.scaling_queries = 50 if quick else 200
    args.growth_queries, args.status_calls, args.search_rounds = (300, 50, 1) if quick else (1000, 200, 3)
    host = machine()  # before anything runs: the load average says how busy the machine was
    started = time.monotonic()
    sections: list[str] = []
    points: list[tuple[int, float, float]] = []
    steps: dict[str, Callable[[argparse.Namespace], list[str]]] = {
        "index": bench_index,
        "quality": bench_quality,
        "search": bench_search,
        # every stage's p50/p95, and the HTTP figures against the code before (BEFORE=) in the same run
        "speed": lambda a: speed.bench_speed(a.before, a.search_queries, CORPORA, a.concurrent_seconds),
        "freshness": bench_freshness,
        "first-index": lambda a: growth.bench_first_index(a, CORPORA),
        "large-vaults": lambda a: growth.bench_large_vaults(a, CORPORA),
        # the first index until dense of a vault of a real one's shape, the Zettelkasten and real-dev
        "real-vault": lambda a: real_vault.bench_real_vault(a, CORPORA),
        "remote": lambda a: remote.bench_remote(a, CORPORA),  # texts sent to a stand-in Ollama
        "vaults": lambda a: vaults.bench_vaults(a, CORPORA),  # two vaults in one service
    }
    durations = []
    for part in PARTS:
        if part not in args.only:
            continue
        log(f"{part} ...")
        part_started = time.monotonic()
        if part == "scaling":
            lines, points = bench_scaling(args)
        else:
            lines = steps[part](args)
        sections += lines
        durations.append(f"{part} {time.monotonic() - part_started:.0f} s")
    if points:
        plot(points, args.plot)
    total = time.monotonic() - started
    flag = " BENCH_FLAGS=--quick" if quick else ""
    header = [
        "# Benchmarks",
        "",
        f"`make bench{flag}` (`python -m scripts.measure.bench.suite{' --quick' if quick else ''}`), run "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, {total / 60:.1f} minutes ({', '.join(durations)}).",
        "",
        f"- machine: {host}",
        "- data: `../shared/corpora` (see its README): SciFact (5,183 notes, 809 judged train queries), "
        "the 13,410-note Zettelkasten; embedded defaults (qdrant-edge in-process, all-MiniLM-L6-v2 on "
        "onnxruntime)",
        f"- repeats: {args.repeats} per figure; `median (min-max, n=N)` is their median and their spread",
        "",
    ]
    if quick:
        header += ["Quick run: smaller samples, one repeat; the figures are indicative only.", ""]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    sections += kept_sections(args.output, [part for part in PARTS if part not in args.only])
    args.output.write_text("\n".join(header + sections), encoding="utf-8")
    print("\n".join(header + sections))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
