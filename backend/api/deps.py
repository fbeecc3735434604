"""One provider per dependency; routes declare what they need with these aliases.

`ReadyDep` is the one way a request reaches an open index: a route that reads the index declares it and runs
its use case through it, and the MCP tools go through `opened` too. It opens only when the route runs, not
while FastAPI resolves dependencies: FastAPI resolves them before it validates the request, and an invalid
request answers 422 VALIDATION_ERROR whatever the store's state (a store that is down answers 503
INDEX_UNAVAILABLE to valid requests only).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import Depends, Request
from starlette.concurrency import run_in_threadpool

from backend.bootstrap import Services

T = TypeVar("T")


def get_services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]


def opened(services: Services) -> Services:
    """The services with the index open: a no-op once it is; after a start with the store down, it opens
    (and starts the indexing) now, or raises INDEX_UNAVAILABLE while the store still cannot be reached."""
    services.supervisor.open()
    return services


class Ready:
    """Runs a route's use case with the index open, in the worker pool (opening may read the whole index)."""

    def __init__(self, services: Services) -> None:
        self._services = services

    async def run(self, use_case: Callable[..., T], *args: object, **kwargs: object) -> T:
        """`use_case(services, *args, **kwargs)` once the index is open."""
        return await run_in_threadpool(lambda: use_case(opened(self._services), *args, **kwargs))


def ready(request: Request) -> Ready:
    return Ready(get_services(request))


ReadyDep = Annotated[Ready, Depends(ready)]
