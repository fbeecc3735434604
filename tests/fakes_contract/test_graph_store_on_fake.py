"""The `GraphStore` contract cases of tests/contract, run on `InMemoryGraphStore`. Left out: the cases about
one engine's own failures or layout, and those counting calls into the Qdrant library (the fake has none)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backend.application.ports import GraphStore
from tests.contract import test_graph_store_contract as contract
from tests.fakes import GraphShelf, InMemoryGraphStore

ENGINE_ONLY = {
    "test_links_touching_is_one_store_call",
    "test_get_notes_is_one_store_call",
    "test_edge_graph_held_by_another_owner_is_unavailable",
    "test_edge_graph_lays_out_one_shard_per_collection",
    "test_client_graph_without_a_server_is_unavailable",
}
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
        self._kept = GraphShelf()
        self._opened: list[GraphStore] = []

    def store(self, *, page_size: int | None = None) -> GraphStore:
        return self._keep(InMemoryGraphStore(page_size=page_size))

    def other(self) -> GraphStore:
        return self._keep(InMemoryGraphStore())

    def reopenable(self) -> GraphStore:
        return self._keep(InMemoryGraphStore(self._kept))

    def _keep(self, store: GraphStore) -> GraphStore:
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
def graph(backend: FakeBackend) -> GraphStore:
    store = backend.store()
    store.ensure()
    return store


@pytest.mark.parametrize("how_many", [1, 50])
def test_links_touching_is_one_store_call(how_many: int) -> None:
    """The engine-only case's rule, on the fake's own call record: related notes cost one store call."""
    store = InMemoryGraphStore()
    store.ensure()
    paths = [f"n{i:03}.md" for i in range(60)]
    for i, path in enumerate(paths):
        store.put_note(
            contract.note(path), contract.wikilinks(path, f"n{(i + 1) % 60:03}", f"n{(i + 7) % 60:03}")
        )
    store.calls.clear()
    touching = store.links_touching(paths[:how_many])
    assert store.calls == ["links_touching"]
    assert len(touching) == {1: 4, 50: 108}[how_many]


def test_every_contract_case_but_the_engine_only_ones_runs_here() -> None:
    cases = {name for name in vars(contract) if name.startswith("test_")}
    assert ENGINE_ONLY <= cases
    assert {name for name in globals() if name.startswith("test_")} >= cases - ENGINE_ONLY
