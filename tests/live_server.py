"""An app served by uvicorn on a free loopback port, in a thread: for tests that need a real socket (raw
request lines a client library would normalise, streamed bodies, the MCP SDK's own client)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import uvicorn
from starlette.types import ASGIApp

# The client the polls below share: httpx.get builds a client, and with it a TLS context (~55 ms of CPU here),
# for every request, which at a poll every 50 ms kept a core busy beside the service it waited for. No
# connection is kept between requests, as with httpx.get.
LOOPBACK = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))


@contextmanager
def serving(app: ASGIApp) -> Iterator[str]:
    """Serve `app` (lifespan on); yields its base URL once /health answers, stops it afterwards."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # As uvicorn does for the sockets it opens itself (`serve` measures ~1 ms per request); without it a
    # handed-in socket meets Nagle and delayed ACKs: 40 ms per request.
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: answers(f"{base}/health"), "the service to answer /health")
        yield base
    finally:
        server.should_exit = True
        thread.join(timeout=60)
        sock.close()


def wait_until(ready: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def answers(url: str, headers: dict[str, str] | None = None) -> bool:
    try:
        return LOOPBACK.get(url, headers=headers or {}, timeout=2).status_code == 200
    except httpx.TransportError:
        return False


def indexed(base: str, headers: dict[str, str] | None = None) -> bool:
    """The first indexing job has finished."""
    job = LOOPBACK.get(f"{base}/index/status", headers=headers or {}, timeout=5).json().get("job")
    return job is not None and job["finished_at"] is not None


def vaults_indexed(base: str, headers: dict[str, str] | None = None) -> bool:
    """Every vault of a service of several (VAULTS) is open and its first indexing job has finished."""
    states = LOOPBACK.get(f"{base}/index/status", headers=headers or {}, timeout=5).json().get("vaults") or []
    jobs = [(state.get("status") or {}).get("job") for state in states if state["available"]]
    return bool(states) and len(jobs) == len(states) and all(job and job["finished_at"] for job in jobs)


@contextmanager
def serving_vaults(app: ASGIApp, headers: dict[str, str] | None = None) -> Iterator[str]:
    """`serving` a service of several vaults, yielding once every one of them has indexed."""
    with serving(app) as base:
        wait_until(lambda: vaults_indexed(base, headers), "every vault to be indexed")
        yield base
