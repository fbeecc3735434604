"""A vault that keeps changing while the service starts: edits, renames, deletes and new notes on a thread,
and the wait for the index to agree with the disk (GET /index/verify's own comparison)."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

from backend.application.indexing.verify import VerifyReport, verify_index
from backend.bootstrap import Services
from tests.vault_files import write

SETTLE_SECONDS = 20.0  # generous on a loaded 2-core machine; a consistent index settles in well under 1 s


def write_notes(root: Path, count: int, folder: str = "Notes") -> None:
    for n in range(count):
        write(
            root,
            f"{folder}/note {n:03}.md",
            f"# Note {n}\n\nword{n} body of note {n}. See [[note {n + 1:03}]]\n",
        )


class Churn:
    """Changes the vault every `every` seconds on a thread, until stopped: each step edits, renames,
    deletes or creates a note (seeded, so a failing trial can be replayed)."""

    def __init__(self, root: Path, *, seed: int, every: float = 0.01) -> None:
        self.root = root
        self.every = every
        self.random = random.Random(seed)
        self.steps = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="churn", daemon=True)

    def start(self) -> Churn:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.step()

    def step(self) -> None:
        notes = sorted(self.root.rglob("*.md"))
        kind = self.random.choice(("edit", "edit", "rename", "delete", "create"))
        self.steps += 1
        if kind == "create" or not notes:
            write(self.root, f"New/made {self.steps}.md", f"# Made {self.steps}\n\nfresh{self.steps} text\n")
            return
        note = self.random.choice(notes)
        try:
            if kind == "edit":
                with note.open("a", encoding="utf-8") as fh:
                    fh.write(f"\nedit{self.steps} more text\n")
            elif kind == "rename":
                note.rename(note.with_name(f"moved {self.steps}.md"))
            else:
                note.unlink()
        except FileNotFoundError:
            pass


def settled(services: Services, timeout: float = SETTLE_SECONDS) -> VerifyReport:
    """The verify report once the index agrees with the disk and nothing is pending or running; the last
    report (drifted) when that does not happen within `timeout`: a lost change never heals by itself."""
    deadline = time.monotonic() + timeout
    while True:
        job = services.jobs.current
        busy = services.supervisor.pending_changes or (job is not None and job.running)
        report = verify_index(services.index, services.index.vault) if not busy else None
        if report is not None and not report.drifted:
            return report
        if time.monotonic() > deadline:
            return report or verify_index(services.index, services.index.vault)
        time.sleep(0.05)


def describe(report: VerifyReport) -> str:
    return "; ".join(f"{what}: {paths[:5]}" for what, paths in report.findings())
