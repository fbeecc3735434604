"""Where a search's time goes, and how fast it answers over HTTP: this checkout against the code before a
change, in one run (`make bench-speed BEFORE=/path/to/checkout`, a part of `make bench`).

For LoCoMo dev (272 notes) and the Zettelkasten (13,410 notes): each checkout serves its own copy of the index
(`<checkout>/data/bench-locomo`, `<checkout>/data/bench-zk`; built by the service the first time, about 10
minutes for the Zettelkasten fully dense) on a loopback port, measured once the index is whole and the
start-up warm-up has ended; one client asks both in blocks of `BLOCK` questions, each checkout answering a
block in turn (which goes first alternating), `POST /search` top_k 10, keyword then hybrid: httpx every other
pair of blocks, the standard library's http.client the rest (the client's own share of the figures differs by
~0.5 ms). Each answer's Server-Timing
header says its stages (backend/application/search/stage_clock.py): the per-stage table is this checkout's;
the rest of the client's time ("HTTP and framework", by client) is what the client, FastAPI, the middleware,
the thread hop, JSON and loopback cost.

    python -m scripts.measure.bench.speed --before /work/before-37 -n 300
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from backend.application.search.stage_clock import SERIALISATION, STAGES
from backend.infrastructure.eval_files import read_queries
from backend.infrastructure.index_catalog.edge import EdgeIndexCatalog
from scripts.measure.common import drawn_questions, percentile
from scripts.measure.common import server_timing as read_server_timing
from scripts.measure.service import REPO, ServiceProcess

CORPORA = REPO.parent / "shared" / "corpora"
WARM_UP = 20  # questions asked of every service before timing: caches, lazy imports
MODES = ("keyword", "hybrid")
IN_SERVICE = "search in the service"
OVER_HTTP = "HTTP and framework"
# The clients asking, a question each in turn: httpx (the figures of every earlier run) and the standard
# library's http.client, which spends ~0.5 ms less of each answer in Python on the client's side.
CLIENT_KINDS = ("httpx", "http.client")
# Questions each checkout answers in a row before the other answers them. Asked question by question in turn,
# every answer of either checkout cost ~1 ms more on this machine (LoCoMo dev keyword 3.2-3.5 against 2.2-2.3
# ms, the Zettelkasten 4.4-5.1 against 3.4-3.8): each request found the caches filled by the other server
# process, as no service running alone does. A block of 10 takes ~50 ms: drift is still shared.
BLOCK = 10


@dataclass
class Timings:
    """One service's answers to one mode's questions: the client's milliseconds (all, and by kind of
    client), and each stage's."""

    client: list[float] = field(default_factory=list)
    by_client: dict[str, list[float]] = field(default_factory=dict)
    stages: dict[str, list[float]] = field(default_factory=dict)

    def add(self, client_ms: float, server_timing: str, kind: str = CLIENT_KINDS[0]) -> None:
        self.client.append(client_ms)
        self.by_client.setdefault(kind, []).append(client_ms)
        spans = read_server_timing(server_timing)
        found = {stage: spans.get(stage, 0.0) for stage in STAGES if stage in spans}
        if found:  # a checkout that times its stages: a stage it skipped this time counts 0
            for stage in STAGES:
                self.stages.setdefault(stage, []).append(found.get(stage, 0.0))
            searched = spans.get("total", 0.0) + found.get(SERIALISATION, 0.0)
            self.stages.setdefault(IN_SERVICE, []).append(searched)
            self.stages.setdefault(f"{OVER_HTTP} ({kind})", []).append(client_ms - searched)


@dataclass(frozen=True)
class Vault:
    name: str
    path: Path
    data: str  # the index folder's name under each checkout's data/
    questions: list[str]


