"""`python -m backend migrate` and `prepare-model`: operator commands, wired here so `main.py` only parses."""

from __future__ import annotations

import time
from pathlib import Path

from tqdm import tqdm

from backend.adapters import build_catalog, build_server_catalog
from backend.application.indexing.migration import migrate_index
from backend.config import Settings, SettingsError


def cmd_migrate(settings: Settings, to_url: str, api_key: str | None, replace: bool) -> None:
    """Copy the configured index (normally the embedded one) to the Qdrant server at `to_url`."""
    if settings.qdrant_url and settings.qdrant_url.rstrip("/") == to_url.rstrip("/"):
        raise SettingsError(f"invalid setting QDRANT_URL: the index already lives at {to_url}")
    source = build_catalog(settings)
    try:
        target = build_server_catalog(settings, to_url, api_key or settings.qdrant_api_key)
    except BaseException:
        source.close()
        raise
    started = time.perf_counter()
    bars: dict[str, tqdm] = {}

    def progress(phase: str, done: int, total: int) -> None:
        bar = bars.get(phase)
        if bar is None:
            bar = bars[phase] = tqdm(total=total, unit=phase.rstrip("s"), desc=f"copy {phase}", disable=None)
        bar.n = done
        bar.refresh()

    try:
        report = migrate_index(
            source, target, vault=str(settings.vault_path), replace=replace, progress=progress
        )
    finally:
        for bar in bars.values():
            bar.close()
        target.close()
        source.close()
    where = "embedded store" if not settings.qdrant_url else settings.qdrant_url
    print(
        f"copied index generation {report.source_generation} from the {where} to {to_url} as "
        f"{report.target_generation} in {time.perf_counter() - started:.1f}s: {report.chunks} chunks "
        f"({report.dense_chunks} with dense vectors), {report.notes} notes, {report.links} links; "
        "nothing was embedded"
    )
    if report.replaced:
        print(f"replaced the server's generation {report.replaced}")
    print(
        f"next: start the service with QDRANT_URL={to_url} VAULT_NAME={settings.vault_name} "
        f"and the same EMBEDDING_PROVIDER/EMBEDDING_MODEL ({settings.embedding_provider}/"
        f"{settings.model_name})"
    )


def cmd_prepare_model(into: Path, *, multilingual: bool = False) -> None:
    """Build the ONNX graph of all-MiniLM-L6-v2, and with `multilingual` of multilingual-e5-small too, into
    `into` (no network): what ONNX_MODEL_DIR points at."""
    from backend.infrastructure.embedders.onnx_minilm import prepare_model

    for e5 in (False, True)[: 2 if multilingual else 1]:
        started = time.perf_counter()
        path = prepare_model(into, multilingual=e5)
        print(f"prepared {path} ({path.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - started:.1f}s")
    print(f"use it with ONNX_MODEL_DIR={into}")
