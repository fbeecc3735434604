"""Search latency over HTTP, per mode, split into query embedding, store query, our own work and HTTP.

Starts `python -m backend serve` on a loopback port against an index directory (indexing it first if needed),
sends the first N queries of a JSON-lines file once per mode, one at a time, and prints p50/p95 in ms.

    python -m scripts.bench_search --vault ../shared/corpora/scifact/vault --data-dir /tmp/eval-onnx \
        --queries ../shared/corpora/scifact/queries-train.jsonl -n 300
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import httpx

from backend.infrastructure.eval_files import read_queries


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _server_timing(header: str) -> dict[str, float]:
    parts = {}
    for item in header.split(","):
        name, _, dur = item.strip().partition(";dur=")
        parts[name] = float(dur)
    return parts


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True)
    ap.add_argument("-n", type=int, default=300, help="queries per mode")
    ap.add_argument("--port", type=int, default=8791)
    ap.add_argument("--top-k", type=int, default=10)
    args = ap.parse_args()
    env = {**os.environ, "PORT": str(args.port), "HOST": "127.0.0.1", "LOG_LEVEL": "WARNING"}
    cmd = [
        sys.executable,
        "-m",
        "backend",
        "serve",
        "--vault",
        str(args.vault),
        "--data-dir",
        str(args.data_dir),
    ]
    server = subprocess.Popen(cmd, env=env)
    base = f"http://127.0.0.1:{args.port}"
    try:
        with httpx.Client(base_url=base, timeout=60) as client:
            deadline = time.monotonic() + 3600
            while True:
                try:
                    job = client.get("/index/status").json().get("job")
                    if job is None or job["finished_at"]:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    raise SystemExit("server did not become ready")
                time.sleep(0.5)
            status = client.get("/index/status").json()
            queries = [q.text for q in read_queries(args.queries)[: args.n]]
            print(
                f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
            )
            print(f"vault: {args.vault} ({status['indexed_notes']} notes, {status['indexed_chunks']} chunks)")
            print(f"{len(queries)} queries per mode, top_k={args.top_k}, one client on loopback\n")
            print(
                "| mode | client p50 / p95 | embed p50 / p95 | store p50 / p95 | ours p50 / p95 | http p50 |"
            )
            print("|---|---|---|---|---|---|")
            for mode in ("hybrid", "dense", "keyword"):
                client.post("/search", json={"query": "warm up", "mode": mode})
                rows: dict[str, list[float]] = {
                    "client": [],
                    "embed": [],
                    "store": [],
                    "ours": [],
                    "http": [],
                }
                for query in queries:
                    started = time.perf_counter()
                    response = client.post(
                        "/search", json={"query": query, "mode": mode, "top_k": args.top_k}
                    )
                    elapsed = (time.perf_counter() - started) * 1000
                    response.raise_for_status()
                    timing = _server_timing(response.headers["server-timing"])
                    rows["client"].append(elapsed)
                    rows["embed"].append(timing["embed"])
                    rows["store"].append(timing["store"])
                    rows["ours"].append(timing["total"] - timing["embed"] - timing["store"])
                    rows["http"].append(elapsed - timing["total"])
                cells = [f"{_pct(rows[k], 0.5):.1f} / {_pct(rows[k], 0.95):.1f}" for k in rows if k != "http"]
                print(f"| {mode} | " + " | ".join(cells) + f" | {statistics.median(rows['http']):.1f} |")
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
