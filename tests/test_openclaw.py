"""The three routes from OpenClaw to the service, proven with the real OpenClaw (tools/openclaw, pinned) and a
live service on a temp copy of the example vault with an API key:

- the plugin (integrations/openclaw) installs with `openclaw plugins install`, and each of its tools, invoked
  through OpenClaw's own plugin loading (a Gateway's `POST /tools/invoke`: no language model), answers with
  the service's real data, and with our error envelope when the key is wrong or the service is down;
- `openclaw mcp add NAME --url .../mcp` with no transport flag connects (legacy SSE, OpenClaw's default) and
  `openclaw mcp probe` lists our tools without the approval warning or empty resources/prompts;
- the skill installs and `openclaw skills check` lists it ready, its key taken from the per-skill config.

Set OPENCLAW_TRANSCRIPT=path to record each command and what OpenClaw printed (README "Connect OpenClaw").
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from backend.config import EXAMPLE_VAULT, REPO_ROOT, Settings, load_settings
from backend.entrypoints.app import create_app
from backend.infrastructure.running_service import record_service
from scripts.measure.service import free_port
from tests import live_server
from tests.openclaw_cli import (
    Gateway,
    OpenClaw,
    Result,
    configure_plugin,
    gateway_config,
    note,
    record,
    require_openclaw,
    shown_in_readme,
)

pytestmark = pytest.mark.slow

KEY = "openclaw-test-key"
PLUGIN_DIR = REPO_ROOT / "integrations" / "openclaw"
SKILL_DIR = REPO_ROOT / "docs" / "agents"
MCP_TOOLS = {
    "search",
    "get_note",
    "note_links",
    "index_status",
    "build_context",
    "list_memories",
    "remember",
    "forget",
}
PLUGIN_TOOLS = {
    "kb_search",
    "kb_context",
    "kb_note",
    "kb_note_links",
    "kb_list_notes",
    "kb_status",
    "kb_remember",
    "kb_index_admin",
}
# README: `export KB_API_KEY=... KB_AUTHORIZATION="Bearer $KB_API_KEY"` before OpenClaw runs
EXPORTED = {"KB_API_KEY": KEY, "KB_AUTHORIZATION": f"Bearer {KEY}"}
ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}
LEDGER = "Finance/Money with Sreenivas.md"
PLUGIN_INSTALL = "plugins install ./integrations/openclaw --force --accept-capabilities"


@pytest.fixture(scope="module")
def service_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A temp copy of the example vault and its data dir, keyword search, API key set."""
    require_openclaw()
    vault = tmp_path_factory.mktemp("openclaw-vault") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    return load_settings(
        vault_path=vault,
        data_dir=tmp_path_factory.mktemp("openclaw-data"),
        embedding_provider="none",
        watch=False,
        api_key=KEY,
    )


@pytest.fixture(scope="module")
def service(service_settings: Settings) -> Iterator[str]:
    """The service on it, on a free port (it records where in its data dir)."""
    headers = {"Authorization": f"Bearer {KEY}"}
    app = create_app(service_settings)
    with live_server.serving(app) as base:
        live_server.wait_until(lambda: live_server.indexed(base, headers), "the first indexing to finish")
        # what `python -m backend serve` writes once it listens: where the service of this vault answers
        record_service(service_settings, int(base.rsplit(":", 1)[1]), app.state.instance, app.version)
        yield base


@pytest.fixture(scope="module")
def openclaw(tmp_path_factory: pytest.TempPathFactory, service: str) -> OpenClaw:
    return OpenClaw(tmp_path_factory.mktemp("openclaw"), variables=EXPORTED)


@pytest.fixture(scope="module")
def installed(openclaw: OpenClaw) -> Result:
    """`openclaw plugins install <folder>`, as the README says."""
    return record(
        openclaw.run("plugins", "install", str(PLUGIN_DIR), "--force", "--accept-capabilities"),
        PLUGIN_INSTALL,
    )


def plugin_config(openclaw: OpenClaw, **config: Any) -> None:
    settings = openclaw.config()
    settings.setdefault("plugins", {}).setdefault("entries", {}).setdefault("knowledge-bridge", {})
    settings["plugins"]["entries"]["knowledge-bridge"]["config"] = config
    openclaw.write_config(settings)


@pytest.fixture(scope="module")
def gateway(openclaw: OpenClaw, installed: Result, service: str) -> Iterator[Gateway]:
    port = free_port()
    settings = gateway_config(openclaw, port)
    # README's `openclaw config set gateway.mode local` (no Gateway starts without it) writes this key only;
    # tests/test_openclaw_memory.py runs it as written, here it is written directly (~9 s of CPU a command)
    settings["gateway"]["mode"] = "local"
    settings["tools"] = {"alsoAllow": ["kb_index_admin"]}  # the admin tool is optional: allowlisted by hand
    openclaw.write_config(settings)
    configure_plugin(openclaw, service)
    started = Gateway(openclaw, port)  # the key from the environment, as README says
    try:
        yield started
    finally:
        started.stop()


# -- MCP ---------------------------------------------------------------------------------------------------


