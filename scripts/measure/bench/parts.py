"""What the parts of `make bench` share, those that time a first start above all (first-index and large-vaults
in growth.py, the real-shaped vault in real_vault.py, the remote model in remote.py): the checkouts measured,
the model's graph built before the clock starts, and the service started on an empty index."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from scripts.measure.common import link_models
from scripts.measure.service import REPO, ServiceProcess


def code_versions(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(label, checkout) per code measured: this one, and the one to compare with."""
    versions = [("now", REPO)]
    if args.compare_with is not None:
        versions.insert(0, ("before", args.compare_with.resolve()))
    return versions


def keyword_answers(client: httpx.Client, query: str) -> bool:
    """Whether a keyword search finds anything yet: a first start's first answer."""
    found = client.post("/search", json={"query": query, "mode": "keyword", "top_k": 1})
    return found.status_code == 200 and bool(found.json()["results"])


def run_alone(
    part: Callable[[argparse.Namespace, Path], list[str]],
    doc: str,
    argv: list[str] | None,
    add_arguments: Callable[[argparse.ArgumentParser], None],
) -> int:
    """A part of `make bench` run on its own (`python -m scripts.measure.bench.<part>`): its section printed,
    docs/benchmarks.md left as it is."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpora", type=Path, default=Path("../shared/corpora"))
    ap.add_argument("--compare-with", type=Path, help="a checkout of the code before")
    add_arguments(ap)
    args = ap.parse_args(argv)
    print("\n".join(part(args, args.corpora)))
    return 0


def prepare_graph(models: Path) -> None:
    """The default variant's graph in `models`, built once (as a first start of the service would)."""
    from backend.infrastructure.embedders.onnx_minilm import OnnxMiniLMEmbedder

    embedder = OnnxMiniLMEmbedder(cache_dir=models)
    embedder.load()
    embedder.close()


@contextmanager
def first_start_service(
    vault: Path, repo: Path, models: Path
) -> Iterator[tuple[ServiceProcess, httpx.Client]]:
    """`repo`'s service started on `vault` with an empty data dir, and a client of it: its first index.
    A built graph for every code: an earlier one keeps it under DATA_DIR/models, this one in its shared
    cache; building it is not what is measured."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        link_models(data, models)
        env = {"WATCH": "false", "MODEL_CACHE_DIR": str(models.resolve()), "LOG_LEVEL": "WARNING"}
        env["EMBEDDING_CACHE_DIR"] = str(data)  # an empty cache: a first index embeds every text
        with (
            ServiceProcess(vault, data, env=env, repo=repo) as service,
            httpx.Client(base_url=service.url, timeout=60) as client,
        ):
            yield service, client
