"""The look-inside page (GET /) and its assets (GET /page/<file>): hand-written HTML, CSS and ES modules from
backend/api/page/, served by the service itself — no build step, no CDN, nothing from another host.

The page and its assets hold no data: they load without the API key (guards.PAGE_PATHS; the Host/Origin rule
still applies without a key), and the page then asks for the key and sends it on every API call, as any
client does. Every answer carries a strict Content-Security-Policy: scripts, styles and requests only from
this origin, no inline script or style, no frames, no forms posting anywhere, so a note's text that slipped
into the DOM as markup still could not run.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import Response
from starlette.exceptions import HTTPException

PAGE_DIR = Path(__file__).resolve().parent.parent / "page"
ASSET_PREFIX = "/page/"
CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    # a new version of the service serves new files under the same names: the browser asks again each time
    # (they are small, and a stale module beside a fresh one would break the page)
    "Cache-Control": "no-cache",
}


def page_files() -> dict[str, Path]:
    """The files the page may load, by name: exactly what backend/api/page/ holds (no sub-folders), read
    once, so a request can name nothing else."""
    return {p.name: p for p in sorted(PAGE_DIR.iterdir()) if p.is_file() and p.suffix in CONTENT_TYPES}


def _answer(path: Path) -> Response:
    return Response(path.read_bytes(), media_type=CONTENT_TYPES[path.suffix], headers=SECURITY_HEADERS)


def page_router() -> APIRouter:
    router = APIRouter(include_in_schema=False)
    files = page_files()

    @router.get("/")
    async def page() -> Response:
        return _answer(files["index.html"])

    @router.get(ASSET_PREFIX + "{name}")
    async def asset(name: str) -> Response:
        if name not in files or name == "index.html":
            raise HTTPException(404)  # the router's own 404: the NOT_FOUND envelope
        return _answer(files[name])

    return router
