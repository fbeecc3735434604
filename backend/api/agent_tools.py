"""The OpenClaw plugin's tools (integrations/openclaw/), generated from our own OpenAPI schema so they cannot
drift from the API.

Each plugin tool calls one operation (the admin tool: one of two, picked by its `action`): its `description`
is the operation's, its `parameters` one JSON Schema object holding the path, query and body parameters side
by side (references inlined, so each tool stands alone), and `http` says how to call it: method, path
template, and which parameters go in the path, the query string and the JSON body. The plugin's manifest
(`openclaw.plugin.json`: config schema, tool contracts, tool metadata) comes from the same table.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from backend.domain.recall.recall_budget import PLUGIN_RECALL

GENERATED_BY = (
    "generated from the OpenAPI schema by `make agent-tools` (scripts/openclaw_tools.py): do not edit"
)
PLUGIN_ID = "knowledge-bridge"


@dataclass(frozen=True)
class PluginTool:
    name: str
    label: str
    operations: tuple[str, ...]  # several: the tool takes an `action` naming one of them
    read_only: bool = True
    optional: bool = False  # OpenClaw sends it to a model only once the user allowlists it

    @property
    def actions(self) -> dict[str, str]:
        """action value -> operationId (`index_sync` -> `sync`)."""
        return {operation.removeprefix("index_"): operation for operation in self.operations}


TOOLS = (
    PluginTool("kb_search", "Search the vault", ("search",)),
    PluginTool("kb_context", "Context block for a question", ("build_context",)),
    PluginTool("kb_note", "Read a note", ("get_note",)),
    PluginTool("kb_note_links", "Links of a note", ("note_links",)),
    PluginTool("kb_list_notes", "List notes", ("list_notes",)),
    PluginTool("kb_status", "Index status", ("index_status",)),
    PluginTool("kb_remember", "Remember a fact", ("remember",), read_only=False),
    PluginTool("kb_index_admin", "Sync or rebuild the index", ("index_sync", "index_rebuild"), False, True),
)
ADMIN_NOTE = (
    "Admin tool, not read-only: `sync` compares the whole vault with the index now and applies what changed; "
    "`rebuild` builds a new index from the vault beside the serving one and switches to it when complete. "
    "Both answer 202 with a job id at once; follow the job with kb_status. Use only when the user asks."
)

PLUGIN_CLI = {
    "name": "kb",
    "description": "Sync or rebuild a Knowledge Bridge vault's index, with its progress",
    "hasSubcommands": True,
}

CONFIG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "baseUrl": {
            "type": "string",
            "description": "Base URL of the Knowledge Bridge service (in Compose: http://backend:8000); "
            "unset: $KB_URL, else http://127.0.0.1:8000.",
        },
        "apiKey": {
            "type": "string",
            "description": "The service's API_KEY, sent as `Authorization: Bearer <key>`; "
            "unset: $KB_API_KEY, else no header.",
        },
        "agentVaults": {
            "type": "object",
            "description": 'The vaults each agent may reach, by agent id (`"*"`: every agent not named; a '
            'key matches as OpenClaw normalizes ids, trimmed and lowercased: `"Work"` is the agent `work`): '
            "its memory_search, memory_get, recall and tools see those vaults only. Unset (or an agent not "
            "named and no `*`): every vault of the service. Set, a call without an agent id reaches `*`'s "
            "vaults only, none without `*`.",
            "additionalProperties": {"type": "array", "items": {"type": "string", "maxLength": 48}},
            "examples": [{"work": ["work"], "*": ["work", "personal"]}],
        },
        "timeoutMs": {
            "type": "integer",
            "minimum": 1000,
            "maximum": 600000,
            "default": 30000,
            "description": "How long one tool call may take before it fails with SERVICE_UNAVAILABLE.",
        },
        "memory": {
            "type": "object",
            "additionalProperties": False,
            "description": "The vault as a corpus of OpenClaw's own memory_search / memory_get (corpus `all` "
            "or `wiki`), and the lines that tell the model about it in the system prompt's memory section.",
            "properties": {
                "enabled": {"type": "boolean", "default": True, "description": "Register the corpus."},
                "timeoutMs": {
                    "type": "integer",
                    "minimum": 100,
                    "maximum": 20000,
                    "default": 3000,
                    "description": "Deadline of one vault search or read inside memory_search / memory_get: "
                    "past it the vault's part fails with the reason and OpenClaw's own memory still answers.",
                },
                "minScore": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "default": 0.2,
                    "description": "Vault hits below this confidence (0-1, the score memory_search merges "
                    "on) are left out.",
                },
                "probeMs": {
                    "type": "integer",
                    "minimum": 50,
                    "maximum": 5000,
                    "default": 300,
                    "description": "How long building a prompt waits for the service to say it is up "
                    "(asked before each prompt; a failure stands 2 s); no answer: the memory section says "
                    "nothing of the vault.",
                },
            },
        },
        "recall": {
            "type": "object",
            "additionalProperties": False,
            "description": "Each turn, the notes that answer the latest message, quoted into the prompt "
            "(needs plugins.entries.knowledge-bridge.hooks.allowConversationAccess: true).",
            "properties": {
                "enabled": {"type": "boolean", "default": True, "description": "Recall each turn."},
                "maxChars": {
                    "type": "integer",
                    "minimum": 200,
                    "maximum": 8000,
                    "default": PLUGIN_RECALL.max_chars,
                    "description": "Budget of the whole block, fence and header included (characters).",
                },
                "maxEntries": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 10,
                    "default": PLUGIN_RECALL.max_entries,
                    "description": "At most this many entries, each attributed [path:start-end].",
                },
                "minConfidence": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": 1,
                    "default": PLUGIN_RECALL.floor,
                    "description": "Only entries at least this likely to be relevant (the service's "
                    "calibrated confidence): greetings and questions the vault cannot answer add nothing.",
                },
                "timeoutMs": {
                    "type": "integer",
                    "minimum": 50,
                    "maximum": 5000,
                    "default": 600,
                    "description": "Deadline of the recall call: past it the turn goes on without the block "
                    "(logged once per outage).",
                },
                "repeatTurns": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 100,
                    "default": PLUGIN_RECALL.repeat_turns,
                    "description": "A chunk given to a session is not given again within this many turns.",
                },
            },
        },
    },
}


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


def _operations(openapi: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId -> (path, method, operation)."""
    return {
        operation["operationId"]: (path, method, operation)
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
    }


