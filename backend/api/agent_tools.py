"""OpenClaw tool definitions generated from our own OpenAPI schema, so they cannot drift from the API.

One tool per operation (liveness aside): `name` is the operationId, `description` the operation's, and
`parameters` one JSON Schema object holding the path, query and body parameters side by side (references
inlined, so each tool stands alone). `http` says how to call it: method, path template, and which parameters
go in the path, the query string and the JSON body.
"""

from __future__ import annotations

import copy
from typing import Any

SKIPPED_TAGS = frozenset({"health"})
GENERATED_BY = (
    "generated from the OpenAPI schema by `make agent-tools` (scripts/openclaw_tools.py): do not edit"
)


def _inline(schema: Any, components: dict[str, Any]) -> Any:
    """`schema` with every `$ref` replaced by the schema it names, and pydantic's auto titles dropped."""
    if isinstance(schema, list):
        return [_inline(item, components) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        resolved = _inline(copy.deepcopy(components[name]), components)
        return {**resolved, **{k: v for k, v in schema.items() if k != "$ref"}}
    return {key: _inline(value, components) for key, value in schema.items() if key != "title"}


def _prose(text: str) -> str:
    """A docstring as prose: its line wraps undone, its paragraphs kept."""
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in text.split("\n\n") if paragraph.strip())


def _tool(path: str, method: str, operation: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    required: list[str] = []
    where: dict[str, list[str]] = {"path_params": [], "query_params": [], "body_params": []}
    for param in operation.get("parameters", []):
        schema = _inline(param["schema"], components)
        if "description" in param:
            schema = {"description": param["description"], **schema}
        properties[param["name"]] = schema
        where[f"{param['in']}_params"].append(param["name"])
        if param.get("required"):
            required.append(param["name"])
    body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None:
        inlined = _inline(body, components)
        for name, schema in inlined["properties"].items():
            properties[name] = schema
            where["body_params"].append(name)
        required += inlined.get("required", [])
    ordered = {name: properties[name] for name in required} | properties  # required ones first
    return {
        "name": operation["operationId"],
        "description": _prose(operation.get("description") or operation.get("summary", "")),
        "parameters": {
            "type": "object",
            "properties": ordered,
            "required": required,
            "additionalProperties": False,
        },
        "http": {"method": method.upper(), "path": path, **where},
    }


def openclaw_tools(openapi: dict[str, Any]) -> dict[str, Any]:
    components = openapi.get("components", {}).get("schemas", {})
    tools = [
        _tool(path, method, operation, components)
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if not SKIPPED_TAGS & set(operation.get("tags", []))
    ]
    return {
        "$comment": GENERATED_BY,
        "service": openapi["info"]["title"],
        "version": openapi["info"]["version"],
        "tools": tools,
    }
