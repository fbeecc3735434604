"""The one error envelope (`error_code`, `detail`, `recoverable`, `suggestion`) for every failure.

Every domain error code is mapped to its HTTP status here, once; the MCP tools reuse `envelope()` so an agent
sees the same body over both transports.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import iter_route_contexts
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from backend.api.schemas import ErrorBody
from backend.api.validation_messages import describe_validation
from backend.domain import errors as domain

log = logging.getLogger(__name__)

STATUS_BY_CODE: dict[str, int] = {
    domain.InvalidRequestError.code: 422,
    domain.SecurityViolationError.code: 400,
    domain.UnauthorizedError.code: 401,
    domain.ForeignRequestError.code: 403,
    domain.RequestTimeoutError.code: 408,
    domain.NoteNotFoundError.code: 404,
    domain.MemoryNotFoundError.code: 404,
    domain.RequestTooLargeError.code: 413,
    domain.UrlTooLongError.code: 414,
    domain.EmbeddingModelMismatchError.code: 409,
    domain.ReindexInProgressError.code: 409,
    domain.MigrationTargetNotEmptyError.code: 409,
    domain.VaultMismatchError.code: 409,
    domain.UnknownVaultError.code: 422,
    domain.NoteAmbiguousError.code: 409,
    domain.VaultUnavailableError.code: 503,
    domain.ServiceUnreachableError.code: 503,  # the CLI's, never an HTTP answer (NOT_ON_HTTP)
    domain.ServiceAmbiguousError.code: 409,  # the CLI's too
    domain.StoreError.code: 500,
    domain.KnowledgeBridgeError.code: 500,  # INTERNAL_ERROR
    domain.IndexNotReadyError.code: 503,
    domain.IndexUnavailableError.code: 503,
    domain.IndexCorruptedError.code: 503,
    domain.EmbedderUnavailableError.code: 503,
    domain.ModelNotFoundError.code: 503,
    domain.ServerBusyError.code: 503,
    domain.StorageFullError.code: 507,
}
RETRY_AFTER_SECONDS = 1  # a busy pool drains in well under a second of normal searches
_HEADERS_BY_CODE = {
    domain.UnauthorizedError.code: {"WWW-Authenticate": "Bearer"},
    domain.ServerBusyError.code: {"Retry-After": str(RETRY_AFTER_SECONDS)},
}

# Raised by the router itself (no domain error behind them).
ROUTING_CODES = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}
_ROUTING_SUGGESTIONS = {
    404: "Check the path; the endpoints are listed at /docs.",
    405: "Check the method; the endpoints and their methods are listed at /docs.",
}
VALIDATION_SUGGESTION = domain.InvalidRequestError.suggestion
INTERNAL = ErrorBody(
    error_code="INTERNAL_ERROR",
    detail="an unexpected error occurred",
    recoverable=False,
    suggestion="Check the service logs; retrying may not help.",
)


def status_of(code: str) -> int:
    return STATUS_BY_CODE.get(code, 500)


def envelope(exc: domain.KnowledgeBridgeError) -> ErrorBody:
    return ErrorBody(
        error_code=exc.code, detail=exc.detail, recoverable=exc.recoverable, suggestion=exc.suggestion
    )


def validation_envelope(detail: str) -> ErrorBody:
    return ErrorBody(
        error_code="VALIDATION_ERROR", detail=detail, recoverable=True, suggestion=VALIDATION_SUGGESTION
    )


def error_response(status: int, body: ErrorBody, *, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(status_code=status, content=body.model_dump(), headers=headers)


# -- OpenAPI: every documented error response is the envelope ---------------------------------------

_EXAMPLES: dict[int, domain.KnowledgeBridgeError] = {
    400: domain.SecurityViolationError("path leaves the vault: '../secrets.md'"),
    401: domain.UnauthorizedError("missing or wrong API key"),
    403: domain.ForeignRequestError("host 'evil.example' is not a name of this service"),
    408: domain.RequestTimeoutError("the request body did not arrive within 30 seconds"),
    404: domain.NoteNotFoundError("no indexed note at 'Projects/Nope.md'"),
    409: domain.ReindexInProgressError("a rebuild is already running"),
    413: domain.RequestTooLargeError("request body larger than 1048576 bytes"),
    414: domain.UrlTooLongError("path and query string longer than 16384 bytes"),
    422: domain.InvalidRequestError("top_k: at most 50"),
    500: domain.KnowledgeBridgeError("an unexpected error occurred"),
    503: domain.IndexNotReadyError("the first indexing of the vault has not indexed any note yet"),
    507: domain.StorageFullError("only 42 MB free where DATA_DIR lives (MIN_FREE_DISK_MB is 100)"),
}
# for routes that list only some codes of a status (the status's example above may not be one of them)
_CODE_EXAMPLES: dict[str, domain.KnowledgeBridgeError] = {e.code: e for e in _EXAMPLES.values()} | {
    e.code: e
    for e in (
        domain.EmbeddingModelMismatchError(
            "the index was built with all-MiniLM-L6-v2 (384-d) but the service is configured for "
            "mxbai-embed-large (1024-d); it will not mix models"
        ),
        domain.MemoryNotFoundError("no remembered fact with the key 'sreenivas-balance'"),
        domain.IndexCorruptedError("the index catalog file data/qdrant/active_generation.json is damaged"),
        domain.ServerBusyError("16 requests are being answered and 64 wait: try again in a second"),
        domain.UnknownVaultError("no vault named 'wrok'; this service serves: work, personal"),
        domain.NoteAmbiguousError("'Inbox.md' is in the vaults work and personal; name one with `vault`"),
        domain.VaultUnavailableError("the vault 'personal' is unavailable: its folder is gone"),
    )
}


# Raised only by command-line tools (`migrate`, opening a data directory of another vault): never an HTTP
# answer, so never listed under a route.
NOT_ON_HTTP = {
    domain.MigrationTargetNotEmptyError.code,
    domain.ServiceUnreachableError.code,
    domain.ServiceAmbiguousError.code,
}
# What a route reading the index answers when it cannot (a route that only reads settings does not).
INDEX_UNREADABLE = (
    domain.IndexNotReadyError.code,
    domain.IndexUnavailableError.code,
    domain.IndexCorruptedError.code,
)


def error_responses(*items: int | str) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each status documented with the envelope, the codes it carries and an
    example. An int documents every code of that status; a code (str) documents that code alone under its
    status, for routes that can answer only some codes of a status (/search never REINDEX_IN_PROGRESS)."""
    chosen: dict[int, set[str]] = {}
    for item in items:
        if isinstance(item, str):
            chosen.setdefault(status_of(item), set()).add(item)
        else:
            every = {code for code, mapped in STATUS_BY_CODE.items() if mapped == item} - NOT_ON_HTTP
            chosen.setdefault(item, set()).update(every)
    documented: dict[int | str, dict[str, Any]] = {}
    for status, codes in chosen.items():
        example = INTERNAL if status == 500 else envelope(_EXAMPLES[status])
        if example.error_code not in codes:
            example = envelope(_CODE_EXAMPLES[min(codes)])
        documented[status] = {
            "model": ErrorBody,
            "description": "Error codes: " + ", ".join(sorted(codes)),
            "content": {"application/json": {"example": example.model_dump()}},
        }
    return documented


