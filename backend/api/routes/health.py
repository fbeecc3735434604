from __future__ import annotations

from fastapi import APIRouter, Request

from backend.api.schemas import Health

router = APIRouter(tags=["health"])

VERSION = "0.1.0"


@router.get("/health", operation_id="health", response_model=Health)
async def health(request: Request) -> Health:
    """Liveness: the process answers. Index and dependency state is at /index/status."""
    return Health(status="ok", version=VERSION, instance=request.app.state.instance)
