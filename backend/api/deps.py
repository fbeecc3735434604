"""One provider per dependency; routes declare what they need with these aliases."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from backend.bootstrap import Services


def get_services(request: Request) -> Services:
    return request.app.state.services  # type: ignore[no-any-return]


ServicesDep = Annotated[Services, Depends(get_services)]


def require_api_key(request: Request) -> None:
    expected = request.app.state.services.settings.api_key
    if not expected:
        return
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    supplied = token if scheme.lower() == "bearer" else request.headers.get("x-api-key", "")
    if not supplied or not secrets.compare_digest(supplied.encode(), expected.encode()):
        raise HTTPException(401, "missing or wrong API key", headers={"WWW-Authenticate": "Bearer"})
