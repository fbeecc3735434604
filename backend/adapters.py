"""Which adapter each setting names, built: the index catalog and the memory store (qdrant-edge in DATA_DIR,
or a Qdrant server at QDRANT_URL), the embedder (in-process ONNX, or Ollama or an OpenAI-compatible server
with the model's instructions, behind the embedding cache), and
the model an outdated index was built with. The wiring's lower half: bootstrap.py puts the services together
from these. Adapters are imported where they are built, so a process loads only the ones it uses.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from backend.application.indexing.model_choice import MODELS, MULTILINGUAL_MODEL, ModelChoice
from backend.application.ports import Embedder, IndexCatalog, MemoryStore
from backend.application.serving.embedder_health import EMBEDDER_FAILURES
from backend.application.serving.index_handle import ServingEmbedder
from backend.config import Settings, SettingsError
from backend.data_dirs import embedding_cache, vault_embedding_cache
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.index.embedding_instructions import Instructions, resolve
from backend.domain.models import IndexIdentity
from backend.embedding_server_settings import REMOTE_PROVIDERS
from backend.infrastructure.embedders.shared import MODELS_IN_PROCESS

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

log = logging.getLogger(__name__)


def build_memory_store(settings: Settings) -> MemoryStore:
    """The remembered facts' own collection: beside the index generations, never inside one."""
    from backend.infrastructure.qdrant.memory_store import QdrantMemoryStore, memory_collection

    name = memory_collection(settings.vault_name)
    if settings.qdrant_url:
        from backend.infrastructure.qdrant.client_engine import ClientEngine

        client = qdrant_client(settings, settings.qdrant_url, settings.qdrant_api_key)
        return QdrantMemoryStore(ClientEngine(client), name)
    from backend.infrastructure.qdrant.edge_engine import EdgeEngine

    return QdrantMemoryStore(EdgeEngine(settings.data_dir / "memory"), name)


def build_catalog(settings: Settings) -> IndexCatalog:
    if settings.qdrant_url:
        return build_server_catalog(settings, settings.qdrant_url, settings.qdrant_api_key)
    from backend.infrastructure.index_catalog import EdgeIndexCatalog

    return EdgeIndexCatalog(
        settings.store_dir,
        min_free_bytes=settings.min_free_disk_mb * 1024 * 1024,
        cache_mb=settings.search_cache_mb,
    )


def qdrant_client(settings: Settings, url: str, api_key: str | None) -> QdrantClient:
    """A client for the Qdrant server at `url`, connected as the QDRANT_* settings say."""
    from qdrant_client import QdrantClient

    return QdrantClient(
        url=url,
        api_key=api_key,
        prefer_grpc=settings.qdrant_prefer_grpc,
        grpc_port=settings.qdrant_grpc_port,
        timeout=settings.qdrant_timeout_seconds,
    )


def build_server_catalog(settings: Settings, url: str, api_key: str | None) -> IndexCatalog:
    """This vault's collections on the Qdrant server at `url`, laid out as the QDRANT_* settings say."""
    from backend.infrastructure.index_catalog import ClientIndexCatalog
    from backend.infrastructure.qdrant.client_engine import CollectionOptions

    client = qdrant_client(settings, url, api_key)
    options = CollectionOptions(
        shard_number=settings.qdrant_shard_number,
        replication_factor=settings.qdrant_replication_factor,
        write_consistency_factor=settings.qdrant_write_consistency_factor,
        on_disk_vectors=settings.qdrant_on_disk_vectors,
        on_disk_payload=settings.qdrant_on_disk_payload,
    )
    return ClientIndexCatalog(
        client, options=options, base=settings.vault_name, cache_mb=settings.search_cache_mb
    )


def build_embedder(
    settings: Settings, catalog: IndexCatalog | None = None, choice: ModelChoice | None = None
) -> Embedder | None:
    """The configured embedder behind the persistent embedding cache (None for keyword-only); a model served
    over HTTP with its instructions put before each text on the way in.

    `catalog`: the index, asked for the dimension it was built with when nothing else tells it (an Ollama
    model outside the table of known sizes, without EMBEDDING_DIMENSION). `choice`: the in-process model
    chosen for the vault (`model_choice.choose_model`); without it, EMBEDDING_MODEL or the default."""
    return _build_model(settings, catalog, choice)


def _cached(settings: Settings, inner: Embedder) -> Embedder:
    from backend.infrastructure.embedders.cache import CachedEmbedder

    shared = embedding_cache(settings.embedding_cache_dir, settings.data_dir)
    # the data dir's own cache of before the shared one: read, so an install keeps its vectors
    return CachedEmbedder(inner, shared, also_read=[vault_embedding_cache(settings.data_dir)])


def _build_model(
    settings: Settings, catalog: IndexCatalog | None, choice: ModelChoice | None
) -> Embedder | None:
    if settings.embedding_provider == "none":
        return None
    if settings.embedding_provider in REMOTE_PROVIDERS:
        from backend.infrastructure.embedders.remote import known_dimension

        model = settings.model_name
        dimension = settings.embedding_dimension or known_dimension(model)
        if dimension is None and catalog is not None:
            dimension = stored_dimension(catalog, model)
        return _remote(settings, model, dimension, instructions_in_force(settings, model))
    model = choice.model if choice is not None else settings.model_name
    if model not in MODELS:
        raise SettingsError(
            f"invalid setting EMBEDDING_MODEL: the onnx provider ships {' and '.join(MODELS)} (got {model!r})"
        )
    return _cached(settings, _onnx(settings, model, settings.onnx_variant))


