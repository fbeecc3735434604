"""`python -m backend serve` binds where the settings say: loopback only by default, HOST (or --host)
otherwise. A real process on a real socket: 127.0.0.2 is another loopback address, so it tells "bound to
127.0.0.1" from "bound to every interface" without leaving the machine. Ctrl+C stops it cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest
import uvicorn

from backend.entrypoints.cli.listening import StoppingServer, serve_until_stopped
from scripts.measure.service import free_port
from tests.live_server import LOOPBACK

REPO = Path(__file__).resolve().parent.parent


def answers(host: str, port: int) -> bool:
    try:
        return LOOPBACK.get(f"http://{host}:{port}/health", timeout=2).status_code == 200
    except httpx.TransportError:
        return False


@contextmanager
def serve(tmp_path: Path, port: int, *args: str, **env: str) -> Iterator[subprocess.Popen[str]]:
    clean = {k: v for k, v in os.environ.items() if k not in ("HOST", "PORT", "API_KEY", "CORS_ORIGINS")}
    process = subprocess.Popen(
        [sys.executable, "-m", "backend", "serve", "--data-dir", str(tmp_path / "data"), *args],
        cwd=REPO,
        env={**clean, "EMBEDDING_PROVIDER": "none", "WATCH": "false", "PORT": str(port), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def wait_for(host: str, port: int, process: subprocess.Popen[str], timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not answers(host, port):
        if process.poll() is not None:
            raise AssertionError(f"serve exited: {process.stderr.read() if process.stderr else ''}")
        if time.monotonic() > deadline:
            raise AssertionError(f"serve did not answer on {host}:{port}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def second_loopback() -> None:
    try:
        with socket.socket() as sock:
            sock.bind(("127.0.0.2", 0))
    except OSError:
        pytest.skip("127.0.0.2 is not usable here")


def test_serve_listens_on_loopback_only_by_default(tmp_path: Path, second_loopback: None) -> None:
    port = free_port()
    with serve(tmp_path, port) as process:
        wait_for("127.0.0.1", port, process)
        assert not answers("127.0.0.2", port)  # not 0.0.0.0: only 127.0.0.1 itself


@pytest.mark.parametrize("presses", [1, 2], ids=["once", "twice"])
def test_ctrl_c_stops_serve_with_one_word_and_no_traceback(tmp_path: Path, presses: int) -> None:
    # uvicorn raises the SIGINT again once it has shut down; left to asyncio's runner, a second press
    # (or `timeout`, `make` passing the first on) printed two tracebacks
    port = free_port()
    with serve(tmp_path, port) as process:
        wait_for("127.0.0.1", port, process)
        process.send_signal(signal.SIGINT)
        said = ""
        if presses == 2:  # pressed again while it shuts down
            assert process.stderr is not None
            while "Shutting down" not in said and (line := process.stderr.readline()):
                said += line
            process.send_signal(signal.SIGINT)
        said += process.communicate(timeout=60)[1]
    assert process.returncode == 130
    assert "Traceback" not in said
    assert "ERROR" not in said
    assert said.rstrip().splitlines()[-1] == "interrupted"
    assert "Application shutdown complete" in said  # the app's own shutdown ran: nothing left half-done
    assert ("Ctrl+C again: at once" in said) is (presses == 2)


@pytest.mark.parametrize("how", ["env", "flag"])
def test_serve_binds_where_host_says(tmp_path: Path, second_loopback: None, how: str) -> None:
    port = free_port()
    args, env = (("--host", "127.0.0.2"), {}) if how == "flag" else ((), {"HOST": "127.0.0.2"})
    with serve(tmp_path, port, *args, **env) as process:
        wait_for("127.0.0.2", port, process)
        assert not answers("127.0.0.1", port)


@pytest.mark.parametrize(
    ("host", "key", "warned"),
    [("0.0.0.0", None, True), ("192.168.1.5", None, True), ("0.0.0.0", "k", False), ("::1", None, False)],
)
def test_serve_warns_when_the_vault_is_reachable_without_a_key(
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    host: str,
    key: str | None,
    warned: bool,
) -> None:
    import uvicorn

    import backend.entrypoints.app
    from backend.entrypoints.cli import main as cli

    ran: dict[str, object] = {}

    class Bound:  # the socket serve listens on, without binding (192.168.1.5 is not this machine's)
        def getsockname(self) -> tuple[str, int]:
            return host, 8123

    # nothing opened: each vault's services stand in as what serve reads of them, their settings
    monkeypatch.setattr(
        backend.entrypoints.app, "open_services", lambda settings, **_: SimpleNamespace(settings=settings)
    )
    monkeypatch.setattr(cli, "listen", lambda settings: Bound())
    monkeypatch.setattr(uvicorn.Server, "run", lambda server, sockets: ran.update(vars(server.config)))
    monkeypatch.delenv("API_KEY", raising=False)
    if key:
        monkeypatch.setenv("API_KEY", key)
    caplog.set_level("WARNING")
    assert cli.main(["serve", "--host", host, "--port", "8123", "--data-dir", str(tmp_path)]) == 0
    assert (ran["host"], ran["port"]) == (host, 8123)
    assert any("without API_KEY" in r.getMessage() for r in caplog.records) is warned


def test_a_busy_port_is_one_line_naming_port(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Said before the index is opened, with the way out (another vault's service may hold the port)."""
    from backend.entrypoints.cli import main as cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = cli.main(["serve", "--port", str(port), "--data-dir", str(tmp_path)])
    assert code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith(f"error: invalid setting PORT: cannot listen on 127.0.0.1:{port}")
    assert f"`PORT={port + 1} make run`" in error
    assert "\n" not in error


