"""The layering rule: inner layers never import outer ones, and the domain imports no framework or I/O."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

BACKEND = Path(__file__).resolve().parent.parent / "backend"

FORBIDDEN = {
    "domain": (
        "backend.application", "backend.infrastructure", "backend.api", "backend.entrypoints",
        "backend.bootstrap", "backend.config", "fastapi", "pydantic", "qdrant_client", "qdrant_edge", "httpx",
        "onnxruntime", "yaml", "markdown_it", "watchdog", "os", "pathlib", "io",
    ),
    "application": (
        "backend.infrastructure", "backend.api", "backend.entrypoints", "backend.bootstrap", "fastapi",
        "qdrant_client", "qdrant_edge", "httpx", "onnxruntime",
    ),
    "infrastructure": ("backend.api", "backend.entrypoints", "backend.bootstrap", "fastapi"),
    # the API reaches adapters only through the composition root (bootstrap), never by importing them
    "api": ("backend.infrastructure",),
}  # fmt: skip


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_does_not_import_outward(layer: str) -> None:
    offences = [
        f"{path.relative_to(BACKEND)} imports {name}"
        for path in sorted((BACKEND / layer).rglob("*.py"))
        for name in _imports(path)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[layer])
    ]
    assert offences == []


def test_no_route_and_no_other_door_imports_a_route() -> None:
    """A route only translates: what two doors share (the use case and its translation) lives outside the
    route modules, so no route imports another, and the MCP tools and the CLI import none."""
    routes = BACKEND / "api" / "routes"
    doors = [
        *routes.glob("*.py"),
        BACKEND / "api" / "mcp_server.py",
        *(BACKEND / "entrypoints" / "cli").glob("*.py"),
    ]
    offences = [
        f"{path.relative_to(BACKEND)} imports {name}"
        for path in sorted(doors)
        for name in _imports(path)
        if name.startswith("backend.api.routes.")
    ]
    assert offences == []
