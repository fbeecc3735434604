"""Index catalogs: which collection sets ("generations") of the index exist, which one serves, and the switch
from one to the next, so a rebuild fills a complete new set beside the serving one and swaps atomically.

`generations` holds the rules both catalogs share (how names are handed out, switched to and dropped); `edge`
lays the generations out as qdrant-edge shard folders under one directory, `client` as collections and
aliases on a Qdrant server. Callers name the two catalogs from here and need not know that split.
"""

from backend.infrastructure.index_catalog.client import ClientIndexCatalog
from backend.infrastructure.index_catalog.edge import EdgeIndexCatalog
from backend.infrastructure.index_catalog.generations import LEGACY, generation_number

__all__ = ["LEGACY", "ClientIndexCatalog", "EdgeIndexCatalog", "generation_number"]