# the look-inside page's explain data: long, for a person finding out why a note ranks where it does; not
# worth its place in every tool description an agent reads each turn
FOR_PEOPLE = frozenset({"explain", "why_not"})


def _call(path: str, method: str, operation: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The operation's parameters as one JSON Schema object, and where each one goes in the request."""
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
            if name in FOR_PEOPLE:
                continue
            properties[name] = schema
            where["body_params"].append(name)
        required += inlined.get("required", [])
    ordered = {name: properties[name] for name in required} | properties  # required ones first
    return {
        "parameters": {
            "type": "object",
            "properties": ordered,
            "required": required,
            "additionalProperties": False,
        },
        "http": {"method": method.upper(), "path": path, **where},
    }


def _tool(
    spec: PluginTool, found: dict[str, tuple[str, str, dict[str, Any]]], components: dict[str, Any]
) -> dict:
    calls = {action: _call(*found[operation], components) for action, operation in spec.actions.items()}
    common = {"name": spec.name, "label": spec.label, "read_only": spec.read_only, "optional": spec.optional}
    if len(calls) == 1:
        (call,) = calls.values()
        operation = found[spec.operations[0]][2]
        description = _prose(operation.get("description") or operation.get("summary", ""))
        return {**common, "operation": spec.operations[0], "description": description, **call}
    # the admin tool's operations take the same parameters (the vault): the tool's, beside `action`
    shared = next(iter(calls.values()))["parameters"]
    for action, call in calls.items():
        assert call["parameters"] == shared, f"{action} takes other parameters: split the tool"
    summaries = "; ".join(
        f"`{action}`: {_prose(found[operation][2].get('summary', ''))}"
        for action, operation in spec.actions.items()
    )
    return {
        **common,
        "operation": None,
        "description": f"{ADMIN_NOTE} ({summaries})",
        "parameters": {
            "type": "object",
            "properties": {
                "action": {
                    "type": "string",
                    "enum": list(calls),
                    "description": "What to do with the index.",
                },
                **shared["properties"],
            },
            "required": ["action", *shared["required"]],
            "additionalProperties": False,
        },
        "http": {action: call["http"] for action, call in calls.items()},
    }


def plugin_tools(openapi: dict[str, Any]) -> dict[str, Any]:
    """integrations/openclaw/tools.json: what the plugin registers."""
    components = openapi.get("components", {}).get("schemas", {})
    found = _operations(openapi)
    return {
        "$comment": GENERATED_BY,
        "service": openapi["info"]["title"],
        "version": openapi["info"]["version"],
        "tools": [_tool(spec, found, components) for spec in TOOLS],
    }


def plugin_manifest(version: str) -> dict[str, Any]:
    """integrations/openclaw/openclaw.plugin.json: what OpenClaw reads before loading the plugin's code."""
    return {
        "id": PLUGIN_ID,
        "name": "Knowledge Bridge",
        "description": "Search, read and cite the user's Obsidian vault through a Knowledge Bridge service.",
        "version": version,
        "categories": ["productivity"],
        "activation": {"onStartup": True},
        "configSchema": CONFIG_SCHEMA,
        # `openclaw kb sync|rebuild|status` (integrations/openclaw/cli.js): root help reads it from here
        "cliCommands": [PLUGIN_CLI],
        "contracts": {"tools": [spec.name for spec in TOOLS]},
        "toolMetadata": {
            # a profile is an allowlist: an optional tool in one would be allowed without the user's opt-in
            spec.name: {
                **({"optional": True} if spec.optional else {"profiles": ["coding", "messaging", "full"]}),
                **({"replaySafe": True} if spec.read_only else {"sideEffecting": True}),
            }
            for spec in TOOLS
        },
    }
