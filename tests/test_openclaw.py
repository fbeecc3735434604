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
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from backend.config import EXAMPLE_VAULT, REPO_ROOT, load_settings
from backend.main import create_app
from scripts.node import OPENCLAW_DIR
from tests import live_server
from tests.openclaw_cli import OpenClaw, Result, require_openclaw

pytestmark = pytest.mark.slow

KEY = "openclaw-test-key"
GATEWAY_TOKEN = "gateway-test-token"
PLUGIN_DIR = REPO_ROOT / "integrations" / "openclaw"
SKILL_DIR = REPO_ROOT / "docs" / "agents"
MCP_TOOLS = {"search", "get_note", "note_links", "index_status", "build_context", "remember"}
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
ERROR_KEYS = {"error_code", "detail", "recoverable", "suggestion"}
LEDGER = "Finance/Money with Sreenivas.md"
README = REPO_ROOT / "README.md"
PLUGIN_INSTALL = "plugins install ./integrations/openclaw --force --accept-capabilities"


def record(result: Result, shown: str) -> Result:
    """Append `$ openclaw ...` and its output to OPENCLAW_TRANSCRIPT, when set."""
    note(f"openclaw {shown}", result.output)
    return result


def shown_in_readme(openclaw: OpenClaw, result: Result, shown: str) -> None:
    """README "Connect OpenClaw" shows `$ openclaw <shown>` and then exactly what OpenClaw printed, with its
    temp folder and the checkout shortened to `...`."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert f"$ openclaw {shown}" in lines, f"README does not show `openclaw {shown}`"
    start = lines.index(f"$ openclaw {shown}") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(("$ ", "```")))
    output = result.output.strip()
    node_modules = OPENCLAW_DIR / "node_modules"  # a symlink in a worktree: OpenClaw prints where it points
    for path, short in (
        (node_modules.resolve(), ".../node_modules"),
        (node_modules, ".../node_modules"),
        (openclaw.root, "..."),
        (REPO_ROOT, "..."),
    ):
        output = output.replace(str(path), short)
    assert lines[start:end] == output.splitlines(), f"README's output of `openclaw {shown}` is not today's"


def note(shown: str, output: str) -> None:
    transcript = os.environ.get("OPENCLAW_TRANSCRIPT")
    if transcript:
        with open(transcript, "a", encoding="utf-8") as out:
            out.write(f"$ {shown}\n{output.rstrip()}\n\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The service on a temp copy of the example vault, keyword search, API key set."""
    require_openclaw()
    vault = tmp_path_factory.mktemp("openclaw-vault") / "vault"
    shutil.copytree(EXAMPLE_VAULT, vault)
    settings = load_settings(
        vault_path=vault,
        data_dir=tmp_path_factory.mktemp("openclaw-data"),
        embedding_provider="none",
        watch=False,
        api_key=KEY,
    )
    headers = {"Authorization": f"Bearer {KEY}"}
    with live_server.serving(create_app(settings)) as base:
        live_server.wait_until(lambda: live_server.indexed(base, headers), "the first indexing to finish")
        yield base


