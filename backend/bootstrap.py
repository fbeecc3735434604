"""Composition root: builds adapters from settings and wires the use cases. Used by the app and the CLI."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from backend.application.indexing import ChunkingOptions, IndexService
from backend.application.jobs import JobRunner
from backend.application.note_graph import NoteGraph
from backend.application.ports import ChunkStore, Embedder, GraphStore
from backend.application.search import SearchOptions, SearchService
from backend.config import Settings
from backend.domain.models import IndexIdentity
from backend.domain.sparse import SparseEncoder
from backend.infrastructure.fs_vault import FileSystemVault
from backend.infrastructure.markdown_parser import parse_note

log = logging.getLogger(__name__)

CHUNKS_COLLECTION = "obsidian_chunks"


@dataclass
class Services:
    settings: Settings
    store: ChunkStore
    graph_store: GraphStore
    embedder: Embedder | None
    index: IndexService
    search: SearchService
    jobs: JobRunner

    def close(self) -> None:
        self.jobs.stop()
        self.store.close()
        self.graph_store.close()
        if self.embedder is not None:
            self.embedder.close()


def build_stores(settings: Settings) -> tuple[ChunkStore, GraphStore]:
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        from backend.infrastructure.qdrant_client_graph import ClientGraphStore
        from backend.infrastructure.qdrant_client_store import ClientChunkStore

        def client() -> QdrantClient:
            return QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key)

        return ClientChunkStore(client(), CHUNKS_COLLECTION), ClientGraphStore(client())
    from backend.infrastructure.qdrant_edge_graph import EdgeGraphStore
    from backend.infrastructure.qdrant_edge_store import EdgeChunkStore

    return EdgeChunkStore(settings.store_dir, CHUNKS_COLLECTION), EdgeGraphStore(settings.store_dir)


def build_embedder(settings: Settings) -> Embedder | None:
    if settings.embedding_provider == "none":
        return None
    if settings.embedding_provider == "ollama":
        from backend.infrastructure.embedders.ollama import OllamaEmbedder

        return OllamaEmbedder(base_url=settings.ollama_url, model=settings.model_name)
    from backend.infrastructure.embedders.onnx_minilm import OnnxMiniLMEmbedder

    if settings.model_name != "all-MiniLM-L6-v2":
        from backend.config import SettingsError

        raise SettingsError(
            f"invalid setting EMBEDDING_MODEL: the onnx provider ships all-MiniLM-L6-v2 only "
            f"(got {settings.model_name!r})"
        )
    return OnnxMiniLMEmbedder(cache_dir=settings.models_dir)


def build_services(settings: Settings) -> Services:
    embedder = build_embedder(settings)
    store, graph_store = build_stores(settings)
    vault = FileSystemVault(settings.vault_path, deny_dirs=settings.deny_dirs, allow_dirs=settings.allow_dirs)
    identity = IndexIdentity(
        embedding_model=embedder.model_name if embedder else "none",
        dimension=embedder.dimension if embedder else None,
    )
    encoder = SparseEncoder()
    index = IndexService(
        store=store,
        graph=NoteGraph(store=graph_store, vault=vault),
        embedder=embedder,
        vault=vault,
        parser=parse_note,
        encoder=encoder,
        identity=identity,
        chunking=ChunkingOptions(settings.chunk_max_tokens, settings.chunk_overlap_tokens),
    )
    search = SearchService(
        store=store,
        embedder=embedder,
        encoder=encoder,
        index=index,
        options=SearchOptions(prefetch_limit=settings.search_prefetch_limit, rrf_k=settings.rrf_k),
    )
    return Services(settings, store, graph_store, embedder, index, search, JobRunner())
