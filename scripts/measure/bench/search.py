"""Search latency over HTTP, per mode, split into query embedding, store query, our own work and HTTP.

Starts `python -m backend serve` on a loopback port against an index directory (indexing it first if needed),
sends the first N queries of a JSON-lines file once per mode, one at a time, and prints p50/p95 in ms.

    python -m scripts.measure.bench.search --vault ../shared/corpora/scifact/vault --data-dir /tmp/eval-onnx \
        --queries ../shared/corpora/scifact/queries-train.jsonl -n 300
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import httpx

from backend.infrastructure.eval_files import read_queries
from scripts.measure.common import machine, percentile, server_timing
from scripts.measure.service import ServiceProcess

MODES = ("hybrid", "dense", "keyword")
PARTS = ("client", "embed", "store", "ours", "http")


def measure(url: str, queries: list[str], top_k: int = 10, modes: tuple[str, ...] = MODES) -> dict:
    """{mode: {part: [ms per query]}} for one client sending the queries one at a time."""
    found: dict[str, dict[str, list[float]]] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        for mode in modes:
            client.post("/search", json={"query": "warm up", "mode": mode})
            rows: dict[str, list[float]] = {part: [] for part in PARTS}
            for query in queries:
                started = time.perf_counter()
                response = client.post("/search", json={"query": query, "mode": mode, "top_k": top_k})
                elapsed = (time.perf_counter() - started) * 1000
                response.raise_for_status()
                timing = server_timing(response.headers["server-timing"])
                rows["client"].append(elapsed)
                rows["embed"].append(timing["embed"])
                rows["store"].append(timing["store"])
                rows["ours"].append(timing["total"] - timing["embed"] - timing["store"])
                rows["http"].append(elapsed - timing["total"])
            found[mode] = rows
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("-n", type=int, default=300, help="queries per mode")
    ap.add_argument("--top-k", type=int, default=10)
    args = ap.parse_args()
    with ServiceProcess(args.vault, args.data_dir) as service:
        status = service.wait_idle(timeout=3600)
        queries = [q.text for q in read_queries(args.queries)[: args.n]]
        rows = measure(service.url, queries, args.top_k)
    print(f"machine: {machine()}")
    print(f"vault: {args.vault} ({status['indexed_notes']} notes, {status['indexed_chunks']} chunks)")
    print(f"{len(queries)} queries per mode, top_k={args.top_k}, one client on loopback\n")
    print("| mode | client p50 / p95 | embed p50 / p95 | store p50 / p95 | ours p50 / p95 | http p50 |")
    print("|---|---|---|---|---|---|")
    for mode, parts in rows.items():
        cells = [f"{percentile(parts[k], 0.5):.1f} / {percentile(parts[k], 0.95):.1f}" for k in PARTS[:4]]
        print(f"| {mode} | " + " | ".join(cells) + f" | {statistics.median(parts['http']):.1f} |")


if __name__ == "__main__":
    main()