def vaults(corpora: Path, count: int) -> list[Vault]:
    rng = random.Random(11)
    locomo = [q.text for q in read_queries(corpora / "locomo-dev" / "queries-dev.jsonl")]
    rng.shuffle(locomo)
    zettel = corpora / "zettelkasten" / "vault"
    # half three words drawn from the notes, half LoCoMo's plain questions (as compare_search.py asks)
    mixed = (
        drawn_questions(sorted(zettel.rglob("*.md"))[:500], count // 2, rng) + locomo[: count - count // 2]
    )
    rng.shuffle(mixed)
    return [
        Vault("LoCoMo dev (272 notes)", corpora / "locomo-dev" / "vault", "bench-locomo", locomo[:count]),
        Vault("Zettelkasten (13,410 notes)", zettel, "bench-zk", mixed),
    ]


def ask_in_turn(urls: dict[str, str], questions: list[str]) -> dict[str, dict[str, Timings]]:
    """{mode: {label: Timings}}: each question asked of every service, in blocks of `BLOCK` questions (each
    service answers the block in turn, the first one alternating), by one kind of client (`CLIENT_KINDS`, in
    turn: each kind asks every other pair of blocks, so that each asks each checkout first as often)."""
    clients = {label: {kind: Asker(kind, url) for kind in CLIENT_KINDS} for label, url in urls.items()}
    labels = list(clients)
    found: dict[str, dict[str, Timings]] = {}
    try:
        for mode in MODES:
            for query in questions[:WARM_UP]:
                for label in labels:
                    for asker in clients[label].values():
                        asker.ask(query, mode)
            found[mode] = {label: Timings() for label in labels}
            for i, start in enumerate(range(0, len(questions), BLOCK)):
                # every other pair of blocks: each kind of client asks each checkout first as often
                kind = CLIENT_KINDS[(i // len(labels)) % len(CLIENT_KINDS)]
                for label in labels[i % len(labels) :] + labels[: i % len(labels)]:
                    for query in questions[start : start + BLOCK]:
                        found[mode][label].add(*clients[label][kind].ask(query, mode), kind)
    finally:
        for askers in clients.values():
            for asker in askers.values():
                asker.close()
    return found


class Asker:
    """One kept-alive connection to a service, through httpx or the standard library's http.client."""

    def __init__(self, kind: str, url: str) -> None:
        self._httpx = httpx.Client(base_url=url, timeout=60) if kind == "httpx" else None
        address = urlsplit(url)
        self._plain = http.client.HTTPConnection(address.hostname or "127.0.0.1", address.port, timeout=60)

    def ask(self, query: str, mode: str) -> tuple[float, str]:
        """The client's milliseconds for one `POST /search` (its answer read whole), and its Server-Timing."""
        asked = {"query": query, "mode": mode, "top_k": 10}
        started = time.perf_counter()
        if self._httpx is not None:
            response = self._httpx.post("/search", json=asked)
            elapsed = (time.perf_counter() - started) * 1000
            response.raise_for_status()
            return elapsed, response.headers.get("server-timing", "")
        self._plain.request("POST", "/search", json.dumps(asked), {"Content-Type": "application/json"})
        answer = self._plain.getresponse()
        answer.read()
        elapsed = (time.perf_counter() - started) * 1000
        if answer.status != 200:
            raise RuntimeError(f"POST /search answered {answer.status}")
        return elapsed, answer.getheader("server-timing") or ""

    def close(self) -> None:
        if self._httpx is not None:
            self._httpx.close()
        self._plain.close()


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"{one:.2f} (5 min {five:.2f})"


def measure(vault: Vault, checkouts: dict[str, Path]) -> tuple[dict[str, dict[str, Timings]], str]:
    services = {
        label: ServiceProcess(vault.path, repo / "data" / vault.data, repo=repo)
        for label, repo in checkouts.items()
    }
    try:
        for service in services.values():
            service.wait_dense(warm=True)
        load_before = _load()
        found = ask_in_turn({label: s.url for label, s in services.items()}, vault.questions)
        return found, f"load {load_before} at the start, {_load()} at the end"
    finally:
        for service in services.values():
            service.stop()


def stage_table(results: dict[str, dict[str, dict[str, Timings]]], label: str) -> list[str]:
    names = list(results)
    head = "| stage | " + " | ".join(f"{name} {mode}" for name in names for mode in MODES) + " |"
    lines = [head, "|---|" + "---|" * (len(names) * len(MODES))]
    for stage in (*STAGES, IN_SERVICE, *(f"{OVER_HTTP} ({kind})" for kind in CLIENT_KINDS)):
        cells = []
        for name in names:
            for mode in MODES:
                values = results[name][mode][label].stages.get(stage, [])
                cells.append(
                    f"{percentile(values, 0.5):.2f} / {percentile(values, 0.95):.2f}" if values else "-"
                )
        if any(cell not in ("-", "0.00 / 0.00") for cell in cells):
            lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    return lines


def http_table(results: dict[str, dict[str, dict[str, Timings]]], loads: dict[str, str]) -> list[str]:
    labels = list(next(iter(next(iter(results.values())).values())))
    paired = "before" in labels
    head, rule = "| vault | mode |", "|---|---|"
    for kind in CLIENT_KINDS:
        head += "".join(f" {label}, {kind}: p50 / p95 ms |" for label in labels)
        head += " after / before p50, p95 |" if paired else ""
        rule += "---|" * (len(labels) + paired)
    lines = [head, rule]
    for name, modes in results.items():
        for mode, by_label in modes.items():
            cells = []
            for kind in CLIENT_KINDS:
                times = {label: t.by_client.get(kind, []) for label, t in by_label.items()}
                cells += [f"{percentile(ms, 0.5):.1f} / {percentile(ms, 0.95):.1f}" for ms in times.values()]
                if paired:
                    b, a = times["before"], times["after"]
                    p50, p95 = (percentile(a, q) / percentile(b, q) for q in (0.5, 0.95))
                    cells.append(f"x{p50:.2f}, x{p95:.2f}")
            lines.append(f"| {name} | {mode} | " + " | ".join(cells) + " |")
    lines += ["", *(f"- {name}: {load}" for name, load in loads.items())]
    return lines


# -- 8 clients at once, the watcher applying edits meanwhile -----------------------------------------------

CLIENTS = 8
EDIT_EVERY = 0.5  # seconds between two edits of a note by the writer


@dataclass
class Load:
    """What the clients of a concurrent run saw, by kind of request."""

    ms: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[int, int] = field(default_factory=dict)
    edits: int = 0
    seconds: float = 0.0
    lag: dict | None = None  # /index/status loop_lag after the run


def concurrent_run(repo: Path, vault: Path, data: Path, questions: list[str], seconds: float) -> Load:
    """CLIENTS threads for `seconds`, each asking in turn a keyword search, a hybrid one, another keyword one
    and a /context block; a writer appends a line to a note every EDIT_EVERY seconds (the watcher applies it);
    on copies of the vault and of the index, which is handed to the copy of the vault."""
    with tempfile.TemporaryDirectory(dir="/dev/shm" if Path("/dev/shm").is_dir() else None) as tmp:
        copy, index = Path(tmp) / "vault", Path(tmp) / "data"
        shutil.copytree(vault, copy, symlinks=True)  # copy2 keeps the times: nothing looks changed
        shutil.copytree(data, index, symlinks=True)
        EdgeIndexCatalog(index / "qdrant").record_vault_owner(str(copy.resolve()))
        notes = sorted(copy.rglob("*.md"))
        load = Load()
        lock = threading.Lock()
        with ServiceProcess(copy, index, repo=repo, env={"WATCH": "true"}) as service:
            service.wait_dense(warm=True)
            stop = time.monotonic() + seconds

            def client(number: int) -> None:
                asks = [
                    ("keyword", "/search"),
                    ("hybrid", "/search"),
                    ("keyword", "/search"),
                    ("context", "/context"),
                ]
                with httpx.Client(base_url=service.url, timeout=60) as http:
                    i = number
                    while time.monotonic() < stop:
                        kind, path = asks[i % len(asks)]
                        query = questions[i % len(questions)]
                        body = {"query": query, "max_chars": 2000} if kind == "context" else {
                            "query": query, "mode": kind, "top_k": 10}  # fmt: skip
                        started = time.perf_counter()
                        status = http.post(path, json=body).status_code
                        elapsed = (time.perf_counter() - started) * 1000
                        with lock:
                            load.ms.setdefault(kind, []).append(elapsed)
                            load.statuses[status] = load.statuses.get(status, 0) + 1
                        i += CLIENTS

            def writer() -> None:
                rng = random.Random(7)
                while time.monotonic() < stop:
                    note = rng.choice(notes)
                    with note.open("a", encoding="utf-8") as fh:
                        fh.write(f"\nEdited during the load test {load.edits}.\n")
                    load.edits += 1
                    time.sleep(EDIT_EVERY)

            started = time.monotonic()
            threads = [threading.Thread(target=client, args=(n,)) for n in range(CLIENTS)]
            threads.append(threading.Thread(target=writer))
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            load.seconds = time.monotonic() - started
            load.lag = service.get("/index/status").json().get("loop_lag")
        return load


def concurrency_table(runs: dict[str, Load], single: dict[str, dict[str, Timings]]) -> list[str]:
    lines = [
        "| checkout | searches/s (8 clients) | one client: searches/s | keyword p50 / p99 | hybrid p50 / p99 "
        "| /context p50 / p99 | 5xx | edits | loop lag p50 / p99 / max |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for label, load in runs.items():
        searches = len(load.ms.get("keyword", [])) + len(load.ms.get("hybrid", []))
        one = [*single["keyword"][label].client, *single["hybrid"][label].client]
        cells = [f"{searches / load.seconds:.0f}", f"{1000 * len(one) / sum(one):.0f}"]
        for kind in ("keyword", "hybrid", "context"):
            ms = load.ms.get(kind, [])
            cells.append(f"{percentile(ms, 0.5):.1f} / {percentile(ms, 0.99):.1f}" if ms else "-")
        errors = sum(n for status, n in load.statuses.items() if status >= 500)
        lag = load.lag or {}
        lagged = (
            f"{lag.get('p50_ms', 0):.2f} / {lag.get('p99_ms', 0):.2f} / {lag.get('max_ms', 0):.2f}"
            if lag
            else "n/a"
        )
        cells += [str(errors), str(load.edits), lagged]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def bench_speed(before: Path | None, count: int, corpora: Path = CORPORA, seconds: float = 30.0) -> list[str]:
    checkouts = {"before": before.resolve(), "after": REPO} if before is not None else {"after": REPO}
    results: dict[str, dict[str, dict[str, Timings]]] = {}
    loads: dict[str, str] = {}
    chosen = vaults(corpora, count)
    for vault in chosen:
        results[vault.name], loads[vault.name] = measure(vault, checkouts)
    zettel = chosen[-1]
    runs = {}
    for label, repo in checkouts.items():  # one after the other: each has the machine to itself
        runs[label] = concurrent_run(
            repo, zettel.path, repo / "data" / zettel.data, zettel.questions, seconds
        )
    load_now = _load()
    against = f" against `{before}` (the code before), both served at once" if before is not None else ""
    lines = ["## Where a search's time goes", ""]
    lines += [
        f"`scripts/measure/bench/speed.py`: this checkout{against}; {count} questions per vault and mode "
        f"asked over HTTP by one client, in blocks of {BLOCK} questions each checkout answers in turn, the "
        "first one alternating (`POST /search`, top_k 10, related notes included), once the index is whole "
        "and the start-up warm-up has ended; httpx asks every other pair of blocks, the standard library's "
        "http.client the rest (both keep the connection; each asks each checkout first as often). LoCoMo "
        "dev: its dev questions; Zettelkasten: half three words drawn from its notes, half LoCoMo's "
        "questions. Milliseconds.",
        "",
        "Per stage, p50 / p95 (this checkout, from each answer's Server-Timing header; a stage a search "
        "skipped counts 0; \"HTTP and framework\" is the client's time less the service's own, by client):",
        "",
        *stage_table(results, "after"),
        "",
        "Over HTTP as a client sees it:",
        "",
        *http_table(results, loads),
        "",
        f"{CLIENTS} clients at once on the Zettelkasten for {seconds:.0f} s (each asks in turn a keyword "
        "search, a hybrid one, a keyword one and a `/context` block), a writer appending a line to a note "
        f"every {EDIT_EVERY} s for the watcher to apply, on a temp copy of the vault and its index; each "
        "checkout alone on the machine. Milliseconds; searches/s counts both modes (one client: from the "
        "runs above). Loop lag: how late the service's event loop woke a task sleeping 50 ms, over the "
        "last minute (`/index/status` `loop_lag`; n/a for a checkout without the probe).",
        "",
        *concurrency_table(runs, results[zettel.name]),
        "",
        f"- load {load_now} at the end",
        "",
    ]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, help="a checkout of the code before the change")
    ap.add_argument("-n", type=int, default=300, help="questions per vault and mode")
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--seconds", type=float, default=30.0, help="of the concurrent run, per checkout")
    args = ap.parse_args()
    print("\n".join(bench_speed(args.before, args.n, args.corpora, args.seconds)))


if __name__ == "__main__":
    main()
