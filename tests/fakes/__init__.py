"""Fakes of the application's ports, for tests of the use cases' rules without an engine or a model.

Each follows its port's documented contract; tests/fakes_contract runs the engines' contract cases on the
stores so they cannot drift from the real ones. Engine behaviour itself stays tested on the real engines
(tests/contract); a fake of our own port is not a mock of Qdrant.

- `FakeEmbedder` (tests/application/fakes.py): hashed bag-of-words vectors, so texts sharing words are near.
- `InMemoryChunkStore`, `InMemoryGraphStore`, `InMemoryMemoryStore`: the three stores, in dicts.
- `FakeVault`: notes as a dict of path -> text.
- `FakeServingIndex`: the read side of the index over those, filled as the indexer writes notes.
- `wire(...)`: every use case wired on fakes, as the `Handles` of application/operations.py.
- `ManualClock`: a clock a test sets by hand, for the code that takes a `clock` callable.
"""

from tests.application.fakes import FakeEmbedder
from tests.fakes.chunk_store import ChunkShelf, InMemoryChunkStore, matches
from tests.fakes.clock import ManualClock
from tests.fakes.graph_store import GraphShelf, InMemoryGraphStore
from tests.fakes.memory_store import FactShelf, InMemoryMemoryStore
from tests.fakes.serving_index import FakeHandles, FakeServingIndex, identity_of, wire
from tests.fakes.vault import FakeVault

__all__ = [
    "ChunkShelf",
    "FactShelf",
    "FakeEmbedder",
    "FakeHandles",
    "FakeServingIndex",
    "FakeVault",
    "GraphShelf",
    "InMemoryChunkStore",
    "InMemoryGraphStore",
    "InMemoryMemoryStore",
    "ManualClock",
    "identity_of",
    "matches",
    "wire",
]
