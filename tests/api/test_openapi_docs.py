"""The OpenAPI schema documents every endpoint: a description, described parameters with examples, request and
response examples, and every example valid against its own schema."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from backend.config import load_settings
from backend.entrypoints.app import create_app


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return create_app(load_settings(embedding_provider="none")).openapi()


def operations(openapi: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for path, ops in openapi["paths"].items():
        for method, op in ops.items():
            yield f"{method.upper()} {path}", op


def component(openapi: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    return openapi["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]


def validator(openapi: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    # the whole document rides along so "#/components/schemas/..." references resolve
    return Draft202012Validator({**schema, "components": openapi["components"]})


def test_every_operation_is_described(openapi: dict[str, Any]) -> None:
    names = set()
    for where, op in operations(openapi):
        assert op.get("operationId"), where
        names.add(op["operationId"])
        assert len(op.get("description", "")) >= 40, f"{where} has no real description"
        for param in op.get("parameters", []):
            assert param.get("description"), f"{where} parameter {param['name']}"
            assert param.get("examples") or param["schema"].get("examples"), f"{where} {param['name']}"
    assert len(names) == len(list(operations(openapi)))  # operation ids are unique: they name the tools


def test_every_request_and_response_has_examples(openapi: dict[str, Any]) -> None:
    for where, op in operations(openapi):
        body = op.get("requestBody")
        if body is not None:
            schema = component(openapi, body["content"]["application/json"]["schema"])
            assert schema.get("examples"), f"{where} request"
        successes = {status: r for status, r in op["responses"].items() if status.startswith("2")}
        assert successes, where
        for status, response in successes.items():
            schema = component(openapi, response["content"]["application/json"]["schema"])
            assert schema.get("examples"), f"{where} {status} response"


def test_every_example_is_valid_against_its_schema(openapi: dict[str, Any]) -> None:
    checked = 0
    for name, schema in openapi["components"]["schemas"].items():
        for example in schema.get("examples", []):
            errors = list(validator(openapi, {"$ref": f"#/components/schemas/{name}"}).iter_errors(example))
            assert errors == [], (name, [e.message for e in errors])
            checked += 1
    for where, op in operations(openapi):
        for param in op.get("parameters", []):
            for example in param.get("examples") or param["schema"].get("examples", []):
                assert list(validator(openapi, param["schema"]).iter_errors(example)) == [], (
                    where,
                    param["name"],
                )
                checked += 1
        for status, response in op["responses"].items():
            example = response.get("content", {}).get("application/json", {}).get("example")
            if example is not None:
                schema = response["content"]["application/json"]["schema"]
                assert list(validator(openapi, schema).iter_errors(example)) == [], (where, status)
                checked += 1
    assert checked > 40
