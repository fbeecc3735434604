"""What the contract suites share: every store is written once over a `QdrantEngine`, and each suite runs
its cases on both engines: qdrant-edge on a temp directory, and qdrant-client on `QdrantClient(":memory:")`,
or on `QdrantClient(path=...)` where a case needs to reopen the same data."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

import pytest
from qdrant_client import QdrantClient

from backend.domain.errors import IndexUnavailableError
from backend.infrastructure.qdrant.client_engine import ClientEngine
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from backend.infrastructure.qdrant.engine import QdrantEngine


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
def backend(engine_kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Backend[Any]]:
    """A `Backend` building the store the test module names in `STORE` (e.g. `STORE = QdrantChunkStore`)."""
    built: Backend[Any] = Backend(engine_kind, tmp_path, request.module.STORE)
    yield built
    built.close_all()


@pytest.fixture
def store(backend: Backend[Any], request: pytest.FixtureRequest) -> Any:
    """A `backend.store()` created with the module's `IDENTITY`."""
    created = backend.store()
    created.create(request.module.IDENTITY)
    return created


def failures_beside_one_writer(read: Callable[[], None], write: Callable[[], None]) -> list[BaseException]:
    """Run `write` once in one thread while three threads repeat `read` until it is done (or anything
    fails); what any of them raised."""
    done = threading.Event()
    failures: list[BaseException] = []

    def reading() -> None:
        while not done.is_set():
            read()

    def writing() -> None:
        write()
        done.set()

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            except BaseException as exc:  # collected and asserted by the caller
                failures.append(exc)
                done.set()

        return run

    threads = [threading.Thread(target=guarded(reading)) for _ in range(3)]
    threads.append(threading.Thread(target=guarded(writing)))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return failures


def assert_unavailable_without_a_server(
    build: Callable[[ClientEngine], S], *calls: Callable[[S], object]
) -> None:
    """A store on a client whose server does not answer: each of `calls`, one after the other, raises
    IndexUnavailableError (port 1 on loopback refuses at once: a real connection failure, no mock)."""
    client = QdrantClient(url="http://127.0.0.1:1", timeout=2, check_compatibility=False)
    store = build(ClientEngine(client))
    try:
        for call in calls:
            with pytest.raises(IndexUnavailableError):
                call(store)
    finally:
        store.close()
