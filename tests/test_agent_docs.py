"""The agent docs: the OpenClaw plugin's tools and manifest regenerated from the live OpenAPI schema equal the
committed files, each tool is a usable JSON Schema that accepts the API's own request examples, the skill is
short and its examples show real answers, and the README links them."""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from backend.config import REPO_ROOT, load_settings
from backend.entrypoints.app import create_app
from scripts.openclaw_tools import MANIFEST_FILE, TOOLS_FILE, render

AGENTS = REPO_ROOT / "docs" / "agents"
EXAMPLES = AGENTS / "references" / "examples.md"


@pytest.fixture(scope="module")
def tools() -> dict[str, dict[str, Any]]:
    return {tool["name"]: tool for tool in json.loads(TOOLS_FILE.read_text(encoding="utf-8"))["tools"]}


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    """The live schema, built once for the module (building the app and its schema takes ~0.3 s)."""
    return create_app(load_settings(embedding_provider="none")).openapi()


def test_the_committed_plugin_files_are_what_the_live_schema_generates() -> None:
    for path, text in render().items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name}: run `make agent-tools` and commit it"


def test_the_plugin_tools_cover_the_api_with_valid_schemas(
    tools: dict[str, dict[str, Any]], openapi: dict[str, Any]
) -> None:
    operations = {
        op["operationId"]: (path, m.upper())
        for path, ops in openapi["paths"].items()
        for m, op in ops.items()
    }
    assert set(tools) == {
        "kb_search", "kb_context", "kb_note", "kb_note_links", "kb_list_notes", "kb_status", "kb_remember",
        "kb_index_admin",
    }  # fmt: skip
    for tool in tools.values():
        Draft202012Validator.check_schema(tool["parameters"])
        assert len(tool["description"]) >= 40
        assert "\n" not in tool["description"]
        routes = [tool["http"]] if tool["operation"] else list(tool["http"].values())
        for route in routes:
            assert (route["path"], route["method"]) in operations.values()
            for name in re.findall(r"{(\w+)}", route["path"]):
                assert name in route["path_params"]
                assert name in tool["parameters"]["required"]
        if tool["operation"]:
            assert operations[tool["operation"]] == (tool["http"]["path"], tool["http"]["method"])
    assert [name for name, tool in tools.items() if not tool["read_only"]] == [
        "kb_remember",
        "kb_index_admin",
    ]
    admin = tools["kb_index_admin"]
    assert admin["optional"] is True
    assert {action: route["path"] for action, route in admin["http"].items()} == {
        "sync": "/index/sync",
        "rebuild": "/index/rebuild",
    }


def test_the_manifest_declares_every_tool_and_the_config_schema(tools: dict[str, dict[str, Any]]) -> None:
    manifest = json.loads(MANIFEST_FILE.read_text(encoding="utf-8"))
    assert manifest["id"] == "knowledge-bridge"
    assert manifest["contracts"]["tools"] == list(tools)
    assert set(manifest["toolMetadata"]) == set(tools)
    assert manifest["toolMetadata"]["kb_remember"]["sideEffecting"] is True
    assert manifest["toolMetadata"]["kb_search"]["replaySafe"] is True
    config = manifest["configSchema"]
    Draft202012Validator.check_schema(config)
    validator = Draft202012Validator(config)
    assert validator.is_valid({"baseUrl": "http://backend:8000", "apiKey": "k", "timeoutMs": 5000})
    assert not validator.is_valid({"baseUrl": "http://backend:8000", "colour": "red"})
    assert not validator.is_valid({"timeoutMs": 10})
    package = json.loads((TOOLS_FILE.parent / "package.json").read_text(encoding="utf-8"))
    assert package["openclaw"]["extensions"] == ["./index.js"]
    assert set(package["files"]) >= {"index.js", "tools.json", "openclaw.plugin.json"}


