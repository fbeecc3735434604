"""Changes made while the service starts are never lost (issue 17, points 2 and 3).

The service is started the way `serve` starts it (`open_services`: watcher first, then the start-up scan)
while a thread edits, renames, deletes and creates notes every 10 ms; once the start-up job is done and the
churn stops, GET /index/verify's comparison must find the index consistent by itself, with nothing pending.
Before the fix the scan ran before the watcher existed, and a change in between stayed lost for good.

The vault swap: the vault folder is replaced during the first index (`mv vault vault.old; cp -a vault.old
vault`) and then changed (40 added, 20 deleted, 10 edited); the watcher's restart asks for a full comparison,
which must run after the job, not be dropped because a job was running.
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from backend.bootstrap import build_services
from backend.config import load_settings
from backend.entrypoints.app import open_services
from tests.application.fakes import GatedEmbedder
from tests.faults.churn import SETTLE_SECONDS, Churn, describe, settled, write_notes
from tests.vault_files import write

NOTES = 300  # in 30 folders: the watcher takes a moment to watch them all


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def make_vault(root: Path) -> Path:
    for folder in range(30):
        write_notes(root, NOTES // 30, f"Notes {folder}")
    return root


def start_with_churn(vault: Path, data: Path, seed: int) -> tuple[int, str]:
    """One start of the service, as `serve` starts it, while the vault churns: (changes made, drift left
    once settled, or "")."""
    settings = load_settings(
        vault_path=vault, data_dir=data, embedding_provider="none", watch=True, debounce_seconds=0.05
    )
    churn = Churn(vault, seed=seed, every=0.005).start()
    services = open_services(settings)
    try:
        services.jobs.wait(60)  # the start-up job (and anything queued behind it)
        churn.stop()
        report = settled(services)
        # a late event of the churn's last writes may still reach the watcher after the index agreed with the
        # disk: it is applied and drains; pending changes that never drain would hide a stuck watcher
        wait_for(
            lambda: services.supervisor.pending_changes == 0,
            "the pending changes to drain",
            timeout=SETTLE_SECONDS,
        )
        if not report.drifted:
            report = settled(services)
        return churn.steps, describe(report) if report.drifted else ""
    finally:
        churn.stop()
        services.close()


def test_changes_during_the_first_start_are_applied(tmp_path: Path) -> None:
    steps, drift = start_with_churn(make_vault(tmp_path / "vault"), tmp_path / "data", seed=0)
    assert steps > 0
    assert drift == ""


@pytest.mark.slow
def test_changes_during_start_are_applied_in_20_of_20_trials(tmp_path: Path) -> None:
    """The first start (first index) and 19 restarts (catch-up sync) of one vault, each under churn."""
    vault = make_vault(tmp_path / "vault")
    outcomes = [start_with_churn(vault, tmp_path / "data", seed) for seed in range(1, 21)]
    drifted = [(trial, drift) for trial, (_, drift) in enumerate(outcomes, 1) if drift]
    assert not drifted, drifted
    assert all(steps > 0 for steps, _ in outcomes)


def test_a_vault_swapped_during_the_first_index_ends_consistent(tmp_path: Path) -> None:
    parent = tmp_path / "home"
    vault = parent / "vault"
    write_notes(vault, 80)
    settings = load_settings(vault_path=vault, data_dir=tmp_path / "data", watch=True, debounce_seconds=0.05)
    gate = GatedEmbedder()  # holds the first index mid-job until the swap and the changes are done
    services = build_services(settings, embedder=gate)
    services.start_watcher()
    services.supervisor.open()
    try:
        assert gate.entered.wait(30), "the first index never reached the embedder"
        # swap and change at once: the old observer watches vault.old now, the new folder has nobody yet
        shutil.move(vault, parent / "vault.old")
        shutil.copytree(parent / "vault.old", vault, copy_function=shutil.copy2)
        notes = sorted(vault.rglob("*.md"))
        for n in range(40):
            write(vault, f"Added/new {n}.md", f"# New {n}\n\nadded{n} text\n")
        for note in notes[:20]:
            note.unlink()
        for note in notes[20:30]:
            with note.open("a", encoding="utf-8") as fh:
                fh.write("\nedited after the swap\n")
        deadline = time.monotonic() + 30
        while services.supervisor.watcher is not None and services.supervisor.watcher.restarts == 0:
            assert time.monotonic() < deadline, "the watcher never noticed the swapped vault folder"
            time.sleep(0.02)
        wait_for(lambda: services.supervisor.pending_changes == 1, "the rescan to be queued behind the job")
        job = services.jobs.current
        assert job is not None
        assert job.running, "the first index finished before the swap: the scenario did not happen"
        gate.gate.set()
        services.jobs.wait(60)
        report = settled(services)
        assert not report.drifted, describe(report)
        assert report.notes_indexed == 80 + 40 - 20
    finally:
        gate.gate.set()
        services.close()
