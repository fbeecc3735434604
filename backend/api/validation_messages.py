"""pydantic's and FastAPI's validation errors in words: one line naming each field and the rule it broke.

Apart from the error envelope (errors.py) so that what only checks a request (input_types.request_from, for
the MCP tools and the CLI) needs neither FastAPI nor the envelope, and no import goes round in a circle.
"""

from __future__ import annotations

from typing import Any

_LOCATIONS = ("body", "query", "path", "header", "cookie")
JSON_CONTENT_TYPE = "send the body as JSON with the header `Content-Type: application/json`"


def describe_validation(
    errors: list[Any], *, located: bool = False, body: Any = None, content_type: str = ""
) -> str:
    """pydantic/FastAPI validation errors as one line naming each field and its rule:
    `query: at most 2000 characters; top_k: at most 50`. `located`: FastAPI's errors, whose `loc` starts
    with where the value was (body, query, path), unlike a model's own."""
    parts = []
    for error in errors:
        loc = tuple(error.get("loc", ()))
        if located and loc and loc[0] in _LOCATIONS:  # only that first part: a field may be named `query`
            loc = loc[1:]
        kind = str(error.get("type", ""))
        if kind == "json_invalid":
            parts.append(_json_error(error, body))
            continue
        if not loc and kind in ("model_attributes_type", "dict_type", "model_type"):
            if "json" not in content_type.lower():
                parts.append(f"request body: {JSON_CONTENT_TYPE} (got {content_type or 'no Content-Type'})")
            else:
                parts.append("request body: must be a JSON object of the fields listed at /docs")
            continue
        where = ".".join(str(part) for part in loc) or "request"
        parts.append(f"{where}: {_rule(kind, error)}")
    return "; ".join(parts) or "invalid request"


def _rule(kind: str, error: dict[str, Any]) -> str:
    """The broken rule in a few words (pydantic's own message where it already says it well)."""
    ctx = error.get("ctx") or {}
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "not a field of this request (see /docs for the fields)"
    if kind in ("string_too_long", "too_long"):
        unit = "characters" if kind == "string_too_long" else "items"
        return f"at most {ctx.get('max_length')} {unit}"
    if kind in ("string_too_short", "too_short"):
        minimum = ctx.get("min_length")
        return "must not be empty" if minimum == 1 else f"at least {minimum} characters"
    bounds = {
        "less_than_equal": ("at most", "le"),
        "less_than": ("less than", "lt"),
        "greater_than_equal": ("at least", "ge"),
        "greater_than": ("more than", "gt"),
    }
    if kind in bounds:
        words, key = bounds[kind]
        return f"{words} {ctx.get(key)}"
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ").removeprefix("Assertion failed, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    return message


def _json_error(error: dict[str, Any], body: Any) -> str:
    """Where the JSON breaks, as line and column (FastAPI gives a character offset)."""
    loc = tuple(error.get("loc", ()))
    reason = (error.get("ctx") or {}).get("error") or "not valid JSON"
    position = loc[-1] if loc and isinstance(loc[-1], int) else None
    text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
    if position is None or not isinstance(text, str):
        return f"request body: invalid JSON ({reason})"
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"request body: invalid JSON at line {line}, column {column}: {reason}"
