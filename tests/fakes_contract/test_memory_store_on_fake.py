"""The `MemoryStore` contract cases of tests/contract, run on `InMemoryMemoryStore`. Left out: the collection
name, which the infrastructure builds."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backend.application.ports import MemoryStore
from tests.contract import test_memory_store_contract as contract
from tests.fakes import FactShelf, InMemoryMemoryStore

ENGINE_ONLY = {"test_the_collection_name_is_built_from_the_base"}
globals().update(
    {
        name: case
        for name, case in vars(contract).items()
        if name.startswith("test_") and name not in ENGINE_ONLY
    }
)


class FakeBackend:
    kind = "fake"

    def __init__(self) -> None:
        self._kept = FactShelf()
        self.opened: list[MemoryStore] = []

    def store(self) -> MemoryStore:
        return self._keep(InMemoryMemoryStore())

    def reopenable(self) -> MemoryStore:
        return self._keep(InMemoryMemoryStore(self._kept))

    def _keep(self, store: MemoryStore) -> MemoryStore:
        self.opened.append(store)
        return store


@pytest.fixture
def backend() -> Iterator[FakeBackend]:
    built = FakeBackend()
    yield built
    for store in built.opened:
        store.close()


@pytest.fixture
def store(backend: FakeBackend) -> MemoryStore:
    created = backend.store()
    created.create(contract.IDENTITY)
    return created


def test_every_contract_case_but_the_engine_only_ones_runs_here() -> None:
    cases = {name for name in vars(contract) if name.startswith("test_")}
    assert ENGINE_ONLY <= cases
    assert {name for name in globals() if name.startswith("test_")} >= cases - ENGINE_ONLY
