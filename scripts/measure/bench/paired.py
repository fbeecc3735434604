"""Search latency of several indexes served in one process, each question asked of every index in turn.

HTTP percentiles of one index after another move by 20% with this machine's load; asked in turn, every index
sees the same load, so their ratio holds (a p99 ratio in separate runs varied x1.04-x1.29 on one commit).
Run by growth.py (a part of `make bench`) for each checkout it compares, with that checkout's code:

    python -m scripts.measure.bench.paired --repo DIR --queries FILE --rounds 3 1x=VAULT:DATA 4x=VAULT:DATA

prints {"1x": {"p50": ms, "p99": ms}, ...} as JSON: each the median over the rounds of that round's own.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from scripts.measure.common import percentile

WARM_UP = 100  # questions asked of every index before timing: caches and lazy imports


def measure(
    indexes: dict[str, tuple[Path, Path]], queries: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    # imported here: from the checkout given by --repo, which main() puts first on the path
    from backend.bootstrap import build_services
    from backend.config import load_settings
    from backend.domain.models import SearchMode

    services: dict[str, Any] = {}
    try:
        for label, (vault, data) in indexes.items():
            settings = load_settings(vault_path=vault, data_dir=data, embedding_provider="none", watch=False)
            services[label] = build_services(settings)
            services[label].supervisor.open(start_indexing=False)
        gc.collect()  # the heap settled as `serve` settles it, the same for every checkout
        gc.freeze()

        def ask(label: str, query: str) -> float:
            started = time.perf_counter()
            services[label].search.search(query, top_k=10, mode=SearchMode.KEYWORD, include_related=True)
            return (time.perf_counter() - started) * 1000

        labels = list(services)
        for query in queries[:WARM_UP]:
            for label in labels:
                ask(label, query)
        per_round: dict[str, list[tuple[float, float]]] = {label: [] for label in labels}
        for round_number in range(rounds):
            times: dict[str, list[float]] = {label: [] for label in labels}
            for i, query in enumerate(queries):
                shift = (i + round_number) % len(labels)  # who goes first changes with every question
                for label in labels[shift:] + labels[:shift]:
                    times[label].append(ask(label, query))
            for label in labels:
                per_round[label].append((percentile(times[label], 0.5), percentile(times[label], 0.99)))
        return {
            label: {
                "p50": statistics.median(p50 for p50, _ in found),
                "p99": statistics.median(p99 for _, p99 in found),
            }
            for label, found in per_round.items()
        }
    finally:
        for opened in services.values():
            opened.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", type=Path, required=True, help="the checkout whose code serves the indexes")
    ap.add_argument("--queries", type=Path, required=True, help="one question a line")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("indexes", nargs="+", help="LABEL=VAULT:DATA, indexed beforehand by that checkout")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(args.repo.resolve()))
    indexes: dict[str, tuple[Path, Path]] = {}
    for given in args.indexes:
        label, _, paths = given.partition("=")
        vault, _, data = paths.partition(":")
        indexes[label] = (Path(vault), Path(data))
    queries = args.queries.read_text(encoding="utf-8").splitlines()
    print(json.dumps(measure(indexes, queries, args.rounds)))


if __name__ == "__main__":
    main()
