"""What an MCP client is told to do: every suggestion an error carries, said as an MCP answer, names no route
(an MCP client calls tools, not `POST /index/rebuild`) but a tool or the command to type; the REST envelope
keeps the route. Every error class's own suggestion, and those raised with one of their own that name a
route, go through it."""

from __future__ import annotations

import re

import pytest

from backend.api.errors import VALIDATION_SUGGESTION, envelope
from backend.api.mcp_advice import mcp_suggestion
from backend.domain import errors
from backend.domain.errors import KnowledgeBridgeError

ROUTE = re.compile(r"\b(?:GET|POST|PUT|PATCH|DELETE) /|(?<![\w.])/docs\b")


def _classes(base: type[KnowledgeBridgeError]) -> list[type[KnowledgeBridgeError]]:
    """The error classes a service raises (the CLI's own ServiceError, only a client's, left out)."""
    subclasses = (c for sub in base.__subclasses__() for c in _classes(sub))
    return [base, *(c for c in subclasses if c.__module__ == errors.__name__)]


SUGGESTIONS = sorted(
    {
        *(c.suggestion for c in _classes(KnowledgeBridgeError)),
        errors.REBUILD_SUGGESTION,
        VALIDATION_SUGGESTION,
        # raised with their own (application/indexing/gate_upkeep.py: a fit without dense scores)
        "Check that the embedding model answers (GET /index/status, embedder), then fit again.",
    }
)


def test_some_suggestions_name_routes() -> None:
    """Else the next test proves nothing."""
    assert sum(bool(ROUTE.search(s)) for s in SUGGESTIONS) >= 6


@pytest.mark.parametrize("suggestion", SUGGESTIONS)
def test_no_suggestion_said_over_mcp_names_a_route(suggestion: str) -> None:
    said = mcp_suggestion(suggestion)
    assert not ROUTE.search(said), said
    if ROUTE.search(suggestion):  # said as what the client can do instead
        assert "tool" in said or "`python -m backend " in said


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (errors.IndexCorruptedError, "`python -m backend rebuild`"),
        (errors.IndexNotReadyError, "the index_status tool"),
        (errors.IndexNotReadyError, "start one with `python -m backend rebuild`"),
        (errors.StorageFullError, "then retry (`python -m backend sync`)"),
        (errors.ReindexInProgressError, "(the index_status tool)"),
        (errors.MemoryNotFoundError, "the list_memories tool"),
        (errors.InvalidRequestError, "tools/list"),
    ],
)
def test_each_route_is_said_as_a_tool_or_the_command(error: type[KnowledgeBridgeError], said: str) -> None:
    assert said in mcp_suggestion(error.suggestion)


@pytest.mark.parametrize("error", _classes(KnowledgeBridgeError))
def test_the_rest_envelope_keeps_the_routes(error: type[KnowledgeBridgeError]) -> None:
    assert envelope(error("detail")).suggestion == error.suggestion
