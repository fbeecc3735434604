"""`make bench` parts for first starts and growing vaults (issue 28), each measured on the service as users
run it (`python -m backend serve` in its own process, polled over HTTP on loopback):

* first-index: seconds from the start of the process to its first keyword answer, to every note searchable
  by keyword (the first pass's keyword pass is done: its phase moves on to `embedding`) and, with
  `--until-dense`, to every note dense; and the longest time the progress figures of /index/status stood
  still. The embedded default with the real embedder, on the 13k-note Zettelkasten and on a 29-note vault
  (28 Zettelkasten notes) that holds one note of 2 MB.
* large-vaults: the Zettelkasten copied 1, 2 and 4 times into one vault (13k, 27k, 53k notes),
  keyword-only: time to index it, `GET /index/status` p50, keyword search p50/p99/max (three words of the
  first notes each, top_k 10), and the service's RSS once idle.

`--compare-with DIR` runs the same measurements, in the same run, with the checkout at DIR (the code before
a change, e.g. `git worktree add /tmp/base <commit>`), one after the other per vault, so the machine's drift
and load weigh on both alike.
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

from scripts.measure.bench.parts import code_versions, first_start_service, keyword_answers, prepare_graph
from scripts.measure.common import drawn_questions, log, percentile, rss_mb
from scripts.measure.service import REPO, ServiceProcess

POLL_SECONDS = 0.25  # how often the first-index run asks for status and searches
HUGE_NOTE_BYTES = 2_000_000
FIRST_INDEX_INTRO = (
    "`scripts/measure/bench/growth.py`: `python -m backend serve` on the vault with an empty index (the "
    "embedded default, the real embedder; its graph built beforehand), polled every {poll:g} s. Seconds from "
    "the start of the process to the first keyword answer, to every note searchable by keyword (the keyword "
    "pass done), to every note dense{dense}, and the longest time /index/status showed the same progress "
    "figures. Median of {repeats} run(s)."
)
PAIRED_INTRO = (
    "The same {queries} searches in-process (`SearchService.search`, related notes included), every size's "
    "index served in one process by the code that built it, each question asked of all of them in turn, "
    "{rounds} rounds: every index sees the same load, so the ratio holds where HTTP runs one after another "
    "move with the machine's load. Milliseconds, the median of the rounds' own p50 and p99:"
)
PAUSES_INTRO = (
    "The collector's full collections (of its oldest generation) during the same {searches} searches on "
    "the {copies}x index, in-process (`SearchService.search`), with the heap as loaded and once settled "
    "as `serve` settles it after loading and after each job (gc.collect, then gc.freeze):"
)
LARGE_VAULTS_INTRO = (
    "`scripts/measure/bench/growth.py`: the Zettelkasten copied 1, 2 and 4 times into one vault (copy1 ..), "
    "`python -m backend serve` keyword-only, indexed from empty, then one client on loopback: "
    "`GET /index/status` {status} times, then {rounds} rounds of the same {queries} keyword searches of "
    "three words (top_k 10). Milliseconds over HTTP: p50 and p99 are the median of the rounds' own, "
    "p99.9 and max are over every search; RSS of the service once idle."
)


@dataclass(frozen=True, slots=True)
class FirstStart:
    first_answer: float | None  # seconds from the start of the process
    keyword_all: float | None
    dense: float | None
    stall: float  # longest time /index/status showed the same progress figures
    notes: int


@dataclass(frozen=True, slots=True)
class VaultScale:
    notes: int
    index_seconds: float
    status_ms: list[float]
    rounds: list[list[float]]  # search latencies, per round of the same queries
    rss_mb: float

    def search(self, q: float) -> float:
        """The median over rounds of each round's percentile `q`."""
        return statistics.median(percentile(round_ms, q) for round_ms in self.rounds)

    def search_all(self, q: float) -> float:
        """The percentile `q` of every search of every round (a pause once per ~1000 searches shows)."""
        return percentile([ms for round_ms in self.rounds for ms in round_ms], q)


