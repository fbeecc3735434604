"""What the parts of `make bench` share, those that time a first start above all (first-index and large-vaults
in growth.py, the real-shaped vault in real_vault.py, the remote model in remote.py): the checkouts measured,
the model's graph built before the clock starts, and the service started on an empty index."""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from scripts.measure.service import REPO, ServiceProcess


def code_versions(args: argparse.Namespace) -> list[tuple[str, Path]]:
    """(label, checkout) per code measured: this one, and the one to compare with."""
    versions = [("now", REPO)]
    if args.compare_with is not None:
        versions.insert(0, ("before", args.compare_with.resolve()))
    return versions


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
        data.mkdir()
        (data / "models").symlink_to(models.resolve(), target_is_directory=True)
        env = {"WATCH": "false", "MODEL_CACHE_DIR": str(models.resolve()), "LOG_LEVEL": "WARNING"}
        env["EMBEDDING_CACHE_DIR"] = str(data)  # an empty cache: a first index embeds every text
        with (
            ServiceProcess(vault, data, env=env, repo=repo) as service,
            httpx.Client(base_url=service.url, timeout=60) as client,
        ):
            yield service, client
