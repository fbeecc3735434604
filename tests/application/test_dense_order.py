"""The cost of a real vault (issue 44): the person's own notes get their dense vectors before what they saved
from the web, newest first; a web clipping gets no dense windows (long prose, where they doubled the work);
and while a pass embeds, the job says how many vectors are left. Real files and the embedded store."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import pytest

from backend.application.indexing import dense_pass
from backend.application.indexing.jobs import JobRunner
from backend.domain.models import SearchMode
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness

MESSAGES = [
    "We fixed the leak under the sink with a new washer on Saturday.",
    "The landlord says the boiler service is booked for the ninth.",
    "Ordered the blue paint for the hallway, two tins should be enough.",
    "The neighbour's cat keeps sleeping on our doormat in the sun.",
    "Remember to renew the bike insurance before the end of the month.",
]
PARAGRAPHS = "\n\n".join(MESSAGES)  # a chunk of several short blocks: a chunk that gets dense windows


def _day(day: str) -> float:
    return datetime.fromisoformat(day).timestamp()


def _note(root: Path, path: str, text: str, modified: str) -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    os.utime(file, (_day(modified), _day(modified)))


class Recording(FakeEmbedder):
    """Every text of every document call, in order."""

    def __init__(self) -> None:
        super().__init__(dimension=64)
        self.texts: list[str] = []

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += texts
        return super().embed_documents(texts)

    def first_call_of(self, title: str) -> int:
        return next(i for i, text in enumerate(self.texts) if title in text)


def test_own_notes_are_dense_before_web_clippings_and_recent_before_old(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", 1)  # a note a call: the calls show the order
    root = tmp_path / "vault"
    # the clippings are the newest files of the vault, and still come last
    _note(root, "Clippings/Sourdough guide.md", "# Sourdough guide\n\nFeed the starter.\n", "2025-11-12")
    web = "---\nsource: https://example.org/saved\n---\n# Saved article\n\nTen tips.\n"
    _note(root, "Saved article.md", web, "2025-11-13")
    _note(root, "Journal/2021-01-03.md", "# Old day\n\nSnow.\n", "2025-11-01")  # its name dates it
    _note(root, "Idea.md", "# Idea\n\nA shelf for the hall.\n", "2023-01-01")
    # a source in words is the person's own recipe, not a clipping
    _note(root, "Flapjacks.md", "---\nsource: Mum's, adapted\n---\n# Flapjacks\n\nOats.\n", "2024-06-01")
    _note(root, "Journal/2025-11-10.md", "# Recent day\n\nRain.\n", "2025-11-10")
    embedder = Recording()
    harness = Harness(root, tmp_path / "data", embedder)
    try:
        harness.index.open()
        harness.indexer.sync()
        titles = ["Recent day", "Flapjacks", "Idea", "Old day", "Saved article", "Sourdough guide"]
        assert sorted(titles, key=embedder.first_call_of) == titles
        assert harness.index.dense_pending == 0
        # saved notes are still found by meaning once embedded
        assert (
            harness.top_note("starter sourdough guide", mode=SearchMode.DENSE)
            == "Clippings/Sourdough guide.md"
        )
    finally:
        harness.close()


def test_a_web_clipping_gets_no_dense_windows_and_an_own_note_does(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    _note(root, "House.md", f"# House\n\n{PARAGRAPHS}\n", "2025-11-10")
    clipped = f"---\nurl: https://example.org/house\n---\n# Clipped house\n\n{PARAGRAPHS}\n"
    _note(root, "Clipped house.md", clipped, "2025-11-10")
    tagged = f"---\ntags: [clippings]\n---\n# Tagged house\n\n{PARAGRAPHS}\n"  # as a clipper tags it
    _note(root, "Tagged house.md", tagged, "2025-11-10")
    embedder = Recording()
    harness = Harness(root, tmp_path / "data", embedder, dense_windows=12)
    try:
        harness.index.open()
        harness.indexer.sync()
        own = [t for t in embedder.texts if t.startswith("House")]
        assert len(own) > 1  # the chunk and its windows of one or two messages
        for title in ("Clipped house", "Tagged house"):
            assert len([t for t in embedder.texts if t.startswith(title)]) == 1  # the chunk alone
        assert harness.top_note("boiler service booked", mode=SearchMode.DENSE) in {
            "House.md",
            "Clipped house.md",
        }
    finally:
        harness.close()


class Watching(Recording):
    """Reads the job's vectors left at every document call, as /index/status would show it meanwhile."""

    def __init__(self, runner: JobRunner) -> None:
        super().__init__()
        self.runner = runner
        self.seen: list[tuple[int | None, int]] = []  # (vectors left said, texts embedded before the call)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        job = self.runner.current
        if job is not None and job.phase == "embedding":
            self.seen.append((job.vectors_left, len(self.texts)))
        return super().embed_documents(texts)


def test_the_job_says_how_many_vectors_are_left_while_it_embeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", 4)
    root = tmp_path / "vault"
    for i in range(30):
        _note(root, f"Note {i:02d}.md", f"# Note {i}\n\nharbour tide {i}\n", "2025-11-01")
    _note(root, "House.md", f"# House\n\n{PARAGRAPHS}\n", "2025-11-10")  # a chunk and its windows
    runner = JobRunner()
    embedder = Watching(runner)
    harness = Harness(root, tmp_path / "data", embedder, dense_windows=12)
    try:
        harness.index.open()
        job = runner.run_inline("index", lambda progress: harness.indexer.sync(progress))
        total = len(embedder.texts)
        assert total > 31  # windows are vectors too
        said = [left for left, _ in embedder.seen]
        # before the first call every vector is left; what is said counts down as the notes are written
        assert said[0] == total
        assert said == sorted(said, reverse=True)
        assert said[-1] < total
        assert all(left is not None and left >= total - before for left, before in embedder.seen)
        assert (job.phase, job.vectors_left, job.eta_seconds) == ("done", 0, None)
    finally:
        harness.close()
