from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response
from starlette.concurrency import run_in_threadpool

from backend.api.answers import forget_answer, memories_answer
from backend.api.deps import LibraryDep, VaultQuery
from backend.api.errors import error_responses
from backend.api.input_types import MAX_PAGE
from backend.api.memory_schemas import (
    KEY_PATTERN,
    MemoryDeleted,
    MemoryIn,
    MemoryListOut,
    MemoryStored,
)
from backend.api.vault_answers import remember_fact

router = APIRouter(prefix="/memory", tags=["memory"])


@router.post(
    "",
    operation_id="remember",
    response_model=MemoryStored,
    status_code=201,
    responses={200: {"model": MemoryStored, "description": "An existing fact replaced"}}
    | error_responses(400, "NOTE_NOT_FOUND", "NOTE_AMBIGUOUS", 422, 503, 507),
)
async def remember(body: MemoryIn, library: LibraryDep, response: Response) -> MemoryStored:
    """Remember a fact (`key`, `value`) tied to the vault note it comes from (`source`, which must be an
    indexed note). Facts are kept in their own collection, never in the vault, and survive restarts and index
    rebuilds; `/search` and `/context` with `include_memory: true` find them. The same key again replaces
    the fact (200 instead of 201)."""
    stored = await run_in_threadpool(remember_fact, library, body)
    response.status_code = 201 if stored.created else 200
    return stored


@router.get(
    "", operation_id="list_memories", response_model=MemoryListOut, responses=error_responses(422, 503, 507)
)
async def list_memories(
    library: LibraryDep,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE, description="Facts per page.", examples=[100])] = 100,
    offset: Annotated[
        int, Query(ge=0, description="Facts to skip (next_offset of the previous page).", examples=[0])
    ] = 0,
    vault: VaultQuery = None,
) -> MemoryListOut:
    """Every remembered fact, by key, one page at a time (values with secrets redacted)."""
    name, services = library.get(vault)
    return await run_in_threadpool(memories_answer, services, limit, offset, name)


@router.delete(
    "/{key}",
    operation_id="forget",
    response_model=MemoryDeleted,
    responses=error_responses("MEMORY_NOT_FOUND", 422, 503, 507),
)
async def forget(
    key: Annotated[
        str,
        Path(
            description="The key the fact was stored under.",
            examples=["sreenivas-balance"],
            json_schema_extra={"pattern": KEY_PATTERN},
        ),
    ],
    library: LibraryDep,
    vault: VaultQuery = None,
) -> MemoryDeleted:
    """Forget a remembered fact; 404 MEMORY_NOT_FOUND when there is none with that key."""
    _, services = library.get(vault)
    return await run_in_threadpool(forget_answer, services, key)
