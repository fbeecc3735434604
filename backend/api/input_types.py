"""Request field types that accept what the OpenAPI schema says, and nothing more.

pydantic's lax mode would also take `0`/`1` for a boolean, `"5"` for a number in a JSON body, and a Unix time
for a day or a moment. An agent reading the schema (or the OpenClaw tool definitions made from it) never sends
those on purpose; taking them silently hides its bugs, and the schema-driven fuzz test holds us to the schema.
Query parameters arrive as text, so only the day and moment types apply to them.

The MCP tools and the CLI build the same request bodies from their own arguments with `request_from`.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, Field, Strict, ValidationError

from backend.api.validation_messages import describe_validation
from backend.domain.errors import InvalidRequestError

Request = TypeVar("Request", bound=BaseModel)

MAX_PAGE = 500  # items one page of a listing holds at most (notes, links not created yet, facts), every door

_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_MOMENT = re.compile(r"\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}.*")


def _integer(value: object) -> object:
    # JSON Schema's integer includes 11.0 (a number with no fraction); it excludes "11" and true
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("Input should be a valid integer")
    if isinstance(value, float) and not value.is_integer():
        raise ValueError("Input should be a valid integer, got a number with a fractional part")
    return int(value)


def _day(value: object) -> object:
    if isinstance(value, date):  # from Python callers (the MCP tools)
        return value
    if not isinstance(value, str) or not _DAY.fullmatch(value):
        raise ValueError("Input should be a day as YYYY-MM-DD")
    return value


def _moment(value: object) -> object:
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not (_MOMENT.fullmatch(value) or _DAY.fullmatch(value)):
        raise ValueError("Input should be an ISO 8601 date-time, e.g. 2026-03-28T09:00:00Z")
    return value


JsonBool = Annotated[bool, Strict()]
JsonInt = Annotated[int, BeforeValidator(_integer)]

# Bounds before the validator: after it, inside an Optional, pydantic writes them into the schema as unknown
# "ge"/"le" keys that clients (and the fuzzer) do not read.
ChunksPerNote = Annotated[int, Field(ge=1, le=50), BeforeValidator(_integer)]
LineNumber = Annotated[int, Field(ge=1), BeforeValidator(_integer)]  # a note's lines count from 1
PageSize = Annotated[int, Field(ge=1, le=MAX_PAGE), BeforeValidator(_integer)]
PageOffset = Annotated[int, Field(ge=0), BeforeValidator(_integer)]


JsonFloat = Annotated[float, Strict()]  # an integer is still a number
IsoDay = Annotated[date, BeforeValidator(_day)]
IsoMoment = Annotated[datetime, BeforeValidator(_moment)]


def request_from(model: type[Request], **arguments: Any) -> Request:
    """The request body an MCP tool's or a CLI command's arguments make, checked as the HTTP route checks it
    (an argument left out, None, takes the field's default); a broken rule is the route's VALIDATION_ERROR."""
    try:
        return model(**{name: value for name, value in arguments.items() if value is not None})
    except ValidationError as exc:
        raise InvalidRequestError(describe_validation(list(exc.errors()))) from None
