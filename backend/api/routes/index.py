from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from backend.api.deps import ServicesDep
from backend.api.schemas import ErrorBody, FailedFile, IndexStatus, JobInfo, LinkCountsOut, RebuildAccepted
from backend.bootstrap import Services

router = APIRouter(prefix="/index", tags=["index"])


def _status(services: Services) -> IndexStatus:
    job = services.jobs.current
    settings = services.settings
    return IndexStatus(
        indexed_notes=services.index.indexed_notes,
        indexed_chunks=services.store.count(),
        links=LinkCountsOut(**asdict(services.index.graph.counts())),
        last_indexed=services.index.last_indexed,
        embedding_model=services.index.identity.embedding_model,
        embedding_dimension=services.index.identity.dimension,
        vault_path=str(settings.vault_path),
        store=settings.qdrant_url or "embedded",
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


@router.get("/status", response_model=IndexStatus, responses={503: {"model": ErrorBody}})
async def index_status(services: ServicesDep) -> IndexStatus:
    """What is indexed, with which model, and the progress of the running or last job."""
    return await run_in_threadpool(_status, services)


@router.post(
    "/rebuild", status_code=202, response_model=RebuildAccepted, responses={409: {"model": ErrorBody}}
)
async def rebuild(services: ServicesDep) -> RebuildAccepted:
    """Re-create the index from the whole vault in the background; follow it at /index/status."""
    job = services.jobs.start("rebuild", services.index.rebuild)
    return RebuildAccepted(job_id=job.id)
