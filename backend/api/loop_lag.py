"""How late the event loop wakes a task: the HTTP service answers every request on one loop, and a search run
on it instead of in the thread pool (or anything else that blocks it) delays every other request by as much.

A probe task sleeps PROBE_SECONDS over and over; how much later than asked it wakes is the loop's lag. /health
says the lag of the last WINDOW probes (the last minute), so a benchmark reads it after a load
(scripts/measure/bench/speed.py).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator

PROBE_SECONDS = 0.05
WINDOW = 1200  # probes kept: the last minute


class LoopLag:
    def __init__(self) -> None:
        self._lags: deque[float] = deque(maxlen=WINDOW)

    async def probe(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(PROBE_SECONDS)
            self._lags.append(max(0.0, (loop.time() - asked - PROBE_SECONDS) * 1000))

    def summary(self) -> tuple[int, float, float, float]:
        """(probes, p50, p99, max) in milliseconds over the window; zeros before the first probe."""
        lags = sorted(self._lags)
        if not lags:
            return 0, 0.0, 0.0, 0.0
        at = lambda q: lags[min(len(lags) - 1, round(q * (len(lags) - 1)))]  # noqa: E731
        return len(lags), at(0.5), at(0.99), lags[-1]


@contextlib.asynccontextmanager
async def probing(lag: LoopLag) -> AsyncIterator[None]:
    """The probe running for the app's lifetime."""
    task = asyncio.create_task(lag.probe(), name="loop-lag-probe")
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
