"""What /index/status and /index/verify answer, and the MCP `index_status` tool and the CLI's `status` and
`verify` with them: the index's state, translated into the API's schemas."""

from __future__ import annotations

import logging
from dataclasses import asdict

from backend.api.status_schemas import (
    DriftFinding,
    EmbedderInfo,
    EmbedderProblemOut,
    FailedFile,
    IndexStatus,
    JobInfo,
    LanguagesOut,
    LinkCountsOut,
    RecallCalibrationOut,
    VerifyResult,
)
from backend.application.indexing.verify import LIST_LIMIT, verify_index
from backend.application.ports import CountsEmbeddings
from backend.bootstrap import Services
from backend.domain.errors import (
    EmbedderUnavailableError,
    IndexCorruptedError,
    IndexNotReadyError,
    IndexUnavailableError,
)
from backend.domain.models import IndexIdentity
from backend.embedding_server_settings import REMOTE_PROVIDERS

log = logging.getLogger(__name__)


def _calibration(services: Services) -> RecallCalibrationOut:
    search = services.search
    dense = services.index.serving_health is not None
    return RecallCalibrationOut(**asdict(search.gate.state(search.serving_model(), dense=dense)))


def status_answer(services: Services) -> IndexStatus:
    """The status as /index/status, the MCP `index_status` tool and `python -m backend status` show it."""
    try:
        # no-op once open; after a start with Qdrant down, this is where it recovers (and reports the store)
        services.supervisor.open()
        chunks = services.index.recent_chunk_count()
        links = LinkCountsOut(**asdict(services.index.link_counts()))
        store_healthy = True
    except (IndexUnavailableError, IndexNotReadyError) as exc:
        log.warning("index status without the store: %s", exc.detail)
        chunks, links = 0, LinkCountsOut(total=0, resolved=0, unresolved=0, embeds=0)
        store_healthy = not isinstance(exc, IndexUnavailableError)
    except IndexCorruptedError as exc:
        job = services.jobs.current
        if job is not None and job.running:  # the rebuild that repairs it stays visible
            raise IndexCorruptedError(
                f"{exc.detail}; a {job.kind} job ({job.id}) is running: {job.phase} {job.done}/{job.total}"
            ) from exc
        raise
    job = services.jobs.current
    settings = services.settings
    index = services.index
    supervisor = services.supervisor
    watcher = supervisor.watcher
    return IndexStatus(
        indexed_notes=index.indexed_notes,
        dense_pending=index.dense_pending,
        unindexed_files=index.unindexed_files,
        pending_changes=supervisor.pending_changes,
        watcher_running=supervisor.watcher_running,
        watcher_restarts=watcher.restarts if watcher else 0,
        watcher_error=watcher.last_error if watcher else None,
        indexed_chunks=chunks,
        links=links,
        last_indexed=index.last_indexed,
        last_sync=index.last_sync,
        generation=index.generation,
        embedding_model=index.identity.embedding_model,
        embedding_dimension=index.identity.dimension,
        index_model=index.serving_identity.embedding_model,
        index_dimension=index.serving_identity.dimension,
        model_change=_model_change(services),
        embedder=_embedder_info(services),
        recall_calibration=_calibration(services),
        languages=LanguagesOut(
            shares=services.languages.shares(),
            sampled_notes=services.languages.notes,
            query_languages=list(services.languages.main_languages()),
            non_english_share=round(services.languages.non_english_share, 3),
        ),
        vault_path=str(settings.vault_path),
        store=settings.qdrant_url or "embedded",
        store_healthy=store_healthy,
        job=JobInfo(**asdict(job)) if job else None,  # the snapshot's fields are the schema's, by name
        previous_job=JobInfo(**asdict(before)) if (before := services.jobs.previous) else None,
        search_warming=supervisor.search_warming,
        failed_files=[FailedFile(path=f.rel_path, reason=f.reason) for f in index.failed_files],
    )


