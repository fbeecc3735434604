"""Index a vault from scratch and report throughput: notes/s, chunks/s, and the embedder's own chunks/s.

The embedder's share is the time spent inside `embed_documents` calls (summed; the dense pass makes them one
after another from one thread) over the wall time of the whole `sync`, from the scan until the last note is
dense. "keyword-searchable after" is when the keyword pass has written every note; peak RSS is the process's.

python -m scripts.measure.bench.index --vault ../shared/corpora/scifact/vault [--provider onnx|none] \
    [--limit N]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from backend.bootstrap import build_services
from backend.config import load_settings
from scripts.measure.common import link_models, machine, subset_vault


@dataclass(frozen=True)
class IndexRun:
    notes: int
    chunks: int
    seconds: float
    embed_seconds: float  # inside the embedder (0 for keyword-only)
    keyword_seconds: float | None  # until every note was written by keyword (None: no separate keyword pass)


class PhaseClock:
    """Stands in for a job's progress to note when the keyword pass hands over to the dense pass."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.keyword_done: float | None = None

    def update(self, *, phase: str | None = None, done: int | None = None, total: int | None = None) -> None:
        if phase == "embedding" and self.keyword_done is None:
            self.keyword_done = time.perf_counter() - self.started

    def advance(self, n: int = 1) -> None:
        pass


def index_once(vault: Path, provider: str, models_cache: Path) -> IndexRun:
    """One first index of `vault` into an empty temp index (no embedding cache), timed."""
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(
            vault_path=vault,
            data_dir=Path(tmp),
            embedding_provider=provider,
            watch=False,
            embedding_cache_dir=Path(tmp),  # its own cache, empty: the user's shared one would answer
        )
        if provider == "onnx":
            link_models(Path(tmp), models_cache)
        services = build_services(settings)
        embed_seconds = 0.0
        embedder = services.embedder
        if embedder is not None:
            embedder.embed_documents(["warm up: load the model before timing"])
            original = embedder.embed_documents

            def timed(texts: Sequence[str]) -> list[list[float]]:
                nonlocal embed_seconds
                started = time.perf_counter()
                try:
                    return original(texts)
                finally:
                    embed_seconds += time.perf_counter() - started

            embedder.embed_documents = timed  # type: ignore[method-assign]
        try:
            services.index.open()
            clock = PhaseClock()
            report = services.indexer.sync(clock)  # type: ignore[arg-type]  # only its phases are read
            total = time.perf_counter() - clock.started
        finally:
            services.close()
    return IndexRun(report.indexed, report.chunks, total, embed_seconds, clock.keyword_done)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--provider", default="onnx", choices=["onnx", "none"])
    ap.add_argument("--limit", type=int, help="only the first N notes (sorted by path)")
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"), help="reuse a built ONNX graph")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        vault = subset_vault(args.vault, args.limit, Path(tmp) / "vault") if args.limit else args.vault
        run = index_once(vault, args.provider, args.models_cache)
    print(f"machine: {machine()}")
    print(f"vault: {args.vault} ({run.notes} notes, {run.chunks} chunks), provider {args.provider}")
    total, embed = run.seconds, run.embed_seconds
    print(f"total {total:.1f}s: {run.notes / total:.1f} notes/s, {run.chunks / total:.1f} chunks/s")
    if embed:
        print(
            f"embedder {embed:.1f}s ({embed / total:.0%} of the total): {run.chunks / embed:.1f} chunks/s; "
            f"everything else {total - embed:.1f}s"
        )
    if run.keyword_seconds is not None:
        print(f"keyword-searchable after {run.keyword_seconds:.1f}s, fully dense after {total:.1f}s")
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(f"peak RSS {peak_kib / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
