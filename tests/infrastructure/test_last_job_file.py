"""last_job.json: the last job's end kept in the data dir, read back as it was written; a record that cannot
be read is none (the next job writes it again), never an error that stops a status or a start."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from backend.application.indexing.jobs import JobSnapshot
from backend.application.indexing.last_job import LastJob
from backend.infrastructure.index_catalog.last_job_file import FILE_NAME, LastJobFile

ENDED = datetime(2026, 3, 1, 9, 30, tzinfo=UTC)
JOB = JobSnapshot(
    id="a1b2c3d4e5f6",
    kind="sync",
    phase="failed",
    done=3,
    total=7,
    started_at=ENDED - timedelta(seconds=4),
    finished_at=ENDED,
    error="No space left on device",
    vectors_left=12,
)


def test_the_last_job_is_read_back_as_it_was_written(tmp_path: Path) -> None:
    record = LastJobFile(tmp_path)
    assert record.load() is None  # none yet
    last = LastJob(JOB, last_sync=ENDED, last_indexed=ENDED - timedelta(days=1))
    record.save(last)
    assert LastJobFile(tmp_path).load() == last
    record.save(replace(last, job=replace(JOB, phase="done", error=None), last_indexed=None))
    assert LastJobFile(tmp_path).load() == replace(
        last, job=replace(JOB, phase="done", error=None), last_indexed=None
    )


@pytest.mark.parametrize(
    "text",
    [
        "{",
        "[]",
        '{"job": {}}',
        '{"job": {"id": "x", "kind": "sync", "phase": "done", "started_at": "2026-03-01"}}',
    ],
    ids=["cut short", "not an object", "no job", "a job that has not ended"],
)
def test_a_record_that_cannot_be_read_is_none(tmp_path: Path, text: str) -> None:
    (tmp_path / FILE_NAME).write_text(text, encoding="utf-8")
    assert LastJobFile(tmp_path).load() is None


def test_vaults_sharing_a_data_dir_keep_their_own_last_job(tmp_path: Path) -> None:
    """Two backends on one DATA_DIR (each its VAULT_NAME, as docs/deployment.md allows): each status says its
    own vault's last job, not the one the other vault ran last."""
    mine = LastJob(JOB, last_sync=ENDED, last_indexed=ENDED)
    theirs = LastJob(replace(JOB, id="ffffffffffff", done=5, total=5, phase="done", error=None), ENDED, ENDED)
    LastJobFile(tmp_path).save(mine)
    LastJobFile(tmp_path, "-beta").save(theirs)
    assert LastJobFile(tmp_path).load() == mine
    assert LastJobFile(tmp_path, "-beta").load() == theirs


def test_a_job_ending_after_another_is_never_replaced_by_the_earlier_ones_end(tmp_path: Path) -> None:
    """A job ending starts the job queued behind it before it records its own end: when the queued job's end
    is saved first, the earlier job's save leaves it."""
    record = LastJobFile(tmp_path)
    later = LastJob(replace(JOB, id="later0000000", finished_at=ENDED + timedelta(seconds=1)), ENDED, ENDED)
    record.save(later)
    record.save(LastJob(JOB, ENDED, ENDED))
    assert LastJobFile(tmp_path).load() == later


def test_saves_at_once_leave_the_last_ended_job_and_no_error(tmp_path: Path) -> None:
    """Many ends saved from several threads at once (jobs of one process) all succeed, and the record is the
    job that ended last."""
    record = LastJobFile(tmp_path)
    ends = [
        LastJob(replace(JOB, id=f"{n:012d}", finished_at=ENDED + timedelta(seconds=n)), ENDED, ENDED)
        for n in range(40)
    ]
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(record.save, reversed(ends)))  # each raises here if a save failed
    assert LastJobFile(tmp_path).load() == ends[-1]
    assert not list(tmp_path.glob(".*.tmp"))  # no temporary file left behind


def test_a_save_that_fails_leaves_the_record_as_it_was_and_no_temporary_file(tmp_path: Path) -> None:
    """A write that fails (here a value JSON cannot hold; a full disk alike) leaves the last record whole and
    nothing of its own behind: each writer's temporary file is its own, so no later write would replace it."""
    record = LastJobFile(tmp_path)
    kept = LastJob(JOB, ENDED, ENDED)
    record.save(kept)
    broken = LastJob(
        replace(JOB, id="later0000000", finished_at=ENDED + timedelta(seconds=1), error=object()),
        ENDED,
        ENDED,
    )  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        record.save(broken)
    assert LastJobFile(tmp_path).load() == kept
    assert not list(tmp_path.glob(".*.tmp"))
