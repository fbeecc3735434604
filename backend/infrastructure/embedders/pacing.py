"""How hard to drive a remote embedding server, from what it answers: requests in flight and texts a request.

A 335M-parameter model on a CPU (Ollama's default mxbai-embed-large in compose) answers a batch of 64 in tens
of seconds, and a server past its queue says so: Ollama answers 503 "server busy" (OLLAMA_MAX_QUEUE), an
OpenAI-compatible server 429, both maybe with Retry-After. A fixed batch and concurrency then either time
out (the batch's work is lost and sent again) or are refused. `Pacer` adapts both, shared by every thread
of one embedder, never past what is configured:

- a refusal (429, 503) halves the requests in flight and, with Retry-After, holds every request until then;
- a timeout halves the batch (the request is retried in smaller pieces) and the requests in flight;
- an answer that took more than half the timeout halves the batch before the next one times out;
- an answer in under a quarter of the timeout doubles the batch back, and adds one request in flight once
  as many answers as are allowed in flight came back well; back to as many as were refused only after
  `PROBE_AFTER` answers came back well (a server that takes one request at a time, asked for two after
  every answer, refused every second request).

An HTTP embedder asks `batch_size()` when it cuts a call into requests, holds `slot()` around each request
(it waits while the server asked to wait, or while as many requests as allowed are out), and tells
`record(...)` what came back. Queries are not paced: a search never waits behind the indexing's requests.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

log = logging.getLogger(__name__)

FAST_SHARE = 0.25  # of the timeout: an answer this quick may take a bigger batch and one more in flight
SLOW_SHARE = 0.5  # of the timeout: an answer this slow halves the batch before one times out
MAX_PAUSE_SECONDS = 300.0  # a Retry-After further away is capped: the retries decide after that
PROBE_AFTER = 32  # answers come back well before the requests in flight a server refused are tried again


@dataclass(frozen=True, slots=True)
class PacingState:
    in_flight_allowed: int
    batch_size: int
    refusals: int  # 429/503 answers so far
    timeouts: int
    paused_for: float  # seconds every request still waits (a Retry-After), 0 when none


class Pacer:
    """Requests in flight and texts a request, from the server's answers. Safe to share between threads."""

    def __init__(
        self,
        *,
        max_in_flight: int,
        max_batch: int,
        timeout_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_in_flight < 1 or max_batch < 1 or timeout_seconds <= 0:
            raise ValueError("max_in_flight and max_batch must be at least 1, timeout_seconds positive")
        self._max_in_flight = max_in_flight
        self._max_batch = max_batch
        self._fast = timeout_seconds * FAST_SHARE
        self._slow = timeout_seconds * SLOW_SHARE
        self._clock = clock
        self._changed = threading.Condition()
        self._allowed = max_in_flight  # as configured until the server says otherwise
        self._batch = max_batch
        self._in_flight = 0
        self._good_answers = 0  # answered well since the last change of `_allowed`
        self._refused_at = max_in_flight + 1  # requests allowed in flight when the server last refused
        self._paused_until = 0.0
        self._refusals = 0
        self._timeouts = 0

    def batch_size(self) -> int:
        with self._changed:
            return self._batch

    def state(self) -> PacingState:
        with self._changed:
            return PacingState(
                self._allowed,
                self._batch,
                self._refusals,
                self._timeouts,
                max(0.0, self._paused_until - self._clock()),
            )

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Held around one request: waits while the server asked to wait or enough requests are out."""
        with self._changed:
            while True:
                wait = self._paused_until - self._clock()
                if wait <= 0 and self._in_flight < self._allowed:
                    break
                # woken by a finished request or a change; the pause's end is a deadline, not a guess
                self._changed.wait(timeout=wait if wait > 0 else None)
            self._in_flight += 1
        try:
            yield
        finally:
            with self._changed:
                self._in_flight -= 1
                self._changed.notify_all()

    def record(
        self,
        *,
        seconds: float,
        status: int | None = None,
        retry_after: str | None = None,
        timed_out: bool = False,
    ) -> None:
        """What one request came back with: its time, its HTTP status (None: no answer), the Retry-After
        header of a refusal, whether it timed out."""
        with self._changed:
            before = (self._allowed, self._batch)
            if status in (429, 503):
                self._refusals += 1
                self._refused_at = min(self._refused_at, self._allowed)
                self._allowed = max(1, self._allowed // 2)
                self._good_answers = 0
                pause = retry_seconds(retry_after)
                if pause is not None:
                    self._paused_until = max(self._paused_until, self._clock() + pause)
            elif timed_out:
                self._timeouts += 1
                self._batch = max(1, self._batch // 2)
                self._allowed = max(1, self._allowed // 2)
                self._good_answers = 0
            elif status is not None and status < 400:
                if seconds >= self._slow:
                    self._batch = max(1, self._batch // 2)
                elif seconds < self._fast:
                    self._batch = min(self._max_batch, self._batch * 2)
                    self._good_answers += 1
                    probing = self._allowed + 1 >= self._refused_at
                    needed = PROBE_AFTER if probing else self._allowed
                    if self._good_answers >= needed and self._allowed < self._max_in_flight:
                        self._allowed += 1
                        self._good_answers = 0
                        if probing:  # tried again: a refusal will say so
                            self._refused_at = self._max_in_flight + 1
            if (self._allowed, self._batch) != before:
                log.info(
                    "embedding server pacing: %d request(s) in flight, %d texts a request (%s)",
                    self._allowed,
                    self._batch,
                    _why(status, timed_out, seconds),
                )
            self._changed.notify_all()


def retry_seconds(header: str | None) -> float | None:
    """Retry-After in seconds (a number or an HTTP date), capped; None when absent or unreadable."""
    if header is None or not header.strip():
        return None
    text = header.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            seconds = parsedate_to_datetime(text).timestamp() - time.time()
        except (TypeError, ValueError, OverflowError):
            return None
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), MAX_PAUSE_SECONDS)


def _why(status: int | None, timed_out: bool, seconds: float) -> str:
    if status in (429, 503):
        return f"the server answered {status}"
    if timed_out:
        return "a request timed out"
    return f"an answer took {seconds:.1f} s"


class NoPacing:
    """For a request no pacing applies to (a search's query): no wait, nothing learned from its answer."""

    def batch_size(self) -> int:
        return 1 << 30

    @contextmanager
    def slot(self) -> Iterator[None]:
        yield

    def record(self, **answer: object) -> None:
        """Whatever came back: a query's answer does not pace the indexing's requests."""


def read_timeout(timeout: float | None, default: float) -> float:
    """The seconds an answer may take (an httpx.Timeout's `read`), `default` when unset."""
    return timeout if timeout is not None and timeout > 0 else default
