"""The Docker engine for the image tests: the one running, or one started here when it can be.

CI runs `make test` as root on a fresh clone after the session's processes are gone, so nothing keeps a
`dockerd` running for it: when none answers and this process is root with Debian's docker.io installed (the
Makefile's `docker` target installs it), `dockerd` is started here and stopped at the end. Its image store
(/var/lib/docker) outlives it, so the base image and the build cache are found again by the next run, a fresh
clone's included. Anywhere else the tests skip and say why.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT = 90.0  # a cold dockerd sets up its containerd, bridge and iptables rules first
STOP_TIMEOUT = 60.0


class EngineUnavailable(Exception):
    """No engine answers and none can be started here: the reason to skip with."""


def docker(
    *args: str, timeout: float = 300, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`docker ARGS`; with `check`, a failure raises with its output."""
    result = subprocess.run(
        ["docker", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        check=False,
    )
    if check and result.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed ({result.returncode}):\n{_tail(result)}")
    return result


def answers() -> bool:
    try:
        return docker("version", "--format", "{{.Server.Version}}", timeout=30, check=False).returncode == 0
    except subprocess.TimeoutExpired:
        return False


@dataclass
class Engine:
    """The engine the tests use; `started` when this process started it (and so stops it)."""

    started: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    def stop(self) -> None:
        if self.started is None or self.started.poll() is not None:
            return
        self.started.send_signal(signal.SIGTERM)  # dockerd stops its containers and its containerd
        try:
            self.started.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.started.kill()
            self.started.wait(timeout=STOP_TIMEOUT)


def engine(log_dir: Path) -> Engine:
    """The running engine, or one started now; EngineUnavailable (the reason) when neither can be had."""
    if shutil.which("docker") is None:
        raise EngineUnavailable("no docker CLI: `make test` installs Debian's docker.io when run as root")
    if answers():
        return Engine()
    dockerd = shutil.which("dockerd") or next(
        (path for path in ("/usr/sbin/dockerd", "/usr/bin/dockerd") if os.access(path, os.X_OK)), None
    )
    if dockerd is None:
        raise EngineUnavailable("no Docker engine answers and dockerd is not installed (Debian's docker.io)")
    if os.geteuid() != 0:
        raise EngineUnavailable("no Docker engine answers, and starting dockerd needs root")
    log = log_dir / "dockerd.log"
    with log.open("wb") as sink:
        # its own session: the test run's Ctrl-C does not reach it, stop() does
        process = subprocess.Popen(
            [dockerd], stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    started = Engine(started=process, log=log)
    deadline = time.monotonic() + START_TIMEOUT
    while not answers():
        if process.poll() is not None or time.monotonic() > deadline:
            started.stop()
            lines = log.read_text(errors="replace").strip().splitlines()[-8:]
            raise EngineUnavailable("dockerd did not start here:\n" + "\n".join(lines))
        time.sleep(0.5)
    return started


def _tail(result: subprocess.CompletedProcess[str], lines: int = 40) -> str:
    return "\n".join((result.stdout + result.stderr).strip().splitlines()[-lines:])
