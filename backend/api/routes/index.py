from __future__ import annotations

import logging
from dataclasses import asdict

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.schemas import ErrorBody, FailedFile, IndexStatus, JobInfo, LinkCountsOut, RebuildAccepted
from backend.bootstrap import Services
from backend.domain.errors import IndexUnavailableError

log = logging.getLogger(__name__)

router = APIRouter(prefix="/index", tags=["index"])


def _status(services: Services) -> IndexStatus:
    try:
        services.open()  # no-op once open; after a start with Qdrant down, this is where it recovers
        chunks = services.store.count()
        links = LinkCountsOut(**asdict(services.index.graph.counts()))
        store_healthy = True
    except IndexUnavailableError as exc:
        log.warning("index status without the store: %s", exc.detail)
        chunks, links, store_healthy = 0, LinkCountsOut(total=0, resolved=0, unresolved=0, embeds=0), False
    job = services.jobs.current
    settings = services.settings
    return IndexStatus(
        indexed_notes=services.index.indexed_notes,
        dense_pending=services.index.dense_pending,
        indexed_chunks=chunks,
        links=links,
        last_indexed=services.index.last_indexed,
        embedding_model=services.index.identity.embedding_model,
        embedding_dimension=services.index.identity.dimension,
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
        failed_files=[FailedFile(path=f.rel_path, reason=f.reason) for f in services.index.failed_files],
    )


@router.get("/status", response_model=IndexStatus)
async def index_status(services: ServicesDep) -> IndexStatus:
    """What is indexed, with which model, and the progress of the running or last job."""
    return await run_in_threadpool(_status, services)


@router.post(
    "/rebuild",
    status_code=202,
    response_model=RebuildAccepted,
    responses={409: {"model": ErrorBody}, 503: {"model": ErrorBody}},
)
async def rebuild(services: ServicesDep) -> RebuildAccepted:
    """Re-create the index from the whole vault in the background; follow it at /index/status."""
    # after a start with Qdrant down: open first (503 INDEX_UNAVAILABLE while it still is), but leave the
    # indexing to this rebuild
    await run_in_threadpool(services.open, start_indexing=False)
    job = services.jobs.start("rebuild", services.index.rebuild)
    return RebuildAccepted(job_id=job.id)
