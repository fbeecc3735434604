"""Several vaults, one service: what a search over two vaults costs (issue 46, point 8), a part of
`make bench` (`--only vaults`).

    python -m scripts.measure.bench.suite --only vaults [--compare-with /tmp/before]
    python -m scripts.measure.bench.vaults [--compare-with /tmp/before] [--vault-queries N] [--vault-rounds N]

The 13,410-note Zettelkasten beside LoCoMo dev (embedded defaults: qdrant-edge, MiniLM on onnxruntime), each
in `python -m backend serve` as people run it: one service per vault alone, and one service with both
(VAULTS). The questions: as many drawn from the Zettelkasten's own words as LoCoMo dev's first questions,
each asked of every service in turn, one at a time, `rounds` times over (the machine's speed drifts: a
question is asked of every service within a second, so a drift weighs on all alike). Three tables, each of
its own rounds, so that every service answers once at each step (both vaults asked, beside each vault's own
service; the service of both asked one vault, beside that vault's): a service asked under several labels at
each step answers them back to back, warm from the first, and looks faster than it is. Each figure is the
median of the rounds' p50s; the cost of the second vault is also given as each round's own ratio. Beside
them, each vault's own service asked at once (two more services, over copies of the indexes), the answer
when both are back: what searching each vault in a process of its own would cost at best.
Memory: each service's resident set once its searches are warm (/proc/<pid>/status, VmRSS): two vaults'
service against one vault's says what the second vault costs. `--compare-with`: the code before, its
services over copies of today's indexes of the Zettelkasten alone and of both, in the same rounds (each
round's ratio of the code before beside today's: the machine's drift between two runs is larger than what a
change moves).
"""

from __future__ import annotations

import argparse
import errno
import os
import random
import shutil
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

from backend.infrastructure.eval_files import read_queries
from scripts.measure.bench.parts import run_alone
from scripts.measure.common import drawn_questions, machine, percentile, rss_mb
from scripts.measure.service import REPO, ServiceProcess

DATA = Path("data/bench-vaults")  # kept between runs: the indexes are built once
BOTH = "both: both asked"
# each vault's own service asked at once, the answer when both are back: what a vault searched in a process
# of its own would cost at best (no front process, no merge; each service embeds the question itself)
APART = "each vault's own service, asked at once"
SEED = 46


def _took(client: httpx.Client, question: str, vaults: list[str] | None) -> float:
    body: dict[str, object] = {"query": question, "top_k": 10}
    if vaults is not None:
        body["vaults"] = vaults
    started = time.perf_counter()
    client.post("/search", json=body).raise_for_status()
    return (time.perf_counter() - started) * 1000


def _took_apart(clients: dict[str, httpx.Client], question: str, pool: ThreadPoolExecutor) -> float:
    """LoCoMo dev's own service asked from `pool`'s thread (started once, as a front process's would be)
    while the Zettelkasten's is asked here, until both have answered (services of their own over copies of
    the indexes: the services asked alone are not asked twice a step); either one's error raised."""
    started = time.perf_counter()
    other = pool.submit(_took, clients["locomo-apart"], question, None)
    _took(clients["zk-apart"], question, None)
    other.result()
    return (time.perf_counter() - started) * 1000


def _round(
    clients: dict[str, httpx.Client],
    asked: list[tuple[str, str, list[str] | None]],
    questions: list[str],
    pool: ThreadPoolExecutor,
) -> dict[str, float]:
    """Each label's p50 over one round, every label asking every question once: at each step every label
    asks in turn (the first to ask moving on by one each step), so the machine's drift over a round
    (seconds) weighs on all alike. Each label is a stride apart in the questions: a service asked under
    several labels never meets one question twice within its last queries (a service keeps the vectors of
    its last 16 query texts, which would spare the later labels the model)."""
    took: dict[str, list[float]] = {label: [] for label, _, _ in asked}
    stride = len(questions) // len(asked)
    for step in range(len(questions)):
        for shift in range(len(asked)):
            at = (step + shift) % len(asked)
            label, key, vaults = asked[at]
            question = questions[(step + at * stride) % len(questions)]
            if key == "apart":
                took[label].append(_took_apart(clients, question, pool))
            else:
                took[label].append(_took(clients[key], question, vaults))
    return {label: percentile(times, 0.5) for label, times in took.items()}


