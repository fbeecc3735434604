"""Live-index benchmark: first index of a large vault (keyword-searchable, then fully dense), freshness from
save to searchable with the watcher, idle CPU with the watcher running, and a second full rebuild.

python -m scripts.measure.bench.live --vault ../shared/corpora/zettelkasten/vault [--provider onnx|none]

The vault is copied to a temp folder first: the benchmark edits, renames and deletes notes, and the corpus
stays untouched. Everything runs in this process (the service as `serve` wires it, without HTTP), so CPU
time of the process is the service's CPU time.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from backend.bootstrap import Services, build_services
from backend.config import load_settings
from backend.domain.models import SearchMode
from scripts.measure.common import link_models, percentile

POLL = 0.01


class CallCounter:
    """Counts the calls and texts that reach the model itself (behind the embedding cache)."""

    def __init__(self, services: Services) -> None:
        self.calls = 0
        self.texts = 0
        inner = getattr(services.embedder, "_inner", None)
        if inner is None:
            return
        original = inner.embed_documents

        def counted(texts: Sequence[str]) -> list[list[float]]:
            self.calls += 1
            self.texts += len(texts)
            return original(texts)  # type: ignore[no-any-return]

        inner.embed_documents = counted


def wait_for(condition: Callable[[], bool], timeout: float = 120.0) -> float:
    started = time.monotonic()
    while not condition():
        if time.monotonic() - started > timeout:
            raise TimeoutError("condition not reached")
        time.sleep(POLL)
    return time.monotonic() - started


def top_path(services: Services, query: str) -> str | None:
    hits = services.search.search(query, top_k=1, mode=SearchMode.KEYWORD).hits
    return str(hits[0].payload["note_path"]) if hits else None


def summary(values: list[float]) -> str:
    p50, p95 = statistics.median(values), percentile(values, 0.95)
    return f"p50 {p50:.2f} s, p95 {p95:.2f} s, max {max(values):.2f} s (n={len(values)})"


def first_index(services: Services) -> tuple[float, float]:
    """Seconds until every note is keyword-searchable, and until the pass (dense included) is done."""
    started = time.monotonic()
    services.supervisor.open()
    keyword_at = None
    while True:
        job = services.jobs.current
        if job is not None and keyword_at is None and (job.phase == "embedding" or not job.running):
            keyword_at = time.monotonic() - started
        if job is not None and not job.running:
            if job.phase != "done":
                raise RuntimeError(f"first index failed: {job.error}")
            return keyword_at or 0.0, time.monotonic() - started
        time.sleep(0.2)


def freshness(services: Services, vault: Path, rounds: int, seed: int = 7) -> dict[str, list[float]]:
    rng = random.Random(seed)
    notes = sorted(p for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.parts))
    times: dict[str, list[float]] = {"edit": [], "create": [], "rename": [], "delete": []}
    for n in range(rounds):
        token = f"freshtoken{n}x{rng.randrange(10**9)}"
        target = rng.choice(notes)
        rel = target.relative_to(vault).as_posix()
        with target.open("a", encoding="utf-8") as fh:
            fh.write(f"\n\n{token} edited\n")
        saved = time.monotonic()
        wait_for(lambda r=rel, t=token: top_path(services, t) == r)
        times["edit"].append(time.monotonic() - saved)

        created = vault / "Bench" / f"created {n}.md"
        created.parent.mkdir(exist_ok=True)
        created.write_text(f"# Created {n}\n\n{token}new body\n", encoding="utf-8")
        saved = time.monotonic()
        new_rel = created.relative_to(vault).as_posix()
        wait_for(lambda r=new_rel, t=f"{token}new": top_path(services, t) == r)
        times["create"].append(time.monotonic() - saved)

        renamed = created.with_name(f"renamed {n}.md")
        os.rename(created, renamed)
        saved = time.monotonic()
        renamed_rel = renamed.relative_to(vault).as_posix()
        wait_for(lambda r=renamed_rel, t=f"{token}new": top_path(services, t) == r)
        times["rename"].append(time.monotonic() - saved)

        renamed.unlink()
        saved = time.monotonic()
        wait_for(lambda t=f"{token}new": top_path(services, t) is None)
        times["delete"].append(time.monotonic() - saved)
    return times


def idle_cpu(services: Services, seconds: float) -> float:
    wait_for(lambda: services.supervisor.pending_changes == 0)
    before, started = os.times(), time.monotonic()
    threading.Event().wait(seconds)  # the measurement itself: the service is left alone
    after, elapsed = os.times(), time.monotonic() - started
    used = (after.user - before.user) + (after.system - before.system)
    return 100.0 * used / elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--provider", default="onnx", choices=["onnx", "none"])
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"), help="reuse a built ONNX graph")
    ap.add_argument(
        "--rounds", type=int, default=20, help="freshness rounds (each: edit, create, rename, delete)"
    )
    ap.add_argument("--idle-seconds", type=float, default=30.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(args.vault, vault, symlinks=True)
        settings = load_settings(
            vault_path=vault,
            data_dir=Path(tmp) / "data",
            embedding_provider=args.provider,
            watch=True,
            embedding_cache_dir=Path(tmp),  # its own cache, empty: the user's shared one would answer
        )
        if args.provider == "onnx":
            link_models(Path(tmp) / "data", args.models_cache)
        services = build_services(settings)
        counter = CallCounter(services)
        try:
            keyword_s, dense_s = first_index(services)
            notes, chunks = services.index.indexed_notes, services.index.store.count()
            first_texts = counter.texts
            services.start_watcher()
            wait_for(lambda: services.supervisor.watcher_running)
            fresh = freshness(services, vault, args.rounds)
            cpu = idle_cpu(services, args.idle_seconds)
            counter.calls = counter.texts = 0
            started = time.monotonic()
            services.indexer.rebuild()
            rebuild_s = time.monotonic() - started
            rebuild_calls = counter.calls
        finally:
            services.close()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(
        f"vault: {args.vault} ({notes} notes, {chunks} chunks), provider {args.provider}, debounce "
        f"{settings.debounce_seconds} s"
    )
    print(
        f"first index: keyword-searchable after {keyword_s:.1f} s, fully dense after {dense_s:.1f} s "
        f"({first_texts} texts embedded)"
    )
    for kind, values in fresh.items():
        print(f"freshness {kind:<6}: {summary(values)}")
    print(f"idle CPU with the watcher running: {cpu:.2f}% of one core over {args.idle_seconds:.0f} s")
    print(f"second full rebuild: {rebuild_s:.1f} s, {rebuild_calls} embedding calls")


if __name__ == "__main__":
    main()
