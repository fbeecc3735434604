"""An error's suggestion as an MCP client can follow it. The errors speak to REST clients (`POST
/index/rebuild`, `GET /memory`, the schema at /docs); an MCP client calls tools, and has no route to call:
each route named is said as the tool that does the same, else as the command a person types
(`python -m backend rebuild`), and the schema as the tools' own. REST answers keep the routes."""

from __future__ import annotations

from backend.config import PROGRAM

# longest first where one holds another; every route a suggestion names (tests/api/test_mcp_advice.py)
AS_MCP = (
    ("GET /index/status", "the index_status tool"),
    ("GET /memory", "the list_memories tool"),
    ("POST /index/rebuild", f"`{PROGRAM} rebuild`"),
    ("POST /index/sync", f"`{PROGRAM} sync`"),
    ("POST /index/calibrate", f"`{PROGRAM} calibrate`"),
    ("Fix the request fields named in detail", "Fix the arguments named in detail"),
    ("the schema is at /docs", "each tool's input schema (tools/list) says what it takes"),
)


def mcp_suggestion(suggestion: str) -> str:
    for route, action in AS_MCP:
        suggestion = suggestion.replace(route, action)
    return suggestion
