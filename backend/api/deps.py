"""One provider per dependency; routes declare what they need with these aliases."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request

from backend.bootstrap import Services
from backend.domain.errors import UnauthorizedError


def get_services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]


def check_api_key(headers: Mapping[str, str], expected: str | None) -> None:
    """Raise UnauthorizedError unless `headers` carry `expected` (nothing is needed when it is None).

    The one check for every protected entry point: the HTTP routes and the MCP endpoint."""
    if not expected:
        return
    header = headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    supplied = token.strip() if scheme.lower() == "bearer" else headers.get("x-api-key", "")
    if not supplied or not secrets.compare_digest(supplied.encode(), expected.encode()):
        raise UnauthorizedError("missing or wrong API key")


def require_api_key(request: Request) -> None:
    check_api_key(request.headers, request.app.state.services.settings.api_key)
