from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool

from backend.api.deps import LibraryDep, VaultQuery
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.status_answer import verify_answer
from backend.api.status_schemas import IndexStatus, JobAccepted, LoopLagOut, VerifyResult
from backend.api.vault_answers import status_vaults

log = logging.getLogger(__name__)

router = APIRouter(prefix="/index", tags=["index"])


@router.get(
    "/status",
    operation_id="index_status",
    response_model=IndexStatus,
    responses=error_responses("INDEX_CORRUPTED", "VAULT_UNAVAILABLE", 422, 507),
)
async def index_status(library: LibraryDep, request: Request, vault: VaultQuery = None) -> IndexStatus:
    """What is indexed, with which model, whether the watcher and embedder are up, and the progress of the
    running or last job. With several vaults: of the one asked (`vault`), else of the first, with every
    vault's state in `vaults`."""
    status = await status_vaults(library, vault)
    lag = getattr(request.app.state, "loop_lag", None)  # probed while the app's lifespan runs
    if lag is not None:
        probes, p50, p99, most = lag.summary()
        status.loop_lag = LoopLagOut(
            probes=probes, p50_ms=round(p50, 3), p99_ms=round(p99, 3), max_ms=round(most, 3)
        )
    return status


@router.get(
    "/verify",
    operation_id="index_verify",
    response_model=VerifyResult,
    responses=error_responses(*INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 422, 507),
)
async def verify(library: LibraryDep, vault: VaultQuery = None) -> VerifyResult:
    """Check the index against the vault on disk (missing, extra and stale notes) and against itself (chunk
    points vs note records, links without their note). Read-only; `python -m backend verify` asks this."""
    _, services = library.get(vault)
    return await run_in_threadpool(verify_answer, services)


# sync and rebuild start a job and answer alike: 202 and where to follow it, 409 while another job runs
STARTS_A_JOB: dict[str, Any] = {
    "status_code": 202,
    "response_model": JobAccepted,
    "responses": error_responses(409, 422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507),
}


@router.post("/sync", operation_id="index_sync", **STARTS_A_JOB)
async def sync(library: LibraryDep, vault: VaultQuery = None) -> JobAccepted:
    """Compare the whole vault with the index in the background (new, changed, moved and deleted notes);
    follow it at /index/status. The watcher does this note by note; this catches anything it could not see."""
    _, services = library.get(vault)
    job = await run_in_threadpool(services.supervisor.sync_now)
    return JobAccepted(job_id=job.id)


@router.post("/rebuild", operation_id="index_rebuild", **STARTS_A_JOB)
async def rebuild(library: LibraryDep, vault: VaultQuery = None) -> JobAccepted:
    """Build a new index from the whole vault beside the serving one and switch to it when complete;
    searches keep answering from the old index until then. Follow it at /index/status."""
    _, services = library.get(vault)
    job = await run_in_threadpool(services.supervisor.rebuild_now)
    return JobAccepted(job_id=job.id)


@router.post("/calibrate", operation_id="index_calibrate", **STARTS_A_JOB)
async def calibrate(library: LibraryDep, vault: VaultQuery = None) -> JobAccepted:
    """Fit the recall gate again for the serving embedding model, from this vault (a model without shipped
    weights: an Ollama or OpenAI-compatible one); `recall_calibration` in /index/status says which is in
    force. It is fitted by itself after the first index and a change of model; this is for on demand."""
    _, services = library.get(vault)
    job = await run_in_threadpool(services.supervisor.calibrate_now)
    return JobAccepted(job_id=job.id)
