"""`/docs` (Swagger UI) and `/redoc` served with their scripts and styles from the service itself, so the
pages render on a machine without internet (FastAPI's own pages load them from a CDN).

The assets come from the `fastapi-offline` package (pinned in requirements.txt), which ships the
swagger-ui-bundle.js, swagger-ui.css and redoc.standalone.js releases: upgraded with a version bump, never
copied into this repository by hand. Only its static folder is used, with FastAPI's own page builders.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS_DIR = Path(fastapi_offline.__file__).resolve().parent / "static"
ASSETS_URL = "/docs-assets"


def install_docs_pages(app: FastAPI) -> None:
    """Add /docs, /redoc and their assets; the app must be created with docs_url=None, redoc_url=None."""
    app.mount(ASSETS_URL, StaticFiles(directory=ASSETS_DIR), name="docs-assets")
    _serve_page(
        app,
        "/docs",
        "Swagger UI",
        get_swagger_ui_html,
        swagger_js_url=f"{ASSETS_URL}/swagger-ui-bundle.js",
        swagger_css_url=f"{ASSETS_URL}/swagger-ui.css",
        swagger_favicon_url=f"{ASSETS_URL}/favicon.png",
    )
    _serve_page(
        app,
        "/redoc",
        "ReDoc",
        get_redoc_html,
        redoc_js_url=f"{ASSETS_URL}/redoc.standalone.js",
        redoc_favicon_url=f"{ASSETS_URL}/favicon.png",
        with_google_fonts=False,  # a font from Google would be the one request leaving the machine
    )


def _serve_page(
    app: FastAPI, path: str, name: str, build: Callable[..., HTMLResponse], **assets: object
) -> None:
    """Serve at `path` the page FastAPI's `build` makes of the app's schema, titled "<app> - <name>", with
    `assets` (the builder's own arguments: where its scripts, styles and icon are)."""
    openapi_url = app.openapi_url or "/openapi.json"
    title = f"{app.title} - {name}"

    @app.get(path, include_in_schema=False)
    async def page() -> HTMLResponse:
        return build(openapi_url=openapi_url, title=title, **assets)
