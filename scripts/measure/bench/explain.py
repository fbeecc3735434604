"""What the explain data of /search costs (the look-inside page's why-panel): each question asked three ways
in turn over HTTP — plain, with `explain`, with `explain` and `why_not` naming a note — against one service,
so all three see the same machine load.

    python -m scripts.measure.bench.explain --vault ../shared/corpora/locomo-dev/vault \
        --data-dir /tmp/locomo -n 200

prints p50 and p95 per way and their ratios to the plain search (hybrid, top_k 10).
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

import httpx

from scripts.measure.bench.compare_search import ask, questions
from scripts.measure.common import machine, percentile
from scripts.measure.service import ServiceProcess

WARM_UP = 20


def measure(url: str, queries: list[str], notes: list[str]) -> dict[str, list[float]]:
    rng = random.Random(7)
    ways = ("plain", "explain", "explain + why_not")
    times: dict[str, list[float]] = {way: [] for way in ways}
    with httpx.Client(base_url=url, timeout=60) as client:
        for i, query in enumerate([*queries[:WARM_UP], *queries]):
            bodies = {
                "plain": {"query": query, "top_k": 10},
                "explain": {"query": query, "top_k": 10, "explain": True},
                "explain + why_not": {"query": query, "top_k": 10, "why_not": rng.choice(notes)},
            }
            order = ways[i % 3 :] + ways[: i % 3]
            for way in order:
                ms = ask(client, bodies[way])
                if i >= WARM_UP:
                    times[way].append(ms)
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--corpora", type=Path, default=Path("../shared/corpora"))
    ap.add_argument("-n", type=int, default=200, help="questions")
    args = ap.parse_args()
    queries = questions(args.vault, args.corpora, args.n)
    notes = sorted(str(p.relative_to(args.vault)) for p in args.vault.rglob("*.md"))
    with ServiceProcess(args.vault, args.data_dir.resolve()) as service:
        service.wait_dense()
        times = measure(service.url, queries, notes)
    print(f"machine: {machine()}; {args.vault}: {len(queries)} questions, each asked the three ways in turn")
    print("| way | p50 / p95 ms | ÷ plain p50, p95 |")
    print("|---|---|---|")
    plain = times["plain"]
    for way, ms in times.items():
        p50, p95 = percentile(ms, 0.5), percentile(ms, 0.95)
        ratio = f"x{p50 / percentile(plain, 0.5):.2f}, x{p95 / percentile(plain, 0.95):.2f}"
        print(f"| {way} | {p50:.1f} / {p95:.1f} | {ratio} |")


if __name__ == "__main__":
    main()
