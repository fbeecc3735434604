"""Search latency of two checkouts over the same vault, asked in turn: the code before a change against the
code after it, in one run, so both see the same machine load (this machine's speed drifts by 20% over hours).

Each checkout serves its own index of the vault (`python -m backend serve` from that checkout, on a loopback
port, fully indexed first); every question goes to both, which one goes first alternating, one at a time.

    python -m scripts.measure.bench.compare_search --vault ../shared/corpora/zettelkasten/vault \
        --before /tmp/main-before:/tmp/data-before --after .:/tmp/data-after -n 500

prints p50 and p95 per mode for each checkout, and after/before.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path

import httpx

from backend.infrastructure.eval_files import read_queries
from scripts.measure.common import drawn_questions, machine, percentile
from scripts.measure.service import ServiceProcess

WARM_UP = 20  # questions asked of both before timing: caches and lazy imports


def questions(vault: Path, corpora: Path, count: int) -> list[str]:
    """Half three words drawn from the vault's own notes (as the large-vaults benchmark asks), half LoCoMo's
    plain-language questions (times, people, decisions), shuffled together."""
    rng = random.Random(11)
    drawn = drawn_questions(sorted(vault.rglob("*.md"))[:500], count // 2, rng)
    asked = [q.text for q in read_queries(corpora / "locomo-dev" / "queries-dev.jsonl")]
    rng.shuffle(asked)
    mixed = drawn + asked[: count - len(drawn)]
    rng.shuffle(mixed)
    return mixed


def ask(client: httpx.Client, body: dict[str, object]) -> float:
    """Milliseconds of one `POST /search` as the client sees it."""
    started = time.perf_counter()
    response = client.post("/search", json=body)
    response.raise_for_status()
    return (time.perf_counter() - started) * 1000


def compare(urls: dict[str, str], queries: list[str], modes: list[str]) -> dict[str, dict[str, list[float]]]:
    """{mode: {label: [ms per question]}}: each question asked of every service, the first one alternating."""
    clients = {label: httpx.Client(base_url=url, timeout=60) for label, url in urls.items()}
    labels = list(clients)
    try:
        found: dict[str, dict[str, list[float]]] = {}
        for mode in modes:
            for query in queries[:WARM_UP]:
                for label in labels:
                    ask(clients[label], {"query": query, "mode": mode, "top_k": 10})
            times: dict[str, list[float]] = {label: [] for label in labels}
            for i, query in enumerate(queries):
                order = labels[i % len(labels) :] + labels[: i % len(labels)]
                for label in order:
                    times[label].append(ask(clients[label], {"query": query, "mode": mode, "top_k": 10}))
            found[mode] = times
        return found
    finally:
        for client in clients.values():
            client.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--corpora", type=Path, default=Path("../shared/corpora"))
    ap.add_argument("--before", required=True, help="CHECKOUT:DATA_DIR of the code before the change")
    ap.add_argument("--after", required=True, help="CHECKOUT:DATA_DIR of the code after it")
    ap.add_argument("-n", type=int, default=500, help="questions per mode")
    ap.add_argument("--modes", nargs="+", default=["hybrid", "keyword"])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    sides = {}
    for label, spec in (("before", args.before), ("after", args.after)):
        repo, data = spec.split(":", 1)
        sides[label] = (Path(repo).resolve(), Path(data).resolve())
    queries = questions(args.vault, args.corpora, args.n)
    with (
        ServiceProcess(args.vault, sides["before"][1], repo=sides["before"][0]) as before,
        ServiceProcess(args.vault, sides["after"][1], repo=sides["after"][0]) as after,
    ):
        for service in (before, after):
            service.wait_dense()
        found = compare({"before": before.url, "after": after.url}, queries, args.modes)
    summary = {
        mode: {
            label: {"p50": percentile(ms, 0.5), "p95": percentile(ms, 0.95)} for label, ms in times.items()
        }
        for mode, times in found.items()
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"machine: {machine()}; {len(queries)} questions per mode, each asked of both in turn")
    print("| mode | before p50 / p95 ms | after p50 / p95 ms | after / before p50, p95 |")
    print("|---|---|---|---|")
    for mode, row in summary.items():
        b, a = row["before"], row["after"]
        print(
            f"| {mode} | {b['p50']:.1f} / {b['p95']:.1f} | {a['p50']:.1f} / {a['p95']:.1f} | "
            f"x{a['p50'] / b['p50']:.2f}, x{a['p95'] / b['p95']:.2f} |"
        )


if __name__ == "__main__":
    main()
