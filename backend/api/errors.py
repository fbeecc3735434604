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


def describe_validation(errors: list[Any]) -> str:
    """pydantic/FastAPI validation errors as one line: `field: message; other: message`."""
    parts = []
    for error in errors:
        where = ".".join(str(part) for part in error.get("loc", ()) if part not in ("body", "query", "path"))
        parts.append(f"{where}: {error.get('msg')}" if where else str(error.get("msg")))
    return "; ".join(parts) or "invalid request"


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
    422: domain.InvalidRequestError("top_k: Input should be less than or equal to 50"),
    500: domain.KnowledgeBridgeError("an unexpected error occurred"),
    503: domain.IndexNotReadyError("the first indexing of the vault has not indexed any note yet"),
    507: domain.StorageFullError("only 42 MB free where DATA_DIR lives (MIN_FREE_DISK_MB is 100)"),
}


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """`responses=` for a route: each status documented with the envelope, the codes it carries and an
    example."""
    documented: dict[int | str, dict[str, Any]] = {}
    for status in statuses:
        codes = sorted(code for code, mapped in STATUS_BY_CODE.items() if mapped == status)
        if status == 500:
            codes = ["INTERNAL_ERROR", "STORE_ERROR"]
        example = envelope(_EXAMPLES[status])
        if status == 500:
            example = INTERNAL
        documented[status] = {
            "model": ErrorBody,
            "description": "Error codes: " + ", ".join(codes),
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


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return error_response(422, validation_envelope(describe_validation(list(exc.errors()))))


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
