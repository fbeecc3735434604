"""last_job.json: the last job's end kept in the data dir, read back as it was written; a record that cannot
be read is none (the next job writes it again), never an error that stops a status or a start."""

from __future__ import annotations

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
