"""The `ChunkStore` contract cases of tests/contract, run on `InMemoryChunkStore`: the fake the use-case tests
rely on answers as both engines do. Left out: the cases about one engine's own failures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backend.application.ports import ChunkStore
from tests.contract import test_chunk_store_contract as contract
from tests.fakes import ChunkShelf, InMemoryChunkStore

ENGINE_ONLY = {
    "test_edge_store_held_by_another_owner_is_unavailable",
    "test_client_store_without_a_server_is_unavailable",
}
globals().update(
    {
        name: case
        for name, case in vars(contract).items()
        if name.startswith("test_") and name not in ENGINE_ONLY
    }
)


class FakeBackend:
    """`reopenable()` stores share one shelf: closing one and opening the next reopens the same data."""

    kind = "fake"

    def __init__(self) -> None:
        self._kept = ChunkShelf()
        self._opened: list[ChunkStore] = []

    def store(self) -> ChunkStore:
        return self._keep(InMemoryChunkStore())

    def other(self) -> ChunkStore:
        return self._keep(InMemoryChunkStore())

    def reopenable(self) -> ChunkStore:
        return self._keep(InMemoryChunkStore(self._kept))

    def _keep(self, store: ChunkStore) -> ChunkStore:
        self._opened.append(store)
        return store

    def close_all(self) -> None:
        for store in self._opened:
            store.close()


@pytest.fixture
def backend() -> Iterator[FakeBackend]:
    built = FakeBackend()
    yield built
    built.close_all()


@pytest.fixture
def store(backend: FakeBackend) -> ChunkStore:
    created = backend.store()
    created.create(contract.IDENTITY)
    return created


def test_every_contract_case_but_the_engine_only_ones_runs_here() -> None:
    cases = {name for name in vars(contract) if name.startswith("test_")}
    assert ENGINE_ONLY <= cases  # a renamed engine-only case would otherwise run here and fail obscurely
    assert {name for name in globals() if name.startswith("test_")} >= cases - ENGINE_ONLY
