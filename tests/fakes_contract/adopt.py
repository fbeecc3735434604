"""How a module here runs one contract suite of tests/contract on a fake: it `adopt`s the suite's cases
and names its fake in `FAKE`; conftest.py hands out fakes where the suite hands out engines."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import ExitStack, closing
from types import ModuleType
from typing import Any


def adopt(suite: ModuleType, engine_only: set[str], namespace: dict[str, Any]) -> None:
    """Every case of `suite` but the `engine_only` ones (about one engine's own failures or layout) becomes a
    case of the module whose `globals()` is `namespace`. A case added to the suite runs on the fake too."""
    cases = {name: case for name, case in vars(suite).items() if name.startswith("test_")}
    renamed = engine_only - cases.keys()
    assert not renamed, f"engine-only cases no longer in {suite.__name__}: {sorted(renamed)}"
    namespace.update({name: case for name, case in cases.items() if name not in engine_only})


class FakeBackend:
    """What the suites' `Backend` offers, on a fake: `store()` and `other()` on data of their own, and
    `reopenable()` stores on one shared shelf, so closing one and opening the next reopens the same data."""

    kind = "fake"

    def __init__(self, make: Callable[[Any], Any], shelf: Any) -> None:
        self._make = make
        self._shelf = shelf
        self._closing = ExitStack()

    def store(self, **options: Any) -> Any:  # options: engine tuning (a graph's page size), not contract
        return self._new(None)

    def other(self) -> Any:
        return self._new(None)

    def reopenable(self) -> Any:
        return self._new(self._shelf)

    def _new(self, shelf: Any) -> Any:
        return self._closing.enter_context(closing(self._make(shelf)))

    def close_all(self) -> None:
        self._closing.close()
