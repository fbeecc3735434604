"""Running `python -m backend ...` in a child process, as a user runs the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_backend(*args: str, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The CLI, keyword-only unless `env` says otherwise. PORT 1: no running service answers there, so the
    CLI opens the index itself instead of asking a service a developer may have running."""
    return subprocess.run(
        [sys.executable, "-m", "backend", *args],
        cwd=REPO,
        env={**os.environ, "EMBEDDING_PROVIDER": "none", "PORT": "1", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
