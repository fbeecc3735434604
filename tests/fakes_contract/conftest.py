"""The fixtures the contract suites ask for, built on the module's `FAKE` (store class, shelf class)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes_contract.adopt import FakeBackend


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> Iterator[FakeBackend]:
    make, shelf = request.module.FAKE
    built = FakeBackend(make, shelf())
    yield built
    built.close_all()


@pytest.fixture
def store(backend: FakeBackend, request: pytest.FixtureRequest) -> Any:
    """The chunk and memory suites' store: created for the suite's identity."""
    created = backend.store()
    created.create(request.module.suite.IDENTITY)
    return created


@pytest.fixture
def graph(backend: FakeBackend) -> Any:
    """The graph suite's store: ensured."""
    created = backend.store()
    created.ensure()
    return created
