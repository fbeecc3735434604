"""The agent docs: OpenClaw tool definitions regenerated from the live OpenAPI schema equal the committed
file, each tool is a usable JSON Schema that accepts the API's own request examples, SKILL.md shows real
answers, and the README links both."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from backend.config import REPO_ROOT, load_settings
from backend.main import create_app
from scripts.openclaw_tools import TOOLS_FILE, render

AGENTS = REPO_ROOT / "docs" / "agents"


@pytest.fixture(scope="module")
def tools() -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in json.loads(TOOLS_FILE.read_text(encoding="utf-8"))["tools"]}


def test_the_committed_tools_are_what_the_live_schema_generates() -> None:
    assert TOOLS_FILE.read_text(encoding="utf-8") == render(), "run `make agent-tools` and commit the result"


def test_every_operation_is_a_tool_with_a_valid_schema(tools: dict[str, dict[str, Any]]) -> None:
    openapi = create_app(load_settings(embedding_provider="none")).openapi()
    operation_ids = {op["operationId"] for ops in openapi["paths"].values() for op in ops.values()}
    assert set(tools) == operation_ids - {"health"}
    assert {"search", "build_context", "get_note", "list_notes", "note_links", "remember"} <= set(tools)
    for tool in tools.values():
        Draft202012Validator.check_schema(tool["parameters"])
        assert len(tool["description"]) >= 40
        assert "\n" not in tool["description"]
        for name in re.findall(r"{(\w+)}", tool["http"]["path"]):
            assert name in tool["http"]["path_params"]
            assert name in tool["parameters"]["required"]


@pytest.mark.parametrize(
    ("tool", "arguments", "valid"),
    [
        ("search", {"query": "how much do I owe Sreenivas?", "top_k": 3}, True),
        ("search", {"query": "x", "top_k": 500}, False),
        ("search", {"top_k": 3}, False),
        ("search", {"query": "x", "colour": "red"}, False),
        ("build_context", {"query": "knee exercises", "max_chars": 1200, "include_memory": True}, True),
        (
            "get_note",
            {"note_path": "Finance/Money with Sreenivas.md", "start_line": 14, "end_line": 18},
            True,
        ),
        ("get_note", {"start_line": 14}, False),
        ("list_notes", {"tag": "finance", "sort": "date", "limit": 2}, True),
        ("list_notes", {"sort": "size"}, False),
        ("remember", {"key": "k", "value": "v", "source": "Home.md"}, True),
        ("remember", {"key": "k", "value": "v"}, False),
    ],
)
def test_tool_schemas_accept_real_calls_and_refuse_bad_ones(
    tools: dict[str, dict[str, Any]], tool: str, arguments: dict, valid: bool
) -> None:
    errors = list(Draft202012Validator(tools[tool]["parameters"]).iter_errors(arguments))
    assert (errors == []) is valid, [e.message for e in errors]


def test_the_api_request_examples_fit_the_tools(tools: dict[str, dict[str, Any]]) -> None:
    openapi = create_app(load_settings(embedding_provider="none")).openapi()
    schemas = openapi["components"]["schemas"]
    for name, request in (
        ("search", "SearchRequest"),
        ("build_context", "ContextRequest"),
        ("remember", "MemoryIn"),
    ):
        for example in schemas[request]["examples"]:
            assert list(Draft202012Validator(tools[name]["parameters"]).iter_errors(example)) == [], (
                name,
                example,
            )


def test_the_skill_shows_real_answers_for_every_example() -> None:
    skill = (AGENTS / "SKILL.md").read_text(encoding="utf-8")
    assert skill.startswith("---\nname: knowledge-bridge\ndescription: ")
    blocks = re.findall(r"<!-- example: (\w+) -->\n(.*?)\n<!-- /example -->", skill, re.DOTALL)
    assert len(blocks) >= 12
    for name, block in blocks:
        answer = re.search(r"```json\n(?:# HTTP \d+\n)?(.*?)\n```", block, re.DOTALL)
        assert answer is not None, f"example {name} holds no captured answer: run `make agent-docs`"
        json.loads(answer.group(1))
        assert "[REDACTED" not in block  # the example vault holds no secrets


def test_the_skill_curl_examples_are_valid_shell_and_json() -> None:
    skill = (AGENTS / "SKILL.md").read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(curl .*?)\n```", skill, re.DOTALL)
    assert len(commands) >= 12
    for command in commands:
        words = shlex.split(command.replace("\\\n", " "))
        if "-d" in words:
            json.loads(words[words.index("-d") + 1])


def test_the_readme_links_the_agent_docs() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/agents/SKILL.md" in readme
    assert "docs/agents/openclaw-tools.json" in readme