def bench_vaults(args: argparse.Namespace, corpora: Path) -> list[str]:
    zk, locomo = (corpora / "zettelkasten" / "vault").resolve(), (corpora / "locomo-dev" / "vault").resolve()
    count = args.vault_queries
    questions = drawn_questions(sorted(zk.rglob("*.md")), count, random.Random(SEED))
    questions += [q.text for q in read_queries(corpora / "locomo-dev" / "queries-dev.jsonl")[:count]]
    env = {"EMBEDDING_PROVIDER": "onnx", "WATCH": "false"}
    services: dict[str, ServiceProcess] = {}
    # (label, service, vaults asked), in phases of their own rounds where each service is asked once a step:
    # a service asked under several labels at each step answered them back to back, warm from the first
    # (the service of both asked three times a step searched both vaults in 17.2 ms p50, asked once 17.6 ms,
    # in the same run: ×1.33 against ×1.36 the Zettelkasten alone)
    phases = [
        [
            ("Zettelkasten alone", "zk", None),
            ("LoCoMo dev alone", "locomo", None),
            (BOTH, "both", None),
            (APART, "apart", None),
        ],
        [("Zettelkasten alone", "zk", None), ("both: the Zettelkasten asked", "both", ["zk"])],
        [("LoCoMo dev alone", "locomo", None), ("both: LoCoMo dev asked", "both", ["locomo"])],
    ]
    started: list[ServiceProcess] = []
    try:

        def start(key: str, vault: Path | None, extra: dict[str, str], repo: Path = REPO) -> None:
            service = ServiceProcess(vault, (DATA / key).resolve(), env={**env, **extra}, repo=repo)
            started.append(service)
            services[key] = service
            # one after another: the shared embedding cache gives each later index what an earlier one
            # embedded (started at once, all three embedded the Zettelkasten: 40 minutes under load)
            service.wait_idle(timeout=3600)

        both_vaults = {"VAULTS": f"zk={zk},locomo={locomo}"}
        opened: dict[str, tuple[Path | None, dict[str, str]]] = {
            "zk": (zk, {}),
            "locomo": (locomo, {}),
            "both": (None, both_vaults),
        }
        for key, (vault, extra) in opened.items():
            start(key, vault, extra)
        # a second service cannot open the same store: each vault's service asked at once beside the others
        # (APART), and the code before, read copies of today's indexes, measured over the same points without
        # indexing anew: copied with their services stopped and their files' holes kept, then opened afresh
        # alike. A plain copy writes out the zeros of the store's sparse files (LoCoMo's: 38 MB on disk,
        # 745 MB copied), and the same code searched it 5-7% slower
        copies = [("zk", "zk-apart"), ("locomo", "locomo-apart")]
        if args.compare_with is not None:
            copies += [("zk", "before"), ("both", "before-both")]
        copied = list(dict.fromkeys(key for key, _ in copies))
        for key in copied:
            services[key].stop()
        for key, copy in copies:
            shutil.rmtree(DATA / copy, ignore_errors=True)
            shutil.copytree(DATA / key, DATA / copy, copy_function=sparse_copy)
        for key in copied:
            start(key, *opened[key])
        start("zk-apart", zk, {})
        start("locomo-apart", locomo, {})
        if args.compare_with is not None:
            code_before = args.compare_with.resolve()
            start("before", zk, {}, repo=code_before)
            start("before-both", None, both_vaults, repo=code_before)
            phases[0].insert(0, ("Zettelkasten alone, the code before", "before", None))
            phases[0].append((f"{BOTH}, the code before", "before-both", None))
        clients = {key: httpx.Client(base_url=s.url, timeout=120) for key, s in services.items()}
        for client in clients.values():  # warm: the model loaded, the store's pages read
            for question in questions[:20]:
                _took(client, question, None)
        p50s: list[dict[str, list[float]]] = [{label: [] for label, _, _ in asked} for asked in phases]
        with ThreadPoolExecutor(max_workers=1) as pool:
            for _ in range(args.vault_rounds):
                for asked, phase in zip(phases, p50s, strict=True):
                    for label, p50 in _round(clients, asked, questions, pool).items():
                        phase[label].append(p50)
        memory = {key: rss_mb(service.process.pid) for key, service in services.items()}
        for client in clients.values():
            client.close()
    finally:
        for service in started:
            service.stop()
    # each round's own ratio: the rounds' p50s move together with the machine's speed, their ratio less
    ratios = _ratios(p50s[0], BOTH, "Zettelkasten alone")
    ratios_before = _ratios(p50s[0], f"{BOTH}, the code before", "Zettelkasten alone, the code before")
    ratios_apart = _ratios(p50s[0], APART, "Zettelkasten alone")
    rows = [
        "## Several vaults, one service",
        "",
        f"- machine: {machine()}",
        f"- data: the Zettelkasten ({zk}) beside LoCoMo dev, {len(questions)} questions ({count} drawn from "
        f"the Zettelkasten's words, LoCoMo dev's first {count}), hybrid, top_k 10, one at a time; "
        f"{args.vault_rounds} rounds of each table's services, each question asked of every one in turn",
        f"- both vaults asked against the Zettelkasten alone, each round's own ratio: {_spread(ratios)}",
        *([f"- the code before, the same way: {_spread(ratios_before)}"] if ratios_before else []),
        f"- each vault's own service asked at once (a process a vault, at best), the same way: "
        f"{_spread(ratios_apart)}",
    ]
    for asked, phase in zip(phases, p50s, strict=True):
        against = asked[0][0] if asked[0][1] != "before" else asked[1][0]
        one = statistics.median(phase[against])
        rows += [
            "",
            f"| service, vaults asked | p50 (median of the rounds) | against {against} |",
            "|---|---|---|",
        ]
        for label, _, _ in asked:
            median = statistics.median(phase[label])
            rows.append(
                f"| {label} | {median:.1f} ms ({min(phase[label]):.1f}-{max(phase[label]):.1f}) | "
                f"×{median / one:.2f} |"
            )
    rows += [
        "",
        "| service | resident memory |",
        "|---|---|",
        *(f"| {key} | {mb:,.0f} MB |" for key, mb in memory.items()),
        "",
        f"The second vault in one service: {memory['both'] - memory['zk']:+,.0f} MB beside the Zettelkasten "
        f"alone (LoCoMo dev alone in a service of its own: {memory['locomo']:,.0f} MB, its model included).",
        "",
    ]
    return rows


