"""Every fake has every member of its port, and each method takes the port's parameters (names, kinds,
defaults), or takes `**request` and checks it against the port's signature (`port_arguments`). A member added
to a port, or a parameter renamed, fails here before it confuses a use-case test."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from backend.application.ports import ChunkStore, Embedder, GraphStore, MemoryStore, Vault
from backend.application.serving.serving_index import ServingIndex
from tests.fakes import (
    FakeEmbedder,
    FakeVault,
    InMemoryChunkStore,
    InMemoryGraphStore,
    InMemoryMemoryStore,
    wire,
)

FAKES: list[tuple[type, Any]] = [
    (ChunkStore, InMemoryChunkStore()),
    (GraphStore, InMemoryGraphStore()),
    (MemoryStore, InMemoryMemoryStore()),
    (Vault, FakeVault()),
    (Embedder, FakeEmbedder()),
    (ServingIndex, wire(embedder=FakeEmbedder()).index),
]


def parameters(method: Any) -> list[tuple[str, Any, Any]]:
    return [
        (p.name, p.kind, p.default) for p in inspect.signature(method).parameters.values() if p.name != "self"
    ]


@pytest.mark.parametrize(("port", "fake"), FAKES, ids=[port.__name__ for port, _ in FAKES])
def test_the_fake_has_every_member_of_its_port_with_its_parameters(port: type, fake: Any) -> None:
    for name, member in vars(port).items():
        if name.startswith("_"):
            continue
        assert hasattr(fake, name), f"{type(fake).__name__} lacks {port.__name__}.{name}"
        if not inspect.isfunction(member):
            continue  # a property: any attribute of that name answers it
        own = parameters(getattr(type(fake), name))
        if [kind for _, kind, _ in own] == [inspect.Parameter.VAR_KEYWORD]:
            continue  # checked against the port's signature on every call (tests/fakes/_engine.py)
        assert own == parameters(member), f"{type(fake).__name__}.{name} differs from {port.__name__}.{name}"
