"""The `ChunkStore` contract suite of tests/contract, run on `InMemoryChunkStore`: the fake the use-case tests
rely on answers as both engines do."""

from __future__ import annotations

from tests.contract import test_chunk_store_contract as suite
from tests.fakes import ChunkShelf, InMemoryChunkStore
from tests.fakes_contract.adopt import adopt

FAKE = (InMemoryChunkStore, ChunkShelf)
adopt(
    suite,
    {
        "test_edge_store_held_by_another_owner_is_unavailable",
        "test_client_store_without_a_server_is_unavailable",
        "test_warming_reads_every_payload_once_within_its_memory",  # the fake holds all in memory: none read
    },
    globals(),
)
