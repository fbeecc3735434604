"""The `GraphStore` contract suite of tests/contract, run on `InMemoryGraphStore`. Its cases counting calls
into the Qdrant library are left out (the fake counts its own port calls: tests/application/use_cases checks
that related notes cost one)."""

from __future__ import annotations

from tests.contract import test_graph_store_contract as suite
from tests.fakes import GraphShelf, InMemoryGraphStore
from tests.fakes_contract.adopt import adopt

FAKE = (InMemoryGraphStore, GraphShelf)
ENGINE_ONLY = {
    "test_note_links_touching_is_one_store_call",
    "test_get_notes_is_one_store_call",
    "test_after_warming_related_notes_read_no_store_and_follow_writes",
    "test_edge_graph_held_by_another_owner_is_unavailable",
    "test_edge_graph_lays_out_one_shard_per_collection",
    "test_client_graph_without_a_server_is_unavailable",
}
adopt(suite, ENGINE_ONLY, globals())