def _model_change(services: Services) -> str | None:
    """ "serving X; re-embedding for Y: n of N" while the index was built for other settings, or what it
    takes to switch; None when it was built for the configured ones."""
    index = services.index
    if not index.model_mismatch:
        return None
    served, wanted = index.serving_identity, index.identity
    serving = served.embedding_model
    target = wanted.embedding_model
    if (served.embedding_model, served.dimension) == (wanted.embedding_model, wanted.dimension):
        serving, target = f"{serving} ({_settings_of(served)})", f"{target} ({_settings_of(wanted)})"
    if index.keyword_fallback is not None and served.dimension is not None:
        serving += " by keyword only (it cannot be loaded here)"
    building = index.building
    if building is not None:
        done, total = building.rebuild_progress()
        return f"serving {serving}; re-embedding for {target}: {done} of {total}"
    job = services.jobs.current
    if job is not None and job.kind == "rebuild" and job.phase == "failed":
        return (
            f"serving {serving}; re-embedding for {target} failed ({job.error}); POST /index/rebuild retries"
        )
    if not services.settings.auto_reembed:
        return (
            f"serving {serving}; configured for {target}: POST /index/rebuild re-embeds (AUTO_REEMBED=false)"
        )
    return f"serving {serving}; re-embedding for {target}: starting"


def _settings_of(identity: IndexIdentity) -> str:
    instruction = repr(identity.document_instruction) if identity.document_instruction else "none"
    return (
        f"document instruction {instruction}, dense windows of {identity.dense_windows} words, "
        f"keyword encoding [{identity.keyword_encoding}]"
    )


def _embedder_info(services: Services) -> EmbedderInfo:
    health = services.index.embedder_health
    problem = health.problem if health is not None else None
    healthy = services.embedder is not None and services.embedder.health()  # the probe, asked now
    error = None
    if problem is not None:
        error = EmbedderProblemOut(
            error_code=problem.code, detail=problem.detail, suggestion=problem.suggestion
        )
    provider = services.settings.embedding_provider
    if services.embedder is None:
        state = "off"
    elif problem is not None:
        state = "failed"
    elif healthy:
        state = "ready"
    elif services.supervisor.embedder_warming:
        state = "loading"
    elif provider == "onnx":  # not asked to load (the CLI without a service): it loads on first use
        state = "idle"
    else:  # the server's probe says no before any call failed: say so rather than leave it unexplained
        state = "failed"
        error = _unhealthy(services)
    choice = services.model_choice
    identity = services.index.identity
    remote = provider in REMOTE_PROVIDERS
    counts = services.embedder.embedding_counts() if isinstance(services.embedder, CountsEmbeddings) else None
    return EmbedderInfo(
        provider=provider,
        model=identity.embedding_model,
        query_instruction=identity.query_instruction if remote else None,
        document_instruction=identity.document_instruction if remote else None,
        state=state,
        healthy=healthy,
        error=error,
        texts_sent=counts[0] if counts else None,
        cache_hits=counts[1] if counts else None,
        chosen_by=choice.chosen_by if choice else None,  # type: ignore[arg-type]
        reason=choice.reason if choice else None,
        proposal=choice.proposal if choice else None,
    )


def _unhealthy(services: Services) -> EmbedderProblemOut:
    settings = services.settings
    model = settings.model_name
    if settings.embedding_provider == "openai":
        return EmbedderProblemOut(
            error_code=EmbedderUnavailableError.code,
            detail=f"the openai embedder does not answer its health check ({settings.openai_base_url} "
            f"does not answer /models or lists no {model})",
            suggestion=f"Start the server at OPENAI_BASE_URL with the model {model} loaded.",
        )
    return EmbedderProblemOut(
        error_code=EmbedderUnavailableError.code,
        detail=f"the {settings.embedding_provider} embedder does not answer its health check "
        f"({settings.ollama_url} lists no {model})",
        suggestion=f"Start Ollama and pull the model: `ollama pull {model}`.",
    )


def verify_answer(services: Services) -> VerifyResult:
    services.supervisor.open(start_indexing=False)
    report = verify_index(services.index, services.index.vault)
    return VerifyResult(
        consistent=not report.drifted,
        notes_on_disk=report.notes_on_disk,
        notes_indexed=report.notes_indexed,
        indexed_chunks=report.chunks,
        dense_pending=report.dense_pending,
        pending_changes=services.supervisor.pending_changes,
        drift=[
            DriftFinding(kind=kind, count=len(paths), paths=paths[:LIST_LIMIT])
            for kind, paths in report.findings()
        ],
        skipped=[FailedFile(path=f.rel_path, reason=f.reason) for f in report.skipped],
    )
