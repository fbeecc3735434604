"""Load test: concurrent searches against the real service while notes change on disk.

    python -m scripts.measure.load.loadtest --vault ../shared/corpora/obsidian-help/vault --seconds 60 \
        --clients 32

The vault is copied to a temp folder and served by `python -m backend serve` in its own process on loopback
(the watcher on). Once the first index is complete, `--clients` asyncio clients send `POST /search` back to
back for `--seconds`, while a writer process edits, creates and deletes notes through the file system every
`--edit-every` seconds. Reported: requests, throughput, latency percentiles, status codes, edits made, and
whether the index caught up with every edit once the load stopped (`GET /index/verify`). Exit code 1 on any
5xx, transport error, or an index that did not catch up.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from scripts.measure.common import link_models, machine, percentile
from scripts.measure.service import ServiceProcess

QUERIES = [
    "how do I link to a heading in another note",
    "embed an image",
    "sync my vault across devices",
    "keyboard shortcuts",
    "what is a canvas",
    "create a new note from a template",
    "search operators",
    "publish my notes",
    "block reference",
    "properties and frontmatter",
    "graph view filters",
    "tags",
    "daily notes",
    "command palette",
    "plugins",
]
MODES = ("hybrid", "hybrid", "hybrid", "keyword", "dense")  # mostly what an agent sends


@dataclass
class Results:
    latencies_ms: list[float] = field(default_factory=list)
    statuses: Counter[int] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    degraded: int = 0

    @property
    def server_errors(self) -> int:
        return sum(count for status, count in self.statuses.items() if status >= 500)


async def client_loop(client: httpx.AsyncClient, deadline: float, seed: int, results: Results) -> None:
    rng = random.Random(seed)
    while time.monotonic() < deadline:
        body = {"query": rng.choice(QUERIES), "mode": rng.choice(MODES), "top_k": rng.choice((5, 10))}
        started = time.perf_counter()
        try:
            response = await client.post("/search", json=body)
        except httpx.HTTPError as exc:
            results.errors[type(exc).__name__] += 1
            continue
        results.latencies_ms.append((time.perf_counter() - started) * 1000)
        results.statuses[response.status_code] += 1
        if response.status_code == 200 and response.json().get("status") == "degraded":
            results.degraded += 1


async def run_clients(url: str, clients: int, seconds: float) -> Results:
    results = Results()
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as client:
        deadline = time.monotonic() + seconds
        await asyncio.gather(*(client_loop(client, deadline, seed, results) for seed in range(clients)))
    return results


def writer(vault: str, seconds: float, every: float, counter: Any) -> None:
    """Edits notes through the file system (its own process, like an editor): appends a line to a note,
    now and then creates a note or deletes one it created."""
    rng = random.Random(7)
    root = Path(vault)
    notes = sorted(p for p in root.rglob("*.md") if not any(part.startswith(".") for part in p.parts))
    created: list[Path] = []
    deadline = time.monotonic() + seconds
    n = 0
    while time.monotonic() < deadline:
        n += 1
        roll = rng.random()
        if roll < 0.15:
            path = root / "Load test" / f"created {n}.md"
            path.parent.mkdir(exist_ok=True)
            path.write_text(f"# Created {n}\n\nloadtoken{n} written by the load test\n", encoding="utf-8")
            created.append(path)
        elif roll < 0.2 and created:
            created.pop(rng.randrange(len(created))).unlink()
        else:
            with rng.choice(notes).open("a", encoding="utf-8") as fh:
                fh.write(f"\n\nloadtoken{n} appended by the load test\n")
        counter.value += 1
        time.sleep(every)


def report(
    args: argparse.Namespace, status: dict, results: Results, edits: int, caught_up: str, wall: float
) -> str:
    lat = results.latencies_ms
    done = len(lat)
    p50, p95, p99 = (percentile(lat, q) for q in (0.5, 0.95, 0.99))
    worst = max(lat, default=float("nan"))
    lines = [
        "# Load test",
        "",
        f"Run {datetime.now(UTC):%Y-%m-%d %H:%M} UTC with `python -m scripts.measure.load.loadtest "
        f"--vault {args.vault} --seconds {args.seconds:g} --clients {args.clients} "
        f"--edit-every {args.edit_every:g} --provider {args.provider}`.",
        "",
        f"- machine: {args.machine}",
        f"- data: a temp copy of `{args.vault}` ({status['indexed_notes']} notes, {status['indexed_chunks']} "
        f"chunks), embedder `{args.provider}`, the watcher on (default DEBOUNCE_SECONDS, 2 s)",
        f"- load: {args.clients} concurrent clients on loopback sending `POST /search` back to back "
        "(60% hybrid, 20% keyword, 20% dense; top_k 5 or 10) for "
        f"{args.seconds:g} s, while a writer process made {edits} edits through the file system "
        f"(appends, creates, deletes; one every {args.edit_every:g} s)",
        "",
        "| requests | throughput | p50 | p95 | p99 | max | 5xx | transport errors | degraded answers |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {done} | {done / wall:.1f} req/s | {p50:.1f} ms | {p95:.1f} ms | {p99:.1f} ms | {worst:.1f} ms "
        f"| {results.server_errors} | {sum(results.errors.values())} | {results.degraded} |",
        "",
        f"Status codes: {dict(sorted(results.statuses.items()))}"
        + (f"; transport errors: {dict(results.errors)}" if results.errors else "")
        + f". Mean latency {statistics.fmean(lat) if lat else float('nan'):.1f} ms.",
        "",
        f"After the load: {caught_up}",
        "",
    ]
    return "\n".join(lines)


def wait_caught_up(service: ServiceProcess, timeout: float = 120.0) -> str:
    """Poll until the watcher has applied everything and the index matches the disk."""
    deadline = time.monotonic() + timeout
    started = time.monotonic()
    verdict: dict = {}
    while time.monotonic() < deadline:
        status = service.get("/index/status").json()
        job = status.get("job")
        idle = job is None or job["finished_at"] is not None
        if status["pending_changes"] == 0 and idle:
            verdict = service.get("/index/verify", timeout=120).json()
            if verdict["consistent"]:
                return (
                    f"the index matched the disk {time.monotonic() - started:.1f} s after the last edit "
                    f"({verdict['notes_indexed']} notes, GET /index/verify consistent)."
                )
        time.sleep(0.5)
    return f"NOT CAUGHT UP within {timeout:.0f} s: {verdict.get('drift')}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, default=Path("../shared/corpora/obsidian-help/vault"))
    ap.add_argument("--seconds", type=float, default=60.0, help="how long the load runs")
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--edit-every", type=float, default=0.5, help="seconds between two edits of the writer")
    ap.add_argument("--provider", choices=["onnx", "none"], default="onnx")
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"), help="reuse a built ONNX graph")
    ap.add_argument("--output", type=Path, default=Path("docs/loadtest.md"), help="where the report goes")
    args = ap.parse_args(argv)
    args.machine = machine()  # before anything runs: the load average says how busy the machine was
    with tempfile.TemporaryDirectory(prefix="kb-loadtest-") as tmp:
        vault, data = Path(tmp) / "vault", Path(tmp) / "data"
        shutil.copytree(args.vault, vault, symlinks=True)
        data.mkdir()
        if args.provider == "onnx":
            link_models(data, args.models_cache)
        env = {"EMBEDDING_PROVIDER": args.provider, "WATCH": "true", "LOG_LEVEL": "WARNING"}
        with ServiceProcess(vault, data, env=env, log_path=Path(tmp) / "service.log") as service:
            print("indexing the vault copy ...", file=sys.stderr)
            status = service.wait_idle(timeout=3600)
            edits = multiprocessing.Value("i", 0)
            editor = multiprocessing.Process(
                target=writer, args=(str(vault), args.seconds, args.edit_every, edits), name="writer"
            )
            print(f"{args.clients} clients for {args.seconds:g} s ...", file=sys.stderr)
            started = time.monotonic()
            editor.start()
            results = asyncio.run(run_clients(service.url, args.clients, args.seconds))
            wall = time.monotonic() - started
            editor.join(timeout=60)
            caught_up = wait_caught_up(service)
            alive = service.alive
        text = report(args, status, results, edits.value, caught_up, wall)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text, encoding="utf-8")
    print(text)
    failed = results.server_errors or results.errors or "NOT CAUGHT UP" in caught_up or not alive
    if failed:
        print("FAILED: server errors, transport errors, or an index that did not catch up", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