def first_start(
    vault: Path, repo: Path, models: Path, query: str, *, until_dense: bool, cap: float
) -> FirstStart:
    with first_start_service(vault, repo, models) as (service, client):
        first_answer = keyword_all = dense = None
        figures: tuple | None = None
        changed_at, stall, notes = 0.0, 0.0, 0
        while True:
            now = time.monotonic() - service.started
            service.assert_alive()
            if now > cap:
                break
            try:
                status = client.get("/index/status").json()
                if first_answer is None and keyword_answers(client, query):
                    first_answer = time.monotonic() - service.started
            except httpx.HTTPError:  # not listening yet
                time.sleep(POLL_SECONDS)
                continue
            job = status.get("job")
            if job is not None:
                shown = (job["phase"], job["done"], job.get("detail"), status["indexed_notes"])
                shown += (status["dense_pending"],)
                if shown != figures:
                    if figures is not None:
                        stall = max(stall, now - changed_at)
                    figures, changed_at = shown, now
                finished = job["finished_at"] is not None
                if keyword_all is None and (job["phase"] == "embedding" or finished):
                    keyword_all, notes = now, status["indexed_notes"]
                if finished:
                    dense = now
                    break
            if keyword_all is not None and first_answer is not None and not until_dense:
                break
            time.sleep(POLL_SECONDS)
        stall = max(stall, (time.monotonic() - service.started) - changed_at) if figures else stall
    return FirstStart(first_answer, keyword_all, dense, stall, notes)


def huge_note_vault(source: Path, target: Path) -> Path:
    """28 notes of `source` and one Markdown note of 2 MB made of their words."""
    notes = sorted(p for p in source.glob("*.md"))[:28]
    target.mkdir(parents=True)
    words: list[str] = []
    for note in notes:
        shutil.copy2(note, target / note.name)
        words += note.read_text(encoding="utf-8", errors="replace").split()
    rng = random.Random(28)
    parts, size, day = ["# Big log\n"], 0, 0
    while size < HUGE_NOTE_BYTES:
        day += 1
        paragraph = " ".join(rng.choice(words) for _ in range(rng.randint(30, 120)))
        text = f"\n## Day {day}\n\n{paragraph}\n" if day % 10 == 0 else f"\n{paragraph}\n"
        parts.append(text)
        size += len(text)
    (target / "Big log.md").write_text("".join(parts), encoding="utf-8")
    return target


def copied_vault(source: Path, copies: int, target: Path) -> Path:
    """`source` copied `copies` times into folders copy1 ... copyN of one vault."""
    for n in range(1, copies + 1):
        shutil.copytree(source, target / f"copy{n}", symlinks=True)
    return target


def scale_run(
    vault: Path, data: Path, repo: Path, queries: list[str], status_calls: int, rounds: int
) -> VaultScale:
    env = {"WATCH": "false", "EMBEDDING_PROVIDER": "none", "LOG_LEVEL": "WARNING"}
    with ServiceProcess(vault, data, env=env, repo=repo) as service:
        status = service.wait_idle(timeout=3600)
        index_seconds = time.monotonic() - service.started
        with httpx.Client(base_url=service.url, timeout=60) as client:
            status_ms = _timed(lambda: client.get("/index/status").raise_for_status(), status_calls)
            client.post("/search", json={"query": "warm up", "mode": "keyword"})
            search_rounds = [
                [
                    _timed(
                        lambda q=q: client.post(  # type: ignore[misc]
                            "/search", json={"query": q, "mode": "keyword", "top_k": 10}
                        ).raise_for_status(),
                        1,
                    )[0]
                    for q in queries
                ]
                for _ in range(rounds)
            ]
        rss = rss_mb(service.process.pid)
    return VaultScale(status["indexed_notes"], index_seconds, status_ms, search_rounds, rss)


