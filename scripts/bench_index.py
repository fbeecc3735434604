"""Index a vault from scratch and report throughput: notes/s, chunks/s, and the embedder's own chunks/s.

python -m scripts.bench_index --vault ../shared/corpora/scifact/vault [--provider onnx|none]
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from pathlib import Path

from backend.bootstrap import build_services
from backend.config import load_settings


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--provider", default="onnx", choices=["onnx", "none"])
    ap.add_argument("--models-cache", type=Path, default=Path("data/models"), help="reuse a built ONNX graph")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        settings = load_settings(vault_path=args.vault, data_dir=Path(tmp), embedding_provider=args.provider)
        if args.provider == "onnx":
            (Path(tmp) / "models").symlink_to(args.models_cache.resolve(), target_is_directory=True)
            args.models_cache.mkdir(parents=True, exist_ok=True)
        services = build_services(settings)
        embed_seconds = 0.0
        embedder = services.embedder
        if embedder is not None:
            embedder.embed_documents(["warm up: load the model before timing"])
            original = embedder.embed_documents

            def timed(texts):  # type: ignore[no-untyped-def]
                nonlocal embed_seconds
                started = time.perf_counter()
                try:
                    return original(texts)
                finally:
                    embed_seconds += time.perf_counter() - started

            embedder.embed_documents = timed  # type: ignore[method-assign]
        try:
            services.index.open()
            started = time.perf_counter()
            report = services.index.sync()
            total = time.perf_counter() - started
        finally:
            services.close()
    print(f"machine: {platform.machine()}, {platform.python_implementation()} {platform.python_version()}")
    print(f"vault: {args.vault} ({report.indexed} notes, {report.chunks} chunks), provider {args.provider}")
    print(f"total {total:.1f}s: {report.indexed / total:.1f} notes/s, {report.chunks / total:.1f} chunks/s")
    if embed_seconds:
        print(
            f"embedder {embed_seconds:.1f}s ({embed_seconds / total:.0%} of the total): "
            f"{report.chunks / embed_seconds:.1f} chunks/s; everything else {total - embed_seconds:.1f}s"
        )


if __name__ == "__main__":
    main()
