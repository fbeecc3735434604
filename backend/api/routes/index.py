from __future__ import annotations

import logging
from dataclasses import asdict

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.schemas import (
    DriftFinding,
    EmbedderInfo,
    EmbedderProblemOut,
    FailedFile,
    IndexStatus,
    JobAccepted,
    JobInfo,
    LinkCountsOut,
    VerifyResult,
)
from backend.application.verify import LIST_LIMIT, verify_index
from backend.bootstrap import Services
from backend.domain.errors import (
    EmbedderUnavailableError,
    IndexCorruptedError,
    IndexNotReadyError,
    IndexUnavailableError,
)

log = logging.getLogger(__name__)

router = APIRouter(prefix="/index", tags=["index"])


def status_response(services: Services) -> IndexStatus:
    """The status as /index/status, the MCP `index_status` tool and `python -m backend status` show it."""
    try:
        services.open()  # no-op once open; after a start with Qdrant down, this is where it recovers
        chunks = services.index.chunk_count()
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
    return IndexStatus(
        indexed_notes=index.indexed_notes,
        dense_pending=index.dense_pending,
        unindexed_files=index.unindexed_files,
        pending_changes=services.pending_changes,
        watcher_running=services.watcher_running,
        watcher_restarts=services.watcher.restarts if services.watcher else 0,
        watcher_error=services.watcher.last_error if services.watcher else None,
        indexed_chunks=chunks,
        links=links,
        last_indexed=index.last_indexed,
        last_sync=index.last_sync,
        generation=index.generation,
        embedding_model=index.identity.embedding_model,
        embedding_dimension=index.identity.dimension,
        embedder=_embedder_info(services),
        vault_path=str(settings.vault_path),
        store=settings.qdrant_url or "embedded",
        store_healthy=store_healthy,
        job=JobInfo(
            id=job.id,
            kind=job.kind,
            phase=job.phase,
            done=job.done,
            total=job.total,
            started_at=job.started_at,
            finished_at=job.finished_at,
            error=job.error,
        )
        if job
        else None,
        failed_files=[FailedFile(path=f.rel_path, reason=f.reason) for f in index.failed_files],
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
    elif services.embedder_warming:
        state = "loading"
    elif provider == "onnx":  # not asked to load (the CLI without a service): it loads on first use
        state = "idle"
    else:  # Ollama's probe says no before any call failed: say so rather than leave it unexplained
        state = "failed"
        error = EmbedderProblemOut(
            error_code=EmbedderUnavailableError.code,
            detail=f"the {provider} embedder does not answer its health check "
            f"({services.settings.ollama_url} lists no {services.settings.model_name})",
            suggestion=f"Start Ollama and pull the model: `ollama pull {services.settings.model_name}`.",
        )
    return EmbedderInfo(
        provider=provider,
        model=services.index.identity.embedding_model,
        state=state,
        healthy=healthy,
        error=error,
    )


@router.get(
    "/status",
    operation_id="index_status",
    response_model=IndexStatus,
    responses=error_responses("INDEX_CORRUPTED", 507),
)
async def index_status(services: ServicesDep) -> IndexStatus:
    """What is indexed, with which model, whether the watcher and embedder are up, and the progress of the
    running or last job."""
    return await run_in_threadpool(status_response, services)


def verify_response(services: Services) -> VerifyResult:
    services.open(start_indexing=False)
    report = verify_index(services.index, services.index.vault)
    return VerifyResult(
        consistent=not report.drifted,
        notes_on_disk=report.notes_on_disk,
        notes_indexed=report.notes_indexed,
        indexed_chunks=report.chunks,
        dense_pending=report.dense_pending,
        pending_changes=services.pending_changes,
        drift=[
            DriftFinding(kind=kind, count=len(paths), paths=paths[:LIST_LIMIT])
            for kind, paths in report.findings()
        ],
        skipped=[FailedFile(path=f.rel_path, reason=f.reason) for f in report.skipped],
    )


@router.get(
    "/verify",
    operation_id="index_verify",
    response_model=VerifyResult,
    responses=error_responses(*INDEX_UNREADABLE, 507),
)
async def verify(services: ServicesDep) -> VerifyResult:
    """Check the index against the vault on disk (missing, extra and stale notes) and against itself (chunk
    points vs note records, links without their note). Read-only; `python -m backend verify` asks this."""
    return await run_in_threadpool(verify_response, services)


@router.post(
    "/sync",
    operation_id="index_sync",
    status_code=202,
    response_model=JobAccepted,
    responses=error_responses(409, *INDEX_UNREADABLE, 507),
)
async def sync(services: ServicesDep) -> JobAccepted:
    """Compare the whole vault with the index in the background (new, changed, moved and deleted notes);
    follow it at /index/status. The watcher does this note by note; this catches anything it could not see."""
    job = await run_in_threadpool(services.sync_now)
    return JobAccepted(job_id=job.id)


@router.post(
    "/rebuild",
    operation_id="index_rebuild",
    status_code=202,
    response_model=JobAccepted,
    responses=error_responses(409, *INDEX_UNREADABLE, 507),
)
async def rebuild(services: ServicesDep) -> JobAccepted:
    """Build a new index from the whole vault beside the serving one and switch to it when complete;
    searches keep answering from the old index until then. Follow it at /index/status."""
    # after a start with Qdrant down: open first (503 INDEX_UNAVAILABLE while it still is), but leave the
    # indexing to this rebuild
    await run_in_threadpool(services.open, start_indexing=False)
    job = services.jobs.start("rebuild", services.index.rebuild)
    return JobAccepted(job_id=job.id)