def paired_searches(
    tmp: Path, label: str, repo: Path, copies: list[int], queries: list[str], rounds: int
) -> dict[str, dict[str, float]]:
    """Every size's index (as `label`'s code built it) served in one process by that code, each question
    asked of all in turn (scripts/measure/bench/paired.py): {"1x": {"p50": ms, "p99": ms}, ...}."""
    asked = tmp / "paired-queries.txt"
    asked.write_text("\n".join(queries), encoding="utf-8")
    indexes = [f"{n}x={tmp / f'vault-{n}x'}:{tmp / f'data-{n}x-{label}'}" for n in copies]
    command = [sys.executable, "-m", "scripts.measure.bench.paired", "--repo", str(repo)]
    command += ["--queries", str(asked)]
    done = subprocess.run(
        [*command, "--rounds", str(rounds), *indexes], cwd=REPO, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"scripts.measure.bench.paired failed ({done.returncode}):\n{done.stderr[-4000:]}")
    found: dict[str, dict[str, float]] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def collector_pauses(vault: Path, data: Path, queries: list[str]) -> dict[str, tuple[int, float, float]]:
    """In this process, on the index at `data`: collections of the collector's oldest generation during the
    searches, as (count, longest ms, total ms), with the heap as it is after loading and once settled as
    `serve` settles it (backend/infrastructure/heap.py)."""
    from backend.bootstrap import build_services
    from backend.config import load_settings
    from backend.domain.models import SearchMode
    from backend.infrastructure.heap import settle_heap

    pauses: list[float] = []
    started = [0.0]

    def timed(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        elif info["generation"] == 2:
            pauses.append((time.perf_counter() - started[0]) * 1000)

    settings = load_settings(vault_path=vault, data_dir=data, embedding_provider="none", watch=False)
    services = build_services(settings)
    found: dict[str, tuple[int, float, float]] = {}
    gc.callbacks.append(timed)
    try:
        services.supervisor.open(start_indexing=False)
        for heap in ("as loaded", "settled"):
            if heap == "settled":
                settle_heap()
            pauses.clear()
            for query in queries:
                services.search.search(query, top_k=10, mode=SearchMode.KEYWORD, include_related=True)
            found[heap] = (len(pauses), max(pauses, default=0.0), sum(pauses))
    finally:
        gc.callbacks.remove(timed)
        gc.unfreeze()
        services.close()
    return found


def _timed(call: Callable[[], object], times: int) -> list[float]:
    found = []
    for _ in range(times):
        started = time.perf_counter()
        call()
        found.append((time.perf_counter() - started) * 1000)
    return found


def _seconds(value: float | None) -> str:
    return f"{value:.1f}" if value is not None else "n/a"


def bench_first_index(args: argparse.Namespace, corpora: Path) -> list[str]:
    zettel = corpora / "zettelkasten" / "vault"
    models = args.models_cache
    models.mkdir(parents=True, exist_ok=True)
    prepare_graph(models)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        huge = huge_note_vault(zettel, Path(tmp) / "huge")
        # the small vault is always followed until dense: its large note is embedded last
        vaults = [("Zettelkasten", zettel, args.until_dense), ("29 notes, one of 2 MB", huge, True)]
        for name, vault, until_dense in vaults:
            query = sorted(vault.glob("*.md"))[0].stem
            for _ in range(args.repeats):
                for label, repo in code_versions(args):
                    run = first_start(
                        vault, repo, models, query, until_dense=until_dense, cap=args.first_index_cap
                    )
                    log(f"first index, {name}, {label}: {run}")
                    rows.append((name, label, run))
    dense = "" if args.until_dense else " (not waited for on the Zettelkasten: n/a)"
    intro = FIRST_INDEX_INTRO.format(poll=POLL_SECONDS, dense=dense, repeats=args.repeats)
    columns = ["vault", "code", "notes", "first keyword answer", "all keyword-searchable", "all dense"]
    columns += ["progress stood still"]
    lines = _head("## First start: keyword-first for every vault", intro, args, columns)
    for name, _, _ in vaults:
        for label, _ in code_versions(args):
            runs = [run for vault, code, run in rows if (vault, code) == (name, label)]
            lines.append(
                f"| {name} | {label} | {runs[0].notes} | {_median(r.first_answer for r in runs)} s "
                f"| {_median(r.keyword_all for r in runs)} s | {_median(r.dense for r in runs)} s "
                f"| {_median(r.stall for r in runs)} s |"
            )
    return [*lines, ""]


def _head(title: str, intro: str, args: argparse.Namespace, columns: list[str]) -> list[str]:
    """A part's section up to its table's rule: the title, what was measured, against what, the columns."""
    before = ""
    if args.compare_with is not None:
        before = f"'before' is the checkout at {args.compare_with}, run right before 'now' on the same vault."
    return [
        title,
        "",
        f"{intro} {before}",
        "",
        "| " + " | ".join(columns) + " |",
        "|---" * len(columns) + "|",
    ]


def _median(values: object) -> str:
    known = [v for v in values if v is not None]  # type: ignore[attr-defined]
    return _seconds(statistics.median(known)) if known else "n/a"


def bench_large_vaults(args: argparse.Namespace, corpora: Path) -> list[str]:
    zettel = corpora / "zettelkasten" / "vault"
    queries = drawn_questions(sorted(zettel.glob("*.md"))[:500], args.growth_queries, random.Random(11))
    rows: list[tuple[int, str, VaultScale]] = []
    pauses: dict[str, tuple[int, float, float]] = {}
    paired: dict[str, dict[str, dict[str, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:  # every vault and index kept for the paired measurement
        for copies in args.copies:
            vault = copied_vault(zettel, copies, Path(tmp) / f"vault-{copies}x")
            for label, repo in code_versions(args):
                data = Path(tmp) / f"data-{copies}x-{label}"
                run = scale_run(vault, data, repo, queries, args.status_calls, args.search_rounds)
                log(
                    f"large vaults, {copies}x, {label}: {run.notes} notes, status p50 "
                    f"{statistics.median(run.status_ms):.1f} ms, search p99 {run.search(0.99):.1f}"
                )
                rows.append((copies, label, run))
            if copies == max(args.copies):  # the largest vault, as this code indexed it
                now_data = Path(tmp) / f"data-{copies}x-now"
                pauses = collector_pauses(vault, now_data, queries * args.search_rounds)
        for label, repo in code_versions(args):
            paired[label] = paired_searches(Path(tmp), label, repo, args.copies, queries, args.search_rounds)
            log(f"large vaults, paired, {label}: {paired[label]}")
    intro = LARGE_VAULTS_INTRO.format(
        status=args.status_calls, queries=len(queries), rounds=args.search_rounds
    )
    columns = ["vault", "code", "notes", "indexed in", "status p50", "search p50", "search p99"]
    columns += ["p99.9 (all)", "max (all)", "RSS"]
    lines = _head("## Flat as the vault grows (keyword-only)", intro, args, columns)
    for copies, label, run in rows:
        lines.append(
            f"| {copies}x | {label} | {run.notes:,} | {run.index_seconds:.0f} s "
            f"| {statistics.median(run.status_ms):.1f} | {run.search(0.5):.1f} | {run.search(0.99):.1f} "
            f"| {run.search_all(0.999):.1f} | {run.search_all(1.0):.1f} | {run.rss_mb:.0f} MB |"
        )
    lines.append("")
    for label, _ in code_versions(args):
        mine = {copies: run for copies, code, run in rows if code == label}
        if 1 in mine and 4 in mine:
            lines.append(
                f"- {label}: 4x against 1x: status p50 x{_ratio(mine, 'status', 0.5):.2f}, search p99 "
                f"x{_ratio(mine, 'search', 0.99):.2f}"
            )
    lines += ["", PAIRED_INTRO.format(queries=len(queries), rounds=args.search_rounds), ""]
    scales = [f"{copies}x" for copies in args.copies]
    lines += [
        "| code | " + " | ".join(f"{scale} p50 / p99" for scale in scales) + " | p99 4x against 1x |",
        "|---|" + "---|" * len(scales) + "---|",
    ]
    for label, found in paired.items():
        cells = " | ".join(f"{found[scale]['p50']:.2f} / {found[scale]['p99']:.2f}" for scale in scales)
        ratio = found["4x"]["p99"] / found["1x"]["p99"] if {"1x", "4x"} <= found.keys() else float("nan")
        lines.append(f"| {label} | {cells} | x{ratio:.2f} |")
    lines += [
        "",
        PAUSES_INTRO.format(copies=max(args.copies), searches=len(queries) * args.search_rounds),
        "",
    ]
    lines += ["| heap | collections | longest | in all |", "|---|---|---|---|"]
    for heap, (count, longest, total) in pauses.items():
        lines.append(f"| {heap} | {count} | {longest:.0f} ms | {total:.0f} ms |")
    return [*lines, ""]


def _ratio(runs: dict[int, VaultScale], what: str, q: float) -> float:
    def value(run: VaultScale) -> float:
        return percentile(run.status_ms, q) if what == "status" else run.search(q)

    return value(runs[4]) / value(runs[1])


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--compare-with", type=Path, help="a checkout of the code before, measured alongside")
    ap.add_argument("--until-dense", action="store_true", help="first-index: wait until every note is dense")
    ap.add_argument("--first-index-cap", type=float, default=900.0, help="first-index: seconds at most a run")
    ap.add_argument("--copies", type=int, nargs="+", default=[1, 2, 4], help="large-vaults: copies of it")
