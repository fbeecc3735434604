import threading

import pytest

from backend.application.jobs import JobProgress, JobRunner
from backend.domain.errors import ReindexInProgressError


def test_a_second_job_is_refused_while_one_runs_and_allowed_after() -> None:
    runner = JobRunner()
    release = threading.Event()
    runner.start("rebuild", lambda progress: release.wait(10))
    with pytest.raises(ReindexInProgressError):
        runner.start("rebuild", lambda progress: None)
    release.set()
    assert runner.wait(10)
    assert runner.current is not None
    assert runner.current.phase == "done"
    runner.start("index", lambda progress: None)
    assert runner.wait(10)


def test_progress_and_failure_are_visible() -> None:
    runner = JobRunner()

    def body(progress: JobProgress) -> None:
        progress.update(phase="indexing", total=3)
        progress.advance(2)
        raise RuntimeError("disk on fire")

    runner.start("index", body)
    runner.wait(10)
    job = runner.current
    assert job is not None
    assert (job.phase, job.done, job.total, job.error) == ("failed", 2, 3, "disk on fire")
    assert job.finished_at is not None


def test_stop_cancels_a_running_job_at_its_next_progress_report() -> None:
    runner = JobRunner()
    started = threading.Event()

    def body(progress: JobProgress) -> None:
        started.set()
        while True:
            progress.advance()

    runner.start("index", body)
    started.wait(10)
    runner.stop(timeout=10)
    assert runner.current is not None
    assert runner.current.phase == "cancelled"
