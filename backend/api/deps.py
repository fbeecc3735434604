"""One provider per dependency; routes declare what they need with these aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from backend.bootstrap import Services


async def get_services(request: Request) -> Services:
    # async, though it awaits nothing: FastAPI runs a plain `def` dependency in the thread pool, a round trip
    # to a worker thread and back (~0.2 ms) on every request just to read an attribute
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]
