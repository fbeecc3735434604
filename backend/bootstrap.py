"""Composition root: builds adapters from settings and wires the use cases. Used by the app and the CLI."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from backend.application.indexing import ChunkingOptions, IndexService
from backend.application.jobs import JobRunner
from backend.application.ports import ChunkStore, Embedder
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
    embedder: Embedder | None
    index: IndexService
    search: SearchService
    jobs: JobRunner

    def close(self) -> None:
        self.jobs.stop()
        self.store.close()
        if self.embedder is not None:
            self.embedder.close()


def build_store(settings: Settings) -> ChunkStore:
    if settings.qdrant_url:
        from qdrant_client import QdrantClient

        from backend.infrastructure.qdrant_client_store import ClientChunkStore

        client = QdrantClient(url=settings.qdrant_url, api_key=settings.qdrant_api_key)
        return ClientChunkStore(client, CHUNKS_COLLECTION)
    from backend.infrastructure.qdrant_edge_store import EdgeChunkStore

    return EdgeChunkStore(settings.store_dir, CHUNKS_COLLECTION)


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
    store = build_store(settings)
    identity = IndexIdentity(
        embedding_model=embedder.model_name if embedder else "none",
        dimension=embedder.dimension if embedder else None,
    )
    encoder = SparseEncoder()
    index = IndexService(
        store=store,
        embedder=embedder,
        vault=FileSystemVault(
            settings.vault_path, deny_dirs=settings.deny_dirs, allow_dirs=settings.allow_dirs
        ),
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
    return Services(settings, store, embedder, index, search, JobRunner())