@pytest.mark.parametrize(
    ("host", "where"),
    [
        ("192.0.2.1", "192.0.2.1:0"),
        ("no-such-host.invalid", "no-such-host.invalid:0"),
        ("fe80::1", "[fe80::1]:0"),
    ],
    ids=["TEST-NET-1", "a name of nothing", "link-local without its interface"],
)
def test_a_host_that_is_not_this_machines_is_one_line_naming_host(
    host: str, where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """192.0.2.1 (TEST-NET-1) is no address of this machine, a name under .invalid resolves to none, and a
    link-local fe80::1 without its interface (%eth0) is refused by the kernel as invalid (EINVAL): each was
    said as a busy PORT, with another port to try."""
    from backend.entrypoints.cli import main as cli

    code = cli.main(["serve", "--host", host, "--port", "0", "--data-dir", str(tmp_path)])
    assert code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert error.startswith(f"error: invalid setting HOST: cannot listen on {where}")
    assert "PORT=" not in error
    assert "127.0.0.1" in error  # the way out: loopback, or an address of this machine
    if host == "fe80::1":
        assert "link-local" in error


def test_a_third_ctrl_c_while_it_stops_stops_it_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # a shutdown that takes long (joining a warm-up on a large vault) is not waited for a third time
    server = StoppingServer(uvicorn.Config(app=lambda: None))
    exits: list[int] = []
    monkeypatch.setattr(os, "_exit", exits.append)
    server.handle_exit(signal.SIGINT, None)
    assert server.should_exit
    server.handle_exit(signal.SIGINT, None)
    assert not server.force_exit  # the app's shutdown still runs
    assert exits == []
    server.handle_exit(signal.SIGINT, None)
    assert exits == [130]


def test_ctrl_c_before_uvicorn_takes_the_signal_still_stops_serve(monkeypatch: pytest.MonkeyPatch) -> None:
    server = StoppingServer(uvicorn.Config(app=lambda: None))
    # pressed while the event loop is being set up, before uvicorn sets its own handler
    monkeypatch.setattr(server, "run", lambda sockets: signal.raise_signal(signal.SIGINT))
    with pytest.raises(KeyboardInterrupt), socket.socket() as sock:
        serve_until_stopped(server, sock)
    assert server.should_exit
