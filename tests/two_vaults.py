"""A service of two small vaults of their own (VAULTS=work=…,personal=…, keyword search, no model), served
on a loopback port: what the OpenClaw plugin's tests of several vaults run against, and the page's (with
notes of its own). Both vaults hold `Inbox.md`, with other text, so a note read by path alone could come from
either."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

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


@contextmanager
def serving(
    root: Path,
    api_key: str | None = None,
    notes: tuple[Mapping[str, str], Mapping[str, str]] = (WORK, PERSONAL),
) -> Iterator[str]:
    """The two vaults under `root` (`root`/Work and `root`/Personal, with these `notes`: WORK's and
    PERSONAL's unless told), served until the block ends; yields the base URL once both are indexed."""
    work, personal = write_notes(root / "Work", notes[0]), write_notes(root / "Personal", notes[1])
    settings = load_settings(
        vaults=f"work={work},personal={personal}",
        data_dir=root / "data",
        embedding_provider="none",
        watch=False,
        **({"api_key": api_key} if api_key else {}),
    )
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with live_server.serving_vaults(create_app(settings), headers) as base:
        yield base


def wait_indexed(client: TestClient, vault: str, timeout: float = 60.0) -> None:
    """Until the vault's first index has notes and its job has ended (its status polled: no event to await
    through a test client)."""
    deadline = time.monotonic() + timeout
    while True:
        status = client.get("/index/status", params={"vault": vault}).json()
        job = status.get("job")
        if status.get("indexed_notes") and (job is None or job["finished_at"] is not None):
            return
        assert time.monotonic() < deadline, status
        time.sleep(0.05)
