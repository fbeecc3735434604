"""The one error envelope (`error_code`, `detail`, `recoverable`, `suggestion`) for every failure."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend.api.schemas import ErrorBody
from backend.domain import errors as domain

log = logging.getLogger(__name__)

STATUS_BY_CODE: dict[str, int] = {
    domain.IndexNotReadyError.code: 503,
    domain.IndexUnavailableError.code: 503,
    domain.EmbedderUnavailableError.code: 503,
    domain.EmbeddingModelMismatchError.code: 409,
    domain.ReindexInProgressError.code: 409,
    domain.ModelNotFoundError.code: 503,
    domain.StoreError.code: 500,
    domain.NoteNotFoundError.code: 404,
    domain.IndexCorruptedError.code: 503,
    domain.StorageFullError.code: 507,
}


def error_response(
    status: int,
    code: str,
    detail: str,
    *,
    recoverable: bool,
    suggestion: str,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body = ErrorBody(error_code=code, detail=detail, recoverable=recoverable, suggestion=suggestion)
    return JSONResponse(status_code=status, content=body.model_dump(), headers=headers)


async def _domain_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, domain.KnowledgeBridgeError)
    status = STATUS_BY_CODE.get(exc.code, 500)
    return error_response(
        status, exc.code, exc.detail, recoverable=exc.recoverable, suggestion=exc.suggestion
    )


def _describe(error: dict) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()) if part != "body")
    return f"{where}: {error.get('msg')}" if where else str(error.get("msg"))


async def _validation_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    detail = "; ".join(_describe(err) for err in exc.errors()) or "invalid request"
    return error_response(
        422,
        "VALIDATION_ERROR",
        detail,
        recoverable=True,
        suggestion="Fix the request fields named in detail; the schema is at /docs.",
    )


_HTTP_CODES = {401: "UNAUTHORIZED", 404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED"}


async def _http_error(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = _HTTP_CODES.get(exc.status_code, "HTTP_ERROR")
    suggestion = {
        401: "Send the configured API key as `Authorization: Bearer <key>`.",
        404: "Check the path; the endpoints are listed at /docs.",
    }.get(exc.status_code, "Check the request against /docs.")
    return error_response(
        exc.status_code,
        code,
        str(exc.detail),
        recoverable=exc.status_code < 500,
        suggestion=suggestion,
        headers=getattr(exc, "headers", None),
    )


async def _unexpected(_: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error", exc_info=exc)  # the trace goes to the log, never to the client
    return error_response(
        500,
        "INTERNAL_ERROR",
        "an unexpected error occurred",
        recoverable=False,
        suggestion="Check the service logs; retrying may not help.",
    )


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(domain.KnowledgeBridgeError, _domain_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