def instructions_in_force(settings: Settings, model: str) -> Instructions:
    """What a model served over HTTP gets before each query and document: EMBEDDING_*_INSTRUCTION where set
    ("" = none), else the model's own from the table; none for the in-process models (they add their own)
    and without a model."""
    if settings.embedding_provider not in REMOTE_PROVIDERS:
        return Instructions()
    return resolve(
        model,
        query=settings.embedding_query_instruction,
        document=settings.embedding_document_instruction,
    )


def _remote(settings: Settings, model: str, dimension: int | None, instructions: Instructions) -> Embedder:
    """The model on the configured server (Ollama or an OpenAI-compatible one) behind the cache, each text
    given its side's instruction before the cache sees it: the cache keys the instructed text, so vectors
    made with another document instruction are never taken for this one's."""
    import httpx

    from backend.infrastructure.embedders.instructed import InstructedEmbedder
    from backend.infrastructure.embedders.ollama import OllamaEmbedder
    from backend.infrastructure.embedders.openai_compatible import OpenAICompatibleEmbedder

    openai = settings.embedding_provider == "openai"
    key = settings.embedding_api_key
    options = {
        "base_url": settings.openai_base_url if openai else settings.ollama_url,
        "model": model,
        "batch_size": settings.ollama_batch_size,
        "concurrency": settings.ollama_concurrency,
        "max_retries": settings.ollama_max_retries,
        "dimension": dimension,
        "api_key": key.get_secret_value() if key is not None else None,
    }
    timeouts = (settings.ollama_timeout_seconds, settings.ollama_connect_timeout_seconds)

    def build() -> Embedder:
        kind = OpenAICompatibleEmbedder if openai else OllamaEmbedder
        return kind(**options, timeout=httpx.Timeout(timeouts[0], connect=timeouts[1]))

    # vaults asking one server for one model share its client and its pacing (the limits are the server's)
    server = MODELS_IN_PROCESS.lease(("remote", openai, timeouts, *sorted(options.items())), build)
    return InstructedEmbedder(_cached(settings, server), instructions)


def _onnx(settings: Settings, model: str, variant: str) -> Embedder:
    from backend.infrastructure.embedders.onnx_minilm import OnnxE5Embedder, OnnxMiniLMEmbedder

    kind = OnnxE5Embedder if model == MULTILINGUAL_MODEL else OnnxMiniLMEmbedder
    threads = settings.prefixed("onnx_", ("threads", "query_threads", "query_spinning"))
    # the vaults of a service naming the same model and variant share one loaded (the folders it may be read
    # from are each vault's, but what is read is the same graph: its file is named by weights and variant)
    return MODELS_IN_PROCESS.lease(
        ("onnx", kind.__name__, variant, *sorted(threads.items())),
        lambda: kind(
            cache_dir=settings.model_cache,
            prebuilt_dir=settings.onnx_model_dir,
            fallback_dir=settings.models_dir,
            variant=variant,
            **threads,
        ),
    )


def serving_embedder(settings: Settings) -> ServingEmbedder:
    """Loads the model an outdated index was built with (IndexHandle): an in-process model by the name its
    vectors are recorded under, or with a provider over HTTP the same server's model of that name, given
    the instructions the index records (what its documents were embedded with); None when it cannot be had
    here (the index then answers by keyword until its rebuild switches)."""

    def load(stored: IndexIdentity) -> Embedder | None:
        from backend.infrastructure.embedders.onnx_model_files import variant_named

        if settings.embedding_provider == "none":  # keyword only, as asked: no model is loaded
            return None
        named = variant_named(stored.embedding_model, MODELS)
        try:
            if named is not None:
                return _cached(settings, _onnx(settings, *named))
            if settings.embedding_provider in REMOTE_PROVIDERS:
                recorded = Instructions(stored.query_instruction, stored.document_instruction)
                return _remote(settings, stored.embedding_model, stored.dimension, recorded)
        except KnowledgeBridgeError as exc:  # e.g. the weights package is gone
            log.warning(
                "cannot load %s, which the index was built with: %s", stored.embedding_model, exc.detail
            )
        return None

    return load


def stored_dimension(catalog: IndexCatalog, model: str) -> int | None:
    """The dimension the serving index records for `model`; None when there is none, it was built with
    another model, or the store cannot be read now."""
    identity = stored_identity(catalog)
    if identity is None or identity.embedding_model != model:
        return None
    return identity.dimension


def stored_identity(catalog: IndexCatalog) -> IndexIdentity | None:
    """What the serving index was built with; None when there is none or the store cannot be read now."""
    try:
        active = catalog.active()
        if active is None:
            return None
        store, graph = catalog.open(active)
        try:
            return store.identity()
        finally:
            store.close()
            graph.close()
    except KnowledgeBridgeError:
        return None


def embedding_dimension(settings: Settings, embedder: Embedder) -> int:
    """The embedder's dimension, known before it answers whenever possible (see `_build_model`)."""
    try:
        dimension = embedder.dimension  # asks Ollama only when nothing else told it
    except EMBEDDER_FAILURES as exc:
        raise SettingsError(
            f"invalid setting EMBEDDING_DIMENSION: the vector size of {embedder.model_name} is not known "
            f"and the embedder cannot tell it now ({exc.code}: {exc.detail}); set EMBEDDING_DIMENSION"
        ) from None
    if settings.embedding_dimension is not None and dimension != settings.embedding_dimension:
        raise SettingsError(
            f"invalid setting EMBEDDING_DIMENSION: {embedder.model_name} has {dimension} dimensions "
            f"(got {settings.embedding_dimension})"
        )
    return dimension
