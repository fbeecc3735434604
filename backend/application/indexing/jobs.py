"""Background jobs (index, rebuild): at most one at a time, progress visible to /index/status."""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from backend.domain.errors import KnowledgeBridgeError, ReindexInProgressError

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class JobSnapshot:
    id: str
    kind: str
    phase: str  # queued | scanning | indexing | removing | done | failed | cancelled
    done: int = 0
    total: int = 0
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    finished_at: datetime | None = None
    error: str | None = None
    detail: str | None = None  # what the phase is doing now, when done/total cannot say (a large note)
    # the embedding phase: dense vectors still to embed, and about how long they take (None: not known yet)
    vectors_left: int | None = None
    eta_seconds: float | None = None

    @property
    def running(self) -> bool:
        return self.finished_at is None


class JobCancelled(Exception):
    """Raised inside a job when shutdown asked it to stop."""


class JobProgress:
    """Handed to the job body: reports progress and checks for cancellation."""

    def __init__(self, runner: JobRunner, job_id: str) -> None:
        self._runner = runner
        self._job_id = job_id

    def update(
        self,
        *,
        phase: str | None = None,
        done: int | None = None,
        total: int | None = None,
        detail: str | None = None,
        vectors_left: int | None = None,
        eta_seconds: float | None = None,
    ) -> None:
        """A new phase clears the detail, vectors left and time left of the last one; None leaves a figure
        as it is."""
        self._runner._update(
            self._job_id,
            phase=phase,
            done=done,
            total=total,
            detail=detail,
            vectors_left=vectors_left,
            eta_seconds=eta_seconds,
        )
        if self._runner._cancel.is_set():
            raise JobCancelled

    def advance(self, n: int = 1) -> None:
        self._runner._advance(self._job_id, n)
        if self._runner._cancel.is_set():
            raise JobCancelled


JobBody = Callable[[JobProgress], None]


class JobRunner:
    def __init__(self, *, after_job: Callable[[JobSnapshot | None], None] | None = None) -> None:
        # run in the job's thread once a job has ended, however it ended, with the job as it ended
        self._after_job = after_job
        self._lock = threading.Lock()
        self._current: JobSnapshot | None = None
        # the job before the current one, as it ended: a queued job starts the moment one ends, so whoever
        # follows the ended one finds its end here, not in `current`
        self._previous: JobSnapshot | None = None
        self._thread: threading.Thread | None = None
        self._cancel = threading.Event()
        self._queued: tuple[str, JobBody] | None = None  # started as soon as the running job finishes
        self.last_error: KnowledgeBridgeError | None = None  # of the last job, when it failed with one

    @property
    def current(self) -> JobSnapshot | None:
        """The running job, or the last finished one."""
        with self._lock:
            return self._current

    @property
    def previous(self) -> JobSnapshot | None:
        """The job before the current one, as it ended (None before a second job)."""
        with self._lock:
            return self._previous

    def start(self, kind: str, body: JobBody) -> JobSnapshot:
        with self._lock:
            if self._current is not None and self._current.running:
                raise ReindexInProgressError(f"a {self._current.kind} job ({self._current.id}) is running")
            return self._start_locked(kind, body)

    def start_after(self, kind: str, body: JobBody) -> None:
        """Run `body` once the running job has finished, or now when none runs.

        For work that must see the vault as it is *after* the call (the watcher's full comparison once its
        observer was restarted): the running job may have scanned already. At most one job waits; asking
        again while one waits changes nothing, since the waiting one has not scanned yet either."""
        with self._lock:
            if self._current is not None and self._current.running:
                if self._queued is None:
                    self._queued = (kind, body)
                return
            self._start_locked(kind, body)

    @property
    def queued(self) -> bool:
        """A job waits for the running one to finish."""
        return self._queued is not None

    def _start_locked(self, kind: str, body: JobBody) -> JobSnapshot:
        job = JobSnapshot(id=uuid.uuid4().hex[:12], kind=kind, phase="queued")
        self._previous, self._current = self._current, job
        self._cancel.clear()
        thread = threading.Thread(target=self._run, args=(job.id, body), name=f"job-{kind}", daemon=True)
        thread.start()
        # known only once started: `wait` (another thread, no lock) joins whatever it finds here, and a
        # thread not started yet cannot be joined (RuntimeError)
        self._thread = thread
        return job

    def restore(self, job: JobSnapshot) -> None:
        """The last job of an earlier run, as it ended (recorded in the data dir: last_job.py), shown as the
        current one until this run starts its own."""
        with self._lock:
            if self._current is None and not job.running:
                self._current = job

    def run_inline(self, kind: str, body: JobBody) -> JobSnapshot:
        """Run a job in the calling thread (CLI); raises what the body raised."""
        with self._lock:
            job = JobSnapshot(id=uuid.uuid4().hex[:12], kind=kind, phase="queued")
            self._previous, self._current = self._current, job
        self._execute(job.id, body, reraise=True)
        return self.current  # type: ignore[return-value]

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the running job and any job queued behind it."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            thread = self._thread
            if thread is None:
                return True
            thread.join(None if deadline is None else max(deadline - time.monotonic(), 0.0))
            if thread.is_alive():
                return False
            if self._thread is thread:
                return True

    def stop(self, timeout: float = 30.0) -> None:
        with self._lock:
            self._queued = None
            self._cancel.set()
        self.wait(timeout)

    def _run(self, job_id: str, body: JobBody) -> None:
        self._execute(job_id, body, reraise=False)

    def _execute(self, job_id: str, body: JobBody, *, reraise: bool) -> None:
        self.last_error = None
        ended: JobSnapshot | None = None
        try:
            body(JobProgress(self, job_id))
        except JobCancelled:
            ended = self._finish(job_id, phase="cancelled")
        except KnowledgeBridgeError as exc:  # expected (damaged index, disk full): its detail says it all
            log.error("job %s failed: %s", job_id, exc.detail)
            self.last_error = exc
            ended = self._finish(job_id, phase="failed", error=exc.detail)
            if reraise:
                raise
        except Exception as exc:  # a failed job must be visible in status, never kill the service
            log.exception("job %s failed", job_id)
            ended = self._finish(job_id, phase="failed", error=str(exc) or type(exc).__name__)
            if reraise:
                raise
        else:
            ended = self._finish(job_id, phase="done")
        finally:
            if self._after_job is not None:
                self._after_job(ended)

    def _update(self, job_id: str, **changes: object) -> None:
        with self._lock:
            if self._current is not None and self._current.id == job_id:
                values = {k: v for k, v in changes.items() if v is not None}
                if "phase" in values:
                    for cleared in ("detail", "vectors_left", "eta_seconds"):
                        values.setdefault(cleared, None)
                self._current = replace(self._current, **values)  # type: ignore[arg-type]

    def _advance(self, job_id: str, n: int) -> None:
        with self._lock:
            if self._current is not None and self._current.id == job_id:
                self._current = replace(self._current, done=self._current.done + n)

    def _finish(self, job_id: str, *, phase: str, error: str | None = None) -> JobSnapshot | None:
        """The job ended: `phase` (done, failed, cancelled); the job as it ended."""
        ended = None
        with self._lock:
            if self._current is not None and self._current.id == job_id:
                self._current = ended = replace(  # vectors still left stay said; no time is promised any more
                    self._current, phase=phase, error=error, finished_at=datetime.now(UTC), eta_seconds=None
                )
            # under the same lock: nobody sees "no job running" while one is queued
            queued, self._queued = self._queued, None
            if queued is not None and not self._cancel.is_set():
                self._start_locked(*queued)
        return ended
