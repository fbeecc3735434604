"""Qdrant: the chunk, graph and memory stores, written once over the engine interface (`engine`) that
qdrant-edge in-process (`edge_engine`) and a Qdrant server through qdrant-client (`client_engine`) implement,
and the one query both engines translate (`vector_query`)."""