class Gateway:
    """An OpenClaw Gateway started in the background; `invoke` waits for it on first use."""

    def __init__(self, openclaw: OpenClaw, port: int) -> None:
        self.url = f"http://127.0.0.1:{port}"
        log = (openclaw.root / "gateway.out").open("w")
        self.process = subprocess.Popen(
            openclaw.command("gateway", "run"), env=openclaw.env, cwd=openclaw.root, stdout=log, stderr=log
        )
        self.ready = False

    def wait(self) -> None:
        if not self.ready:
            live_server.wait_until(self._answers, "the OpenClaw gateway to listen", timeout=180)
            self.ready = True

    def _answers(self) -> bool:
        assert self.process.poll() is None, "the OpenClaw gateway exited"
        try:
            httpx.get(self.url, timeout=2)
        except httpx.TransportError:
            return False
        return True

    def post(self, tool: str, args: dict[str, Any]) -> httpx.Response:
        self.wait()
        return httpx.post(
            f"{self.url}/tools/invoke",
            json={"tool": tool, "args": args},
            headers={"Authorization": f"Bearer {GATEWAY_TOKEN}"},
            timeout=120,
        )

    def invoke(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The tool's `details`: what the plugin handed OpenClaw (the model reads the same as JSON text)."""
        response = self.post(tool, args)
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        details: dict[str, Any] = result["details"]
        assert result["content"][0]["text"].startswith("{")
        return details

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


@pytest.fixture(scope="module")
def openclaw(tmp_path_factory: pytest.TempPathFactory, service: str) -> OpenClaw:
    return OpenClaw(tmp_path_factory.mktemp("openclaw"))


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
    settings = openclaw.config()
    settings["gateway"] = {"mode": "local", "port": port, "bind": "loopback"}
    settings["gateway"]["auth"] = {"mode": "token", "token": GATEWAY_TOKEN}
    settings["logging"] = {"file": str(openclaw.root / "openclaw.log")}
    settings["tools"] = {"alsoAllow": ["kb_index_admin"]}  # the admin tool is optional: allowlisted by hand
    openclaw.write_config(settings)
    config = {"baseUrl": service, "apiKey": KEY, "timeoutMs": 60000}
    path = "plugins.entries.knowledge-bridge.config"
    shown = f'config set {path} \'{{"baseUrl": "http://127.0.0.1:8000", "apiKey": "\'$API_KEY\'"}}\''
    shown += " --strict-json"
    configured = record(openclaw.run("config", "set", path, json.dumps(config), "--strict-json"), shown)
    shown_in_readme(openclaw, configured, shown)
    assert openclaw.config()["plugins"]["entries"]["knowledge-bridge"]["config"] == config
    started = Gateway(openclaw, port)
    try:
        yield started
    finally:
        started.stop()


# -- MCP ---------------------------------------------------------------------------------------------------


def test_mcp_add_with_default_flags_then_probe_lists_our_tools(
    openclaw: OpenClaw, installed: Result, service: str
) -> None:
    added = openclaw.run(
        "mcp", "add", "kb", "--url", f"{service}/mcp", "--header", f"Authorization=Bearer {KEY}"
    )
    shown = 'mcp add kb --url http://127.0.0.1:8000/mcp --header "Authorization=Bearer $API_KEY"'
    record(added, shown)
    shown_in_readme(openclaw, added, shown)
    assert 'Saved MCP server "kb"' in added.output
    saved = openclaw.config()["mcp"]["servers"]["kb"]
    assert "transport" not in saved  # OpenClaw's default: the legacy SSE transport

    # the stdio entry, spawned by OpenClaw itself: it relays to the running service (`mcp add` probes first)
    port = service.rsplit(":", 1)[1]
    stdio = [
        "--command",
        sys.executable,
        "--arg",
        "-m",
        "--arg",
        "backend",
        "--arg",
        "mcp",
        "--cwd",
        str(REPO_ROOT),
    ]
    spawned = openclaw.run(
        "mcp", "add", "kb-stdio", *stdio, "--env", f"PORT={port}", "--env", f"API_KEY={KEY}"
    )
    shown = 'mcp add kb-stdio --command .venv/bin/python --arg -m --arg backend --arg mcp --cwd "$PWD" '
    record(spawned, shown + '--env "API_KEY=$API_KEY"')
    shown_in_readme(openclaw, spawned, shown + '--env "API_KEY=$API_KEY"')
    assert 'Saved MCP server "kb-stdio"' in spawned.output

    probe = record(openclaw.run("mcp", "probe", "--json"), "mcp probe --json")
    report = probe.json()
    assert report["diagnostics"] == []
    for name in ("kb", "kb-stdio"):
        server = report["servers"][name]
        assert server["tools"] == 6
        assert "approvalHint" not in server  # no "tools have no safety annotations" warning
        assert "resources" not in server
        assert "prompts" not in server
    for prefix in ("kb__", "kb-stdio__"):
        assert {name.removeprefix(prefix) for name in report["tools"] if name.startswith(prefix)} == MCP_TOOLS


# -- the skill ---------------------------------------------------------------------------------------------


def test_the_skill_installs_and_is_ready_with_its_key_from_the_skill_config(
    openclaw: OpenClaw, installed: Result
) -> None:
    installed = record(openclaw.run("skills", "install", str(SKILL_DIR)), "skills install ./docs/agents")
    shown_in_readme(openclaw, installed, "skills install ./docs/agents")
    assert "Installed knowledge-bridge" in installed.output
    entry = {"apiKey": KEY, "env": {"KB_URL": "http://127.0.0.1:8000"}}
    shown = (
        "config set skills.entries.knowledge-bridge "
        '\'{"apiKey": "\'$API_KEY\'", "env": {"KB_URL": "http://127.0.0.1:8000"}}\' --strict-json'
    )
    configured = openclaw.run(
        "config", "set", "skills.entries.knowledge-bridge", json.dumps(entry), "--strict-json"
    )
    record(configured, shown)
    shown_in_readme(openclaw, configured, shown)
    assert openclaw.config()["skills"]["entries"]["knowledge-bridge"] == entry

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
