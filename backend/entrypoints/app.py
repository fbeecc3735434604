"""App factory. The lifespan opens the store and embedder, starts first indexing, and closes everything."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.concurrency import run_in_threadpool

from backend.api.docs_pages import install_docs_pages
from backend.api.errors import error_responses, install_error_handlers
from backend.api.guards import document_security, install_guards
from backend.api.lean_search import install_lean_routes
from backend.api.loop_lag import LoopLag, probing
from backend.api.mcp_http import mcp_routes
from backend.api.mcp_server import build_mcp_server
from backend.api.routes import health, index, memory, notes, search
from backend.api.routes.page import page_router
from backend.bootstrap import Services, build_services
from backend.config import Settings, load_settings
from backend.domain.errors import IndexUnavailableError, StorageFullError
from backend.vault_set import Library

log = logging.getLogger(__name__)


def open_services(
    settings: Settings,
    *,
    settle: Callable[[], None] | None = None,
    freeze: Callable[[], None] | None = None,
) -> Services:
    """Build and open everything, and start the first indexing or catch-up sync in the background.
    `settle`: run once the index is loaded and after each job (`serve` settles the heap there); `freeze`:
    as the search memory's warm-up reads state in (`serve` freezes the heap there)."""
    services = build_services(settings, settle=settle, freeze=freeze)
    # Watch first, then scan: a change made while the start-up scan runs is an event the watcher applies,
    # and one made before it is seen by the scan. The other way round, the window between them was lost.
    try:
        services.start_watcher()
        services.supervisor.open()
    except (IndexUnavailableError, StorageFullError) as exc:
        if not settings.qdrant_url and not isinstance(exc, StorageFullError):
            services.close()  # embedded: another process holds the data directory; waiting will not help
            raise
        # A Qdrant server that is down now may be up in a minute, a full disk may have room again: serve
        # anyway, answer the error, and open the index on the first request that can (see api/deps.py).
        log.error("starting without the index: %s", exc.detail)
    except Exception:
        services.close()
        raise
    services.supervisor.warm_embedder()
    services.warm_search()
    return services


def open_library(settings: Settings) -> Library:
    """Every vault the settings name, each opened as `open_services` opens one (VAULTS unset: the one)."""
    return Library.open(settings, open_services)


def create_app(
    settings: Settings | None = None,
    *,
    services: Services | None = None,
    library: Library | None = None,
    instance: str | None = None,
    on_stop: Callable[[], None] | None = None,
) -> FastAPI:
    """`services` (one vault) or `library` (every vault of VAULTS) lets the CLI open the store first, so a
    start-up failure is one clear line; `instance` names this run in /health and `on_stop` runs as it stops
    (`serve` records where it listens in DATA_DIR and takes the record away then:
    infrastructure/running_service.py)."""
    settings = settings or load_settings()
    prepared = library if library is not None else Library.single(services) if services is not None else None
    mcp = build_mcp_server(lambda: app.state.library, settings, version=health.VERSION)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        vaults = prepared if prepared is not None else await run_in_threadpool(open_library, settings)
        app.state.library = vaults
        app.state.loop_lag = LoopLag()
        try:
            # the MCP endpoint's task group, and the loop's lag probe, for the app's lifetime
            async with mcp.session_manager.run(), probing(app.state.loop_lag):
                yield
        finally:
            if on_stop is not None:  # first: a client must not find a service that no longer answers
                on_stop()
            await run_in_threadpool(vaults.close)

    app = FastAPI(
        title="Knowledge Bridge",
        version=health.VERSION,
        description="Hybrid search over an Obsidian vault for agents and people.",
        lifespan=lifespan,
        docs_url=None,  # served with local assets instead of a CDN's: docs_pages.py
        redoc_url=None,
    )
    app.state.instance = instance or secrets.token_hex(8)
    install_docs_pages(app)
    install_error_handlers(app)
    install_guards(app, settings)  # API_KEY, body and URL limits, CORS: around every route, /mcp included
    edge = error_responses(400, 413, 414)  # any request can be refused at the edge (guards.py)
    app.include_router(health.router, responses=error_responses("INTERNAL_ERROR") | edge)
    # every route but /health can answer these (403: no API_KEY and a foreign host or page; 408: a body that
    # does not arrive in time; 503: the admission pool is full)
    documented = error_responses(401, "FOREIGN_REQUEST", "REQUEST_TIMEOUT", 500, "SERVER_BUSY") | edge
    for router in (search.router, notes.router, memory.router, index.router):
        app.include_router(router, responses=documented)
    app.include_router(page_router(), responses=documented)  # the look-inside page at / (not in the OpenAPI)
    install_lean_routes(app)  # POST /search the short way, its FastAPI route behind it (lean_search.py)
    app.router.routes.extend(mcp_routes(mcp))  # MCP at /mcp, both transports (not in the OpenAPI)
    if settings.api_key:
        _with_security(app)
    return app


def _with_security(app: FastAPI) -> None:
    """The schema says every operation but /health needs the bearer key (built once, on first request)."""
    plain = app.openapi

    def openapi() -> dict:
        if app.openapi_schema is None:
            app.openapi_schema = document_security(plain())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