# -- handlers --------------------------------------------------------------------------------------


def domain_error_response(exc: domain.KnowledgeBridgeError) -> JSONResponse:
    """The response for a domain error: its status, the envelope, and the headers its code calls for."""
    return error_response(status_of(exc.code), envelope(exc), headers=_HEADERS_BY_CODE.get(exc.code))


async def _domain_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, domain.KnowledgeBridgeError)
    return domain_error_response(exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    detail = describe_validation(
        list(exc.errors()), located=True, body=exc.body, content_type=request.headers.get("content-type", "")
    )
    return error_response(422, validation_envelope(detail))


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = ROUTING_CODES.get(exc.status_code, "HTTP_ERROR")
    body = ErrorBody(
        error_code=code,
        detail=str(exc.detail),
        recoverable=exc.status_code < 500,
        suggestion=_ROUTING_SUGGESTIONS.get(exc.status_code, "Check the request against /docs."),
    )
    headers = dict(getattr(exc, "headers", None) or {})
    if exc.status_code == 405:
        headers["Allow"] = _allowed_methods(request)
    return error_response(exc.status_code, body, headers=headers or None)


def _allowed_methods(request: Request) -> str:
    """Every method the path answers (RFC 9110 15.5.6). The router names only the first route it tried:
    GET and POST /memory are two routes, and a 405 from one of them would say `Allow: POST`."""
    methods: set[str] = set()
    for route in iter_route_contexts(request.app.routes):
        match, _ = route.matches(request.scope)
        if match is not Match.NONE:
            methods |= route.methods or set()
    return ", ".join(sorted(methods))


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)  # the trace goes to the log, never to the client
    return error_response(500, INTERNAL)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(domain.KnowledgeBridgeError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
