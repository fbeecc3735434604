"""One provider per dependency; routes declare what they need with these aliases."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Request

from backend.vault_set import Library


async def get_library(request: Request) -> Library:
    """Every vault the service serves (one without VAULTS), by name."""
    return request.app.state.library  # type: ignore[no-any-return]


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
