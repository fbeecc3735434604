"""The `MemoryStore` contract suite of tests/contract, run on `InMemoryMemoryStore`. Left out: the collection
name, which the infrastructure builds."""

from __future__ import annotations

from tests.contract import test_memory_store_contract as suite
from tests.fakes import FactShelf, InMemoryMemoryStore
from tests.fakes_contract.adopt import adopt

FAKE = (InMemoryMemoryStore, FactShelf)
adopt(suite, {"test_the_collection_name_is_built_from_the_base"}, globals())
