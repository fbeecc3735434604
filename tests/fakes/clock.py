"""A clock for the code that takes one (`clock: Callable[[], float]`), read as it is set: a test moves time
past an interval or a pace by hand instead of sleeping through it."""

from __future__ import annotations


class ManualClock:
    def __init__(self, now: float = 0.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
