"""What the contract suites share: every store is written once over a `QdrantEngine`, and each suite runs
its cases on both engines: qdrant-edge on a temp directory, and qdrant-client on `QdrantClient(":memory:")`,
or on `QdrantClient(path=...)` where a case needs to reopen the same data."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pytest
from qdrant_client import QdrantClient

from backend.infrastructure.qdrant_client_engine import ClientEngine
from backend.infrastructure.qdrant_edge_engine import EdgeEngine
from backend.infrastructure.qdrant_engine import QdrantEngine


class Closable(Protocol):
    def close(self) -> None: ...


S = TypeVar("S", bound=Closable)


class Backend(Generic[S]):
    """Builds stores of one engine kind with `build`; `reopenable` ones can be opened again on the same
    data. Every store built is closed when the test ends."""

    def __init__(self, kind: str, tmp_path: Path, build: Callable[..., S]) -> None:
        self.kind = kind
        self._tmp = tmp_path
        self._build = build
        self._opened: list[Closable] = []

    def engine(self, *, on: str = "edge") -> QdrantEngine:
        """A fresh engine: its own directory `on` (edge) or its own in-memory client."""
        if self.kind == "edge":
            return EdgeEngine(self._tmp / on)
        return ClientEngine(QdrantClient(":memory:"))

    def store(self, **options: Any) -> S:
        return self.keep(self._build(self.engine(), **options))

    def other(self) -> S:
        """A store on other data than `store()`'s."""
        return self.keep(self._build(self.engine(on="other")))

    def reopenable(self) -> S:
        if self.kind == "edge":
            return self.keep(self._build(EdgeEngine(self._tmp / "edge")))
        return self.keep(self._build(ClientEngine(QdrantClient(path=str(self._tmp / "local")))))

    def keep(self, store: S) -> S:
        self._opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self._opened:
            store.close()


@pytest.fixture(params=["edge", "client"])
def engine_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_backend(engine_kind: str, tmp_path: Path) -> Iterator[Callable[[Callable[..., Any]], Backend[Any]]]:
    """`make_backend(QdrantChunkStore)`: a `Backend` of this test's engine kind, closed after the test."""
    built: list[Backend[Any]] = []

    def make(build: Callable[..., Any]) -> Backend[Any]:
        built.append(Backend(engine_kind, tmp_path, build))
        return built[-1]

    yield make
    for backend in built:
        backend.close_all()