def test_mcp_add_with_default_flags_then_probe_lists_our_tools(
    openclaw: OpenClaw, installed: Result, service: str, service_settings: Settings
) -> None:
    # the key is a reference to the environment, resolved when OpenClaw connects: `mcp add` would probe with
    # the unresolved text, so it saves without probing and `mcp probe` (with the variable set) connects
    header = "Authorization=${KB_AUTHORIZATION}"
    added = openclaw.run("mcp", "add", "kb", "--url", f"{service}/mcp", "--header", header, "--no-probe")
    shown = f"mcp add kb --url http://127.0.0.1:8000/mcp --header '{header}' --no-probe"
    shown_in_readme(openclaw, record(added, shown), shown)
    assert 'Saved MCP server "kb"' in added.output
    saved = openclaw.config()["mcp"]["servers"]["kb"]
    assert "transport" not in saved  # OpenClaw's default: the legacy SSE transport
    assert saved["headers"] == {"Authorization": "${KB_AUTHORIZATION}"}  # no secret in openclaw.json

    # the stdio entry, spawned by OpenClaw itself: it finds the running service of its vault (the record in
    # the vault's data dir, whatever its port: no PORT given) and relays to it. The README's entry runs on the
    # default vault and data dir; this one names the test's.
    stdio = ["--command", sys.executable, "--arg", "-m", "--arg", "backend", "--arg", "mcp"]
    stdio += ["--cwd", str(REPO_ROOT), "--env", "API_KEY=${KB_API_KEY}"]
    where = [
        "--env",
        f"VAULT_PATH={service_settings.vault_path}",
        "--env",
        f"DATA_DIR={service_settings.data_dir}",
    ]
    spawned = openclaw.run("mcp", "add", "kb-stdio", *stdio, *where, "--no-probe")
    shown = 'mcp add kb-stdio --command .venv/bin/python --arg -m --arg backend --arg mcp --cwd "$PWD" '
    shown += "--env 'API_KEY=${KB_API_KEY}' --no-probe"
    shown_in_readme(openclaw, record(spawned, shown), shown)
    assert 'Saved MCP server "kb-stdio"' in spawned.output

    # no secret in openclaw.json; OpenClaw's doctor reads the values resolved, so it is asked with the
    # variables unset (set, it flags the key it resolved to as a literal)
    assert KEY not in openclaw.config_path.read_text(encoding="utf-8")
    unset = dict.fromkeys(EXPORTED, "")
    assert "literal sensitive value" not in openclaw.run("mcp", "doctor", env=unset).output
    probe = record(openclaw.run("mcp", "probe", "--json"), "mcp probe --json")
    report = probe.json()
    assert report["diagnostics"] == []
    for name in ("kb", "kb-stdio"):
        server = report["servers"][name]
        assert server["tools"] == len(MCP_TOOLS)
        assert "approvalHint" not in server  # no "tools have no safety annotations" warning
        assert "resources" not in server
        assert "prompts" not in server
    for prefix in ("kb__", "kb-stdio__"):
        assert {name.removeprefix(prefix) for name in report["tools"] if name.startswith(prefix)} == MCP_TOOLS


# -- the skill ---------------------------------------------------------------------------------------------


def test_the_skill_installs_and_is_ready_with_its_key_from_the_environment(
    openclaw: OpenClaw, installed: Result
) -> None:
    installed = record(openclaw.run("skills", "install", str(SKILL_DIR)), "skills install ./docs/agents")
    shown_in_readme(openclaw, installed, "skills install ./docs/agents")
    assert "Installed knowledge-bridge" in installed.output
    # the key as a reference to the environment (OpenClaw's SecretRef), not a literal in openclaw.json
    ref = ["--ref-provider", "default", "--ref-source", "env", "--ref-id", "KB_API_KEY"]
    configured = openclaw.run("config", "set", "skills.entries.knowledge-bridge.apiKey", *ref)
    shown = f"config set skills.entries.knowledge-bridge.apiKey {' '.join(ref)}"
    shown_in_readme(openclaw, record(configured, shown), shown)
    entry = openclaw.config()["skills"]["entries"]["knowledge-bridge"]
    assert entry["apiKey"] == {"source": "env", "provider": "default", "id": "KB_API_KEY"}

    check = record(openclaw.run("skills", "check"), "skills check")
    ready = check.output.split("Ready and visible to model:", 1)[1].split("\n\n", 1)[0]
    assert "🗂️ knowledge-bridge" in ready.splitlines()[1:] or "  🗂️ knowledge-bridge" in ready
    info = openclaw.run("skills", "info", "knowledge-bridge", "--json").json()
    assert info["eligible"] is True
    assert info["modelVisible"] is True
    assert info["primaryEnv"] == "KB_API_KEY"  # skills.entries.knowledge-bridge.apiKey lands in KB_API_KEY
    assert info["missing"]["env"] == []  # ready without a key: the loopback default needs none


# -- the plugin ------------------------------------------------------------------------------------------


