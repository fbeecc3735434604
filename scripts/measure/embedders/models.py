"""The two in-process models side by side in one run: all-MiniLM-L6-v2 (English) and multilingual-e5-small
(~100 languages), chunks per second and query latency (issue 27).

python -m scripts.measure.embedders.models [--chunks 300] [--repeats 3] [--queries 200]

Every configuration embeds the same fixed samples of chunks as the indexer embeds them (title, heading path,
chunk): SciFact (English) and the German and Chinese XQuAD vaults, in calls of the dense pass's window
(each call sorted by token length), round-robin `--repeats` times so a shared machine's drift spreads over
all of them; chunks/s is the median of the rounds. Query latency: one question at a time through
`embed_query` (its own session), p50/p95 over the rounds. "cos" is the lowest cosine of a configuration's
vectors to the float32 graph of the same model (100 chunks): what quantisation costs.

Writes its section of docs/languages.md (between the bench-models markers).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from backend.application.indexing.dense_pass import DENSE_WINDOW
from backend.infrastructure.embedders.onnx_minilm import OnnxE5Embedder, OnnxEmbedder, OnnxMiniLMEmbedder
from scripts.measure.common import machine, percentile, replace_marked
from scripts.measure.embedders.variants import (
    chunks_per_second,
    cosine_to,
    interleaved,
    load_average,
    sample_texts,
)

CORPORA = Path("../shared/corpora")
SECTION_START = "<!-- bench-models: written by scripts/measure/embedders/models.py -->"
SECTION_END = "<!-- /bench-models -->"


@dataclass(frozen=True)
class Config:
    label: str
    multilingual: bool
    variant: str = "int8-opt-outliers"
    batch_size: int = 16
    threads: int | None = None

    def build(self, cache: Path) -> OnnxEmbedder:
        kind = OnnxE5Embedder if self.multilingual else OnnxMiniLMEmbedder
        embedder = kind(
            cache_dir=cache, variant=self.variant, batch_size=self.batch_size, threads=self.threads
        )
        embedder.load()
        return embedder


CONFIGS = [
    # int8 variants embed one text a call (issue 28: a text's vector must not depend on its batch)
    Config("all-MiniLM-L6-v2, int8-opt-outliers, batch 1 (the English default)", False, batch_size=1),
    Config("all-MiniLM-L6-v2, int8-opt-outliers, batch 16 (before issue 28)", False),
    Config(
        "multilingual-e5-small, int8-opt-outliers, batch 1 (the multilingual default)", True, batch_size=1
    ),
    Config("multilingual-e5-small, int8-opt-outliers, batch 16 (before issue 28)", True),
]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--chunks", type=int, default=300, help="chunks of each corpus per measurement")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"))
    ap.add_argument("--output", type=Path, default=Path("docs/languages.md"))
    args = ap.parse_args(argv)
    host, loads, started = machine(), [load_average()], time.monotonic()
    corpora = {
        "SciFact": args.corpora / "scifact" / "vault",
        "XQuAD de": args.corpora / "xquad-dev" / "de" / "vault",
        "XQuAD zh": args.corpora / "xquad-dev" / "zh" / "vault",
    }
    samples = {name: sample_texts(vault, args.chunks)[0] for name, vault in corpora.items()}
    questions = {
        "SciFact": _questions(args.corpora / "scifact" / "queries-train.jsonl", args.queries),
        "XQuAD de": _questions(args.corpora / "xquad-dev" / "de" / "queries-dev.jsonl", args.queries),
    }
    print("loading (and on a cold cache building) the graphs ...")
    built = {config: config.build(args.models_cache) for config in CONFIGS}
    try:
        speed: dict[str, dict[Config, list[float]]] = {}
        for name, texts in samples.items():
            speed[name] = interleaved(
                CONFIGS, args.repeats, lambda c, t=texts: chunks_per_second(built[c], t, DENSE_WINDOW), name
            )
            loads.append(load_average())
        latency: dict[str, dict[Config, list[list[float]]]] = {}
        for name, queries in questions.items():
            latency[name] = interleaved(
                CONFIGS, args.repeats, lambda c, q=queries: _latencies(built[c], q), f"queries {name}"
            )
            loads.append(load_average())
        cosine = _cosines(built, samples["XQuAD de"][:50] + samples["SciFact"][:50], args.models_cache)
    finally:
        for embedder in built.values():
            embedder.close()
    minutes = (time.monotonic() - started) / 60
    table = _table(speed, latency, cosine)
    command = (
        f"`python -m scripts.measure.embedders.models --chunks {args.chunks} --repeats {args.repeats} "
        f"--queries {args.queries}`"
    )
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    section = "\n".join(
        [
            SECTION_START,
            "## Speed of the two in-process models",
            "",
            f"{command}, run {when}, {minutes:.0f} minutes; load average (1 min) "
            f"{' / '.join(loads)} at the start / after each part.",
            "",
            f"- machine: {host}",
            f"- data: the same {args.chunks} chunks of each corpus for every configuration (fixed seed), as "
            f"the indexer embeds them, in calls of {DENSE_WINDOW} sorted by token length; {args.queries} "
            "questions one at a time for query latency",
            "",
            table,
            SECTION_END,
        ]
    )
    print(section)
    replace_marked(args.output, SECTION_START, SECTION_END, section)
    return 0


def _questions(path: Path, count: int) -> list[str]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line)["text"] for line in handle][:count]


def _latencies(embedder: OnnxEmbedder, queries: list[str]) -> list[float]:
    timings = []
    for query in queries:
        started = time.perf_counter()
        embedder.embed_query(query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def _cosines(built: dict[Config, OnnxEmbedder], texts: list[str], cache: Path) -> dict[Config, float]:
    references: dict[bool, list[list[float]]] = {}
    for multilingual in (False, True):
        exact = Config("fp32", multilingual, "fp32").build(cache)
        try:
            references[multilingual] = exact.embed_documents(texts)
        finally:
            exact.close()
    return {c: cosine_to(references[c.multilingual], built[c].embed_documents(texts)) for c in built}


def _table(
    speed: dict[str, dict[Config, list[float]]],
    latency: dict[str, dict[Config, list[list[float]]]],
    cosine: dict[Config, float],
) -> str:
    base = CONFIGS[0]
    head = " | ".join(f"{name} chunks/s" for name in speed)
    q_head = " | ".join(f"{name} query p50 / p95 ms" for name in latency)
    lines = [
        f"| configuration | {head} | {q_head} | min cos to fp32 |",
        "|---" * (2 + len(speed) + len(latency)) + "|",
    ]
    for config in CONFIGS:
        cells = []
        for runs in speed.values():
            median = statistics.median(runs[config])
            ratio = median / statistics.median(runs[base])
            cells.append(f"{median:.1f} (x{ratio:.2f})")
        for rounds in latency.values():
            p50 = statistics.median(percentile(r, 0.5) for r in rounds[config])
            p95 = statistics.median(percentile(r, 0.95) for r in rounds[config])
            cells.append(f"{p50:.2f} / {p95:.2f}")
        lines.append(f"| {config.label} | {' | '.join(cells)} | {cosine[config]:.4f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
