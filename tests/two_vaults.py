"""A service of two small vaults of their own (VAULTS=work=…,personal=…, keyword search, no model), served
on a loopback port: what the OpenClaw plugin's tests of several vaults run against, and the page's (with
notes of its own). Both vaults hold `Inbox.md`, with other text, so a note read by path alone could come from
either."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from fastapi.testclient import TestClient

from backend.config import Settings, load_settings
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


Notes = tuple[Mapping[str, str], Mapping[str, str]]  # work's, personal's


def _settings(root: Path, notes: Notes, **settings: object) -> Settings:
    """The two vaults written under `root` (`root`/Work and `root`/Personal), keyword only, no watcher."""
    work, personal = write_notes(root / "Work", notes[0]), write_notes(root / "Personal", notes[1])
    return load_settings(
        vaults=f"work={work},personal={personal}",
        data_dir=root / "data",
        embedding_provider="none",
        watch=False,
        **settings,
    )


@contextmanager
def serving(root: Path, api_key: str | None = None, notes: Notes = (WORK, PERSONAL)) -> Iterator[str]:
    """The two vaults under `root` (with these `notes`: WORK's and PERSONAL's unless told), served on a
    loopback port until the block ends; yields the base URL once both are indexed."""
    settings = _settings(root, notes, **({"api_key": api_key} if api_key else {}))
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    with live_server.serving_vaults(create_app(settings), headers) as base:
        yield base


@contextmanager
def in_process(root: Path, notes: Notes = (WORK, PERSONAL)) -> Iterator[TestClient]:
    """The two vaults under `root` with these `notes`, served in this process through a test client once
    both are indexed."""
    with TestClient(create_app(_settings(root, notes)), raise_server_exceptions=False) as client:
        wait_indexed(client, "work")
        wait_indexed(client, "personal")
        yield client


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


def merged_as_documented(lists: Sequence[Sequence[dict]], top_k: int) -> list[str]:
    """The chunk ids of several vaults' results (each asked alone, in the order asked) merged as /search
    says it merges them (domain/ranking/vault_merge.py), for a question naming no one, no tag and no period:
    each vault's order kept, the head of highest confidence weighed by its vault's surest result against the
    surest of any vault taken first (ties: the vault asked first), cut to top_k. Not a sort by confidence."""
    surest = [max((r["confidence"] for r in results), default=0.0) for results in lists]
    weights = [best / max(surest) if max(surest) > 0 else 1.0 for best in surest]
    heads = [0] * len(lists)
    merged: list[str] = []
    while len(merged) < top_k:
        waiting = [i for i, results in enumerate(lists) if heads[i] < len(results)]
        if not waiting:
            break
        taken = max(waiting, key=lambda i: (lists[i][heads[i]]["confidence"] * weights[i], -i))
        merged.append(lists[taken][heads[taken]]["chunk_id"])
        heads[taken] += 1
    return merged
