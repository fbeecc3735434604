"""What /index/status and every search read from the serving generation's note state: kept as running counts
(notes waiting for dense vectors, notes on disk not indexed, notes with problems) that always equal a
count over every note, and store counts read again only after a write."""

from __future__ import annotations

import random

from backend.application.serving.live_index import IndexedNote, LiveIndex
from backend.domain.models import FileProblem


class _Unused:
    """Stores the counts never reach."""


def _live() -> LiveIndex:
    return LiveIndex("g1", _Unused(), _Unused(), _Unused())  # type: ignore[arg-type]


def _recount(live: LiveIndex, on_disk: set[str]) -> tuple[int, int, list[FileProblem]]:
    notes = live.notes()
    pending = sum(1 for note in notes.values() if not note.dense_ready)
    unindexed = sum(1 for path in on_disk if path not in notes)
    problems = [FileProblem(p, problem) for p, note in sorted(notes.items()) for problem in note.problems]
    return pending, unindexed, problems


def test_running_counts_equal_a_count_over_every_note_whatever_the_order_of_changes() -> None:
    rng = random.Random(28)
    paths = [f"note {i}.md" for i in range(40)]
    live = _live()
    on_disk = set(paths[:10])
    live.load({p: IndexedNote("h", 1.0, 1, dense_ready=rng.random() < 0.5) for p in paths[:10]})
    for _ in range(3000):
        path = rng.choice(paths)
        step = rng.randrange(5)
        if step == 0:
            problems = ("invalid frontmatter",) if rng.random() < 0.2 else ()
            live.put(path, IndexedNote("h", 1.0, 1, problems, dense_ready=rng.random() < 0.5))
        elif step == 1:
            live.drop(path)
        elif step == 2:
            present = set(rng.sample(paths, 3))
            absent = set(rng.sample(paths, 3)) - present
            live.saw(present, absent)
            on_disk = (on_disk | present) - absent
        elif step == 3 and rng.random() < 0.05:
            on_disk = set(rng.sample(paths, rng.randrange(len(paths))))
            live.saw_exactly(on_disk)
        else:
            live.touched(path, 2.0, 2)
        assert (live.dense_pending_count(), live.unindexed_count(), live.note_problems()) == _recount(
            live, on_disk
        )


def test_a_store_count_is_read_again_only_after_a_write() -> None:
    live = _live()
    reads: list[int] = []

    def count() -> int:
        reads.append(1)
        return len(reads)

    assert live.counted("chunks", count) == 1
    assert live.counted("chunks", count) == 1  # nothing written: not read again
    live.put("a.md", IndexedNote("h", 1.0, 1))
    assert live.counted("chunks", count) == 2  # written since: read again at once
    live.bulk_writing = True  # a whole-vault pass: at most once a second while it writes
    live.put("b.md", IndexedNote("h", 1.0, 1))
    assert live.counted("chunks", count) == 2
    assert live.counted("chunks", count, max_age=0.0) == 3
