"""One provider per dependency; routes declare what they need with these aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from backend.bootstrap import Services
from backend.domain.errors import VaultUnavailableError
from backend.vault_set import Library


async def get_services(request: Request) -> Services:
    # async, though it awaits nothing: FastAPI runs a plain `def` dependency in the thread pool, a round trip
    # to a worker thread and back (~0.2 ms) on every request just to read an attribute
    services: Services | None = request.app.state.services
    if services is None:  # several vaults, none of which opened
        raise VaultUnavailableError("no vault of this service could be opened; see its log")
    return services


async def get_library(request: Request) -> Library:
    """Every vault the service serves (one without VAULTS), by name."""
    return request.app.state.library  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]
LibraryDep = Annotated[Library, Depends(get_library)]

VaultQuery = Annotated[
    str | None,
    Query(
        max_length=48,
        description="The vault (VAULTS name); needed only when the service serves several and, for a note "
        "path, when more than one of them holds it.",
        examples=["work"],
    ),
]
