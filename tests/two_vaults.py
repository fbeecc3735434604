"""A service of two small vaults of their own (VAULTS=work=…,personal=…, keyword search, no model), served
on a loopback port: what the OpenClaw plugin's tests of several vaults run against. Both vaults hold
`Inbox.md`, with other text, so a note read by path alone could come from either."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from backend.config import load_settings
from backend.entrypoints.app import create_app
from tests import live_server
from tests.vault_files import write_notes

SAME_PATH = "Inbox.md"
WORK = {
    SAME_PATH: "# Inbox\n\nQuarterly budget review with the finance team on Monday.\n",
    "Projects/Apollo.md": "# Apollo\n\nThe Apollo launch plan: rocket budget and the launch date in March.\n",
}
PERSONAL = {
    SAME_PATH: "# Inbox\n\nBuy tomato seeds for the garden and water the basil.\n",
    "Garden.md": "# Garden\n\nTomatoes, basil and a small budget for seeds: the spring garden's launch.\n",
}


def _ready(base: str, headers: dict[str, str]) -> bool:
    status = httpx.get(f"{base}/index/status", headers=headers, timeout=5).json()
    for state in status.get("vaults") or []:
        job = (state.get("status") or {}).get("job")
        if not state["available"] or job is None or job["finished_at"] is None:
            return False
    return bool(status.get("vaults"))


@contextmanager
def serving(root: Path, api_key: str | None = None) -> Iterator[str]:
    """The two vaults under `root`, served until the block ends; yields the base URL once both are indexed."""
    work, personal = write_notes(root / "Work", WORK), write_notes(root / "Personal", PERSONAL)
    settings = load_settings(
        vaults=f"work={work},personal={personal}",
        data_dir=root / "data",
        embedding_provider="none",
        watch=False,
        **({"api_key": api_key} if api_key else {}),
    )
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with live_server.serving(create_app(settings)) as base:
        live_server.wait_until(lambda: _ready(base, headers), "both vaults to be indexed")
        yield base