def sparse_copy(source: str, target: str) -> str:
    """`source` copied to `target` with its holes kept: only the ranges holding data are written (SEEK_DATA,
    SEEK_HOLE), the rest left holes as in the source."""
    with open(source, "rb", buffering=0) as read, open(target, "wb", buffering=0) as write:
        into, out = read.fileno(), write.fileno()
        size = os.fstat(into).st_size
        at = 0
        while at < size:
            try:
                start = os.lseek(into, at, os.SEEK_DATA)
            except OSError as exc:
                if exc.errno != errno.ENXIO:
                    raise
                break  # nothing but a hole is left
            end = os.lseek(into, start, os.SEEK_HOLE)
            while start < end:
                block = os.pread(into, min(end - start, 1 << 20), start)
                if not block:
                    break
                os.pwrite(out, block, start)
                start += len(block)
            at = end
        os.ftruncate(out, size)
    shutil.copystat(source, target)
    return target


def _spread(ratios: list[float]) -> str:
    """Rounds' ratios as the report gives them: their median, then each round's."""
    return f"median ×{statistics.median(ratios):.2f} (rounds: {', '.join(f'×{r:.2f}' for r in ratios)})"


def _ratios(p50s: dict[str, list[float]], label: str, against: str) -> list[float]:
    """Each round's own ratio of `label`'s p50 to `against`'s (none when either was not asked)."""
    if label not in p50s or against not in p50s:
        return []
    return [b / z for b, z in zip(p50s[label], p50s[against], strict=True)]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--vault-queries", type=int, default=100, help="vaults: questions of each vault")
    ap.add_argument("--vault-rounds", type=int, default=3, help="vaults: rounds over every service")


def main(argv: list[str] | None = None) -> int:
    return run_alone(bench_vaults, __doc__, argv, add_arguments)


if __name__ == "__main__":
    raise SystemExit(main())