def test_the_plugin_installs_with_openclaws_own_command(installed: Result, openclaw: OpenClaw) -> None:
    assert "Installed plugin: knowledge-bridge" in installed.output
    shown_in_readme(openclaw, installed, PLUGIN_INSTALL)
    assert (openclaw.state / "extensions" / "knowledge-bridge" / "openclaw.plugin.json").is_file()
    assert openclaw.config()["plugins"]["entries"]["knowledge-bridge"]["enabled"] is True


def test_every_plugin_tool_answers_with_real_data(gateway: Gateway) -> None:
    question = {"query": "how much do I owe Sreenivas?", "top_k": 3}
    found = gateway.invoke("kb_search", question)
    note(
        f"POST /tools/invoke {json.dumps({'tool': 'kb_search', 'args': question})}",
        json.dumps(found, indent=2),
    )
    assert found["ok"] is True
    assert found["status"] == "degraded"  # keyword only here (no embedder): the service says so
    assert found["result"]["results"][0]["note_path"] == LEDGER
    assert "€79.50" in found["result"]["results"][0]["content"]
    # the fact the results hold, for the model to offer to keep with kb_remember
    offered = found["result"]["memory_suggestion"]
    assert offered["source"] == LEDGER
    assert "€79.50" in offered["value"]

    context = gateway.invoke("kb_context", {"query": "knee physio exercises", "max_chars": 900})
    assert context["ok"] is True
    assert context["result"]["context"].startswith("[Health/Knee physio plan.md:")

    read = gateway.invoke("kb_note", {"note_path": LEDGER, "start_line": 14, "end_line": 16})
    assert read["ok"] is True
    assert read["status"] == "healthy"
    assert "I owe Sreenivas €79.50" in read["result"]["content"]

    links = gateway.invoke("kb_note_links", {"note_path": "People/Sreenivas.md"})
    assert LEDGER in {link["note_path"] for link in links["result"]["backlinks"]}

    listed = gateway.invoke("kb_list_notes", {"tag": "finance", "limit": 5})
    assert LEDGER in {entry["note_path"] for entry in listed["result"]["notes"]}

    status = gateway.invoke("kb_status", {})
    assert status["result"]["indexed_notes"] >= 30

    fact = {"key": "sreenivas-balance", "value": "I owe Sreenivas €79.50.", "source": LEDGER}
    remembered = gateway.invoke("kb_remember", fact)
    assert remembered["ok"] is True
    assert remembered["result"]["fact"]["key"] == "sreenivas-balance"
    kept = gateway.invoke("kb_remember", {k: offered[k] for k in ("key", "value", "source")})
    assert kept["ok"] is True
    assert gateway.invoke("kb_search", question)["result"]["memory_suggestion"] is None

    sync = gateway.invoke("kb_index_admin", {"action": "sync"})
    assert sync["ok"] is True
    assert sync["result"]["status"] == "accepted"


@pytest.mark.parametrize(
    ("tool", "args", "code"),
    [
        ("kb_note", {"note_path": "No such note.md"}, "NOTE_NOT_FOUND"),
        ("kb_note", {"note_path": "../../etc/passwd"}, "SECURITY_VIOLATION"),
        ("kb_search", {"query": "milk", "top_k": 500}, "VALIDATION_ERROR"),
    ],
)
def test_plugin_tools_hand_on_our_error_envelope(gateway: Gateway, tool: str, args: dict, code: str) -> None:
    details = gateway.invoke(tool, args)
    assert details["ok"] is False
    assert details["status"] == "healthy"  # the service answered: the request was wrong
    assert set(details["error"]) == ERROR_KEYS
    assert details["error"]["error_code"] == code


def _error_once_reloaded(gateway: Gateway, code: str) -> dict[str, Any]:
    """The gateway reloads the plugin config it watches: ask until the new config answers."""
    seen: dict[str, Any] = {}

    def answered() -> bool:
        response = gateway.post("kb_status", {})
        if response.status_code != 200:  # 404 or 500 while the plugin is loaded again with the new config
            return False
        seen.clear()
        seen.update(response.json()["result"]["details"])
        return seen.get("error", {}).get("error_code") == code

    live_server.wait_until(answered, f"the gateway to reload its config and answer {code}", timeout=120)
    return seen


def test_a_wrong_key_and_a_service_down_are_clear_errors(
    gateway: Gateway, openclaw: OpenClaw, service: str
) -> None:
    gateway.wait()
    plugin_config(openclaw, baseUrl=service, apiKey="not-the-key")
    wrong = _error_once_reloaded(gateway, "UNAUTHORIZED")
    note("POST /tools/invoke kb_status (wrong key)", json.dumps(wrong, indent=2))
    assert wrong["ok"] is False
    assert set(wrong["error"]) == ERROR_KEYS

    closed = f"http://127.0.0.1:{free_port()}"
    plugin_config(openclaw, baseUrl=closed, apiKey=KEY)
    down = _error_once_reloaded(gateway, "SERVICE_UNAVAILABLE")
    note("POST /tools/invoke kb_status (service down)", json.dumps(down, indent=2))
    assert down["status"] == "unavailable"
    assert down["error"]["recoverable"] is True
    assert closed in down["error"]["detail"]
    assert "make run" in down["error"]["suggestion"]
