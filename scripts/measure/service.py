"""`python -m backend serve` in its own process on a free loopback port: the service as users run it, for the
load test, the benchmarks and the fault tests (SIGKILL, a full disk).

    with ServiceProcess(vault, data_dir, env={"EMBEDDING_PROVIDER": "none"}) as service:
        service.wait_idle()
        httpx.post(service.url + "/search", json={"query": "..."})
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import AbstractContextManager
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    """A loopback port where nothing listens, drawn below the kernel's ephemeral range. A port bound to 0
    comes from that range, from which every outgoing connection of the suite's other worker takes its own
    port too: one did, between this check and the service's bind (a CI run, 2026-12-01)."""
    low = _ephemeral_low()
    for _ in range(100):
        port = _PICK.randrange(_FIRST_PICKED, low) if low > _FIRST_PICKED + 1000 else 0
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue  # one of ours, or another program's: draw again
            return int(sock.getsockname()[1])
    raise OSError("no free loopback port below the ephemeral range after 100 draws")


_FIRST_PICKED = 20000  # above the ports services are known by (Qdrant's 6333, Ollama's 11434)
_PICK = random.SystemRandom()  # not the test's seeded `random`: two workers must not draw alike


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 0  # not Linux: the kernel's own choice


class ServiceProcess(AbstractContextManager["ServiceProcess"]):
    def __init__(
        self,
        vault: Path | None,
        data_dir: Path | None,
        *,
        env: dict[str, str] | None = None,
        log_path: Path | None = None,
        cwd: Path | None = None,
        unset: tuple[str, ...] = (),
        repo: Path = REPO,
    ) -> None:
        """`vault` / `data_dir` None: not named, as `make run` names neither (the example vault, and the
        vault's own folder under `cwd`/data); `unset`: variables of this environment the service must not
        see; `repo`: the checkout whose `backend` runs (a benchmark compares with the code before a change),
        from its own folder unless `cwd` says otherwise."""
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log_path = log_path
        self._log_file = open(log_path, "w+b") if log_path else tempfile.TemporaryFile()  # noqa: SIM115
        inherited = {name: value for name, value in os.environ.items() if name not in unset}
        environment = {**inherited, "LOG_LEVEL": "WARNING", **(env or {})}
        environment |= {"HOST": "127.0.0.1", "PORT": str(self.port), "PYTHONPATH": str(repo)}
        command = [sys.executable, "-m", "backend", "serve"]
        # absolute: the service may run from another folder than ours (`cwd`, `repo`)
        command += ["--vault", str(Path(vault).resolve())] if vault is not None else []
        command += ["--data-dir", str(Path(data_dir).resolve())] if data_dir is not None else []
        # one client for all the requests to this service: httpx.get builds a client, and with it a TLS
        # context (~55 ms of CPU here), for every request, so polling every 50 ms kept a core busy
        self._http = httpx.Client()
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            command, cwd=cwd or repo, env=environment, stdout=self._log_file, stderr=subprocess.STDOUT
        )

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def log(self) -> str:
        self._log_file.flush()
        self._log_file.seek(0)
        return self._log_file.read().decode("utf-8", "replace")

    def get(self, path: str, timeout: float = 30.0) -> httpx.Response:
        return self._http.get(self.url + path, timeout=timeout)

    def post(self, path: str, json: object = None, timeout: float = 60.0) -> httpx.Response:
        return self._http.post(self.url + path, json=json, timeout=timeout)

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until /health answers (the process has opened the index and is serving)."""
        self._wait(
            lambda: self.get("/health", timeout=2).status_code == 200, "the service to answer", timeout
        )

    def wait_idle(self, timeout: float = 600.0) -> dict:
        """Until no job runs (the first index, a sync); returns /index/status."""
        self.wait_ready(timeout)
        status: dict = {}

        def finished() -> bool:
            nonlocal status
            status = self.get("/index/status").json()
            job = status.get("job")
            return job is None or job.get("finished_at") is not None

        self._wait(finished, "the running job to finish", timeout)
        return status

    def wait_dense(
        self, timeout: float = 7200.0, poll: float = 1.0, *, warm: bool = False, give_up: bool = False
    ) -> dict:
        """Until no job runs and no chunk waits for its vector (`warm`: and the search's start-up warm-up has
        ended), so that every mode answers over the whole index; returns /index/status. Past `timeout`:
        TimeoutError, or with `give_up` the status as it is (the benchmark measures it anyway)."""
        deadline = time.monotonic() + timeout
        while True:
            status = self.wait_idle(timeout)
            if not status.get("dense_pending") and not (warm and status.get("search_warming")):
                return status
            if time.monotonic() > deadline:
                if give_up:
                    return status
                raise TimeoutError(f"{self.url}: still {status['dense_pending']} chunks to embed")
            time.sleep(poll)

    def assert_alive(self) -> None:
        """For a measurement polling the service itself: it stops, with the service's log, once the process
        has died, instead of polling a port nobody listens on until its cap."""
        if not self.alive:
            raise RuntimeError(f"the service exited ({self.process.returncode}):\n{self.log()}")

    def _wait(self, condition: object, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive:
                raise RuntimeError(
                    f"the service exited ({self.process.returncode}) waiting for {what}:\n{self.log()}"
                )
            try:
                if condition():  # type: ignore[operator]
                    return
            except httpx.HTTPError:
                pass  # not listening yet
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {timeout:.0f}s for {what}")
            time.sleep(0.05)

    def kill(self) -> None:
        """SIGKILL: no shutdown hook runs, nothing is flushed by us."""
        if self.alive:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=30)

    def stop(self) -> None:
        if self.alive:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=30)
        self._http.close()
        self._log_file.close()