@pytest.mark.parametrize(
    ("tool", "arguments", "valid"),
    [
        ("kb_search", {"query": "how much do I owe Sreenivas?", "top_k": 3}, True),
        ("kb_search", {"query": "x", "top_k": 500}, False),
        ("kb_search", {"top_k": 3}, False),
        ("kb_search", {"query": "x", "colour": "red"}, False),
        ("kb_context", {"query": "knee exercises", "max_chars": 1200, "include_memory": True}, True),
        (
            "kb_note",
            {"note_path": "Finance/Money with Sreenivas.md", "start_line": 14, "end_line": 18},
            True,
        ),
        ("kb_note", {"start_line": 14}, False),
        ("kb_list_notes", {"tag": "finance", "sort": "date", "limit": 2}, True),
        ("kb_list_notes", {"sort": "size"}, False),
        ("kb_remember", {"key": "k", "value": "v", "source": "Home.md"}, True),
        ("kb_remember", {"key": "k", "value": "v"}, False),
        ("kb_index_admin", {"action": "rebuild"}, True),
        ("kb_index_admin", {"action": "drop"}, False),
    ],
)
def test_tool_schemas_accept_real_calls_and_refuse_bad_ones(
    tools: dict[str, dict[str, Any]], tool: str, arguments: dict, valid: bool
) -> None:
    errors = list(Draft202012Validator(tools[tool]["parameters"]).iter_errors(arguments))
    assert (errors == []) is valid, [e.message for e in errors]


def test_the_api_request_examples_fit_the_tools(
    tools: dict[str, dict[str, Any]], openapi: dict[str, Any]
) -> None:
    schemas = openapi["components"]["schemas"]
    for name, request in (
        ("kb_search", "SearchRequest"),
        ("kb_context", "ContextRequest"),
        ("kb_remember", "MemoryIn"),
    ):
        for example in schemas[request]["examples"]:
            assert list(Draft202012Validator(tools[name]["parameters"]).iter_errors(example)) == [], (
                name,
                example,
            )


def test_the_skill_is_short_configures_itself_and_names_every_route() -> None:
    skill = (AGENTS / "SKILL.md").read_text(encoding="utf-8")
    assert skill.startswith("---\nname: knowledge-bridge\ndescription: ")
    assert len(skill.encode()) < 6000  # the details live in references/
    metadata = json.loads(re.search(r"^metadata: (.*)$", skill, re.MULTILINE).group(1))  # type: ignore[union-attr]
    assert metadata["openclaw"]["primaryEnv"] == "KB_API_KEY"
    assert "env" not in metadata["openclaw"]["requires"]  # no key needed on loopback: ready without one
    assert "${KB_URL:-http://127.0.0.1:8000}" in skill
    assert "skills.entries.knowledge-bridge" in skill
    for route in ("kb_search", "/mcp", "references/examples.md"):
        assert route in skill
    for code in (
        "VALIDATION_ERROR",
        "NOTE_NOT_FOUND",
        "UNAUTHORIZED",
        "INDEX_NOT_READY",
        "SERVICE_UNAVAILABLE",
    ):
        assert code in skill


def test_the_skill_examples_show_real_answers() -> None:
    skill = EXAMPLES.read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- example: (\w+) -->\n(.*?)\n<!-- /example -->", skill, re.DOTALL)
    assert len(blocks) >= 12
    for name, block in blocks:
        answer = re.search(r"```json\n(?:# HTTP \d+\n)?(.*?)\n```", block, re.DOTALL)
        assert answer is not None, f"example {name} holds no captured answer: run `make agent-docs`"
        json.loads(answer.group(1))
        assert "[REDACTED" not in block  # the example vault holds no secrets


def test_the_skill_curl_examples_are_valid_shell_and_json() -> None:
    skill = EXAMPLES.read_text(encoding="utf-8")
    commands = re.findall(r"```bash\n(curl .*?)\n```", skill, re.DOTALL)
    assert len(commands) >= 12
    for command in commands:
        words = shlex.split(command.replace("\\\n", " "))
        if "-d" in words:
            json.loads(words[words.index("-d") + 1])


def test_the_readme_links_the_agent_docs() -> None:
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/agents/SKILL.md" in readme
    assert "integrations/openclaw" in readme
    assert "openclaw-tools.json" not in readme
