import threading

import pytest

from backend.application.indexing.jobs import JobProgress, JobRunner
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


def test_a_job_asked_for_after_the_running_one_runs_once_it_is_done() -> None:
    runner = JobRunner()
    release = threading.Event()
    order: list[str] = []
    runner.start("index", lambda progress: (release.wait(10), order.append("index")))
    runner.start_after("sync", lambda progress: order.append("sync 1"))
    runner.start_after("sync", lambda progress: order.append("sync 2"))  # one waits already: nothing more
    assert runner.queued
    release.set()
    assert runner.wait(10)  # the running job and the one queued behind it
    assert order == ["index", "sync 1"]
    assert not runner.queued
    assert runner.current is not None
    assert (runner.current.kind, runner.current.phase) == ("sync", "done")
    runner.start_after("sync", lambda progress: order.append("now"))  # nothing runs: at once
    assert runner.wait(10)
    assert order[-1] == "now"


def test_the_job_a_queued_one_followed_is_kept_as_it_ended() -> None:
    """Whoever started a job and follows it finds how it ended though the queued one began at once."""
    runner = JobRunner()
    release = threading.Event()

    def fails(progress: JobProgress) -> None:
        release.wait(10)
        raise RuntimeError("disk on fire")

    first = runner.start("rebuild", fails)
    runner.start_after("sync", lambda progress: None)
    assert runner.previous is None
    release.set()
    assert runner.wait(10)
    assert runner.current is not None
    assert runner.current.kind == "sync"
    before = runner.previous
    assert before is not None
    assert (before.id, before.phase, before.error) == (first.id, "failed", "disk on fire")


def test_stop_drops_the_queued_job() -> None:
    runner = JobRunner()
    started = threading.Event()
    ran: list[str] = []

    def until_cancelled(progress: JobProgress) -> None:
        started.set()
        while True:
            progress.update(phase="indexing")  # raises once stop() asks to cancel
            threading.Event().wait(0.01)

    runner.start("index", until_cancelled)
    runner.start_after("sync", lambda progress: ran.append("sync"))
    assert started.wait(10)
    runner.stop(10)
    assert runner.current is not None
    assert (runner.current.kind, runner.current.phase) == ("index", "cancelled")
    assert ran == []
    assert not runner.queued


def test_a_wait_as_a_job_starts_never_joins_a_thread_not_started_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    # another thread (a request, the watcher) may wait at the very moment a job's thread is being started
    runner = JobRunner()
    seen: list[bool] = []

    class Starting(threading.Thread):
        def start(self) -> None:
            seen.append(runner.wait(5))  # what a waiter running right now finds
            super().start()

    monkeypatch.setattr(threading, "Thread", Starting)
    runner.start("index", lambda progress: None)
    assert runner.wait(5)
    assert seen == [True]
