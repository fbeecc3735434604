"""Unbounded request work (issue 17, point 7): filter lists are capped, heavy requests go through a bounded
pool (503 SERVER_BUSY, recoverable, with Retry-After past it), slow clients are cut off (408), and a normal
search is still answered while 50 clients flood the service with ~1 MB filter lists.

Over a real socket: a slow client is one that sends its headers and then only part of its body, which
holds its slot for as long as the body-read timeout allows. The latency under the 200-client flood is
measured by `python -m scripts.measure.load.flood` (docs/robustness.md), not asserted here.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from backend.config import EXAMPLE_VAULT, load_settings
from backend.entrypoints.app import create_app
from scripts.measure.load.flood import _one_client, flood_body
from scripts.measure.service import ServiceProcess
from tests.live_server import indexed, serving, wait_until

PROBE = {"query": "how much do I owe Sreenivas", "top_k": 3}


@contextmanager
def service(tmp_path: Path, **settings: object) -> Iterator[str]:
    values: dict[str, object] = {
        "vault_path": EXAMPLE_VAULT,
        "data_dir": tmp_path / "data",
        "embedding_provider": "none",
        "watch": False,
    }
    with serving(create_app(load_settings(**(values | settings)))) as base:
        wait_until(lambda: indexed(base), "the first indexing")
        yield base


def slow_client(base: str, declared: int) -> socket.socket:
    """A request whose body stops after 10 bytes: it holds a slot until the body-read timeout."""
    url = urlsplit(base)
    sock = socket.create_connection((url.hostname, url.port), timeout=30)
    head = (
        f"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {declared}\r\n\r\n"
    )
    sock.sendall(head.encode() + b'{"query": ')
    return sock


def answer(sock: socket.socket) -> tuple[int, dict]:
    data = b""
    while b"\r\n\r\n" not in data or not data.rstrip().endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(body)


def test_filter_lists_are_capped(tmp_path: Path) -> None:
    with service(tmp_path, max_filter_items=100, max_filter_bytes=4096) as base:
        many = httpx.post(f"{base}/search", json=PROBE | {"paths": [f"n{i}.md" for i in range(101)]})
        assert many.status_code == 413
        assert many.json()["error_code"] == "REQUEST_TOO_LARGE"
        assert "MAX_FILTER_ITEMS" in many.json()["detail"]
        heavy = httpx.post(f"{base}/context", json={"query": "owe", "tags": ["t" * 100] * 50})
        assert heavy.status_code == 413
        assert "MAX_FILTER_BYTES" in heavy.json()["detail"]
        fine = httpx.post(f"{base}/search", json=PROBE | {"tags": ["finance"] * 10, "paths": ["a.md"] * 100})
        assert fine.status_code == 200


def test_the_pool_refuses_past_its_size_and_slow_clients_are_cut_off(tmp_path: Path) -> None:
    settings = {
        "max_concurrent_requests": 2,
        "max_queued_requests": 0,
        "large_request_bytes": 1024,
        "max_large_requests": 1,
        "request_body_timeout_seconds": 2.0,
    }
    with service(tmp_path, **settings) as base:
        large = slow_client(base, 100_000)  # holds the one large slot (and one of the two slots)
        wait_until(lambda: httpx.post(f"{base}/search", content=b"x" * 2000).status_code == 503, "the lane")
        busy = httpx.post(f"{base}/search", json=PROBE | {"tags": ["x" * 2000]})
        assert busy.status_code == 503
        assert busy.json()["error_code"] == "SERVER_BUSY"
        assert busy.json()["recoverable"] is True
        assert busy.headers["Retry-After"] == "1"
        assert httpx.post(f"{base}/search", json=PROBE).status_code == 200  # a normal search has a slot

        small = slow_client(base, 500)  # takes the last slot
        wait_until(lambda: httpx.post(f"{base}/search", json=PROBE).status_code == 503, "a full pool")
        assert httpx.get(f"{base}/health").status_code == 200  # the liveness probe is never queued

        started = time.monotonic()
        for sock in (large, small):
            status, body = answer(sock)  # cut off by the body-read timeout, in the one error shape
            assert status == 408
            assert body["error_code"] == "REQUEST_TIMEOUT"
            sock.close()
        assert time.monotonic() - started < 30
        assert httpx.post(f"{base}/search", json=PROBE).status_code == 200  # the slots are free again


@pytest.mark.slow
def test_a_normal_search_is_answered_during_a_flood_of_huge_filter_lists(tmp_path: Path) -> None:
    with service(tmp_path, max_queued_requests=8) as base:  # 50 clients overflow 2 running + 8 waiting
        port = urlsplit(base).port
        assert port is not None
        payload = flood_body(0.8)  # ~0.9 MB: under MAX_REQUEST_BYTES, so each one must be parsed or refused
        statuses: Counter[str] = Counter()
        until = time.monotonic() + 4.0

        async def flood() -> None:
            await asyncio.gather(*(_one_client(port, payload, until, statuses) for _ in range(50)))

        flooder = threading.Thread(target=lambda: asyncio.run(flood()), daemon=True)
        flooder.start()
        probes = []
        with httpx.Client(timeout=60) as client:
            while time.monotonic() < until:
                probes.append(client.post(f"{base}/search", json=PROBE).status_code)
        flooder.join(60)
        assert probes
        assert set(probes) == {200}
        assert set(statuses) <= {"413", "503"}, statuses  # refused whole or by the filter caps, never a 5xx
        assert statuses["503"] > 0


def test_serve_closes_a_connection_whose_request_head_never_ends(tmp_path: Path) -> None:
    """Slowloris: a head sent a piece at a time is cut off by `serve` (uvicorn alone waits for ever)."""
    env = {"EMBEDDING_PROVIDER": "none", "WATCH": "false", "REQUEST_BODY_TIMEOUT_SECONDS": "1"}
    with ServiceProcess(EXAMPLE_VAULT, tmp_path / "data", env=env) as process:
        process.wait_ready()
        with socket.create_connection(("127.0.0.1", process.port), timeout=30) as sock:
            started = time.monotonic()
            sock.sendall(b"GET /notes HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            closed = False
            while time.monotonic() - started < 20:
                try:
                    sock.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    closed = True
                    break
                sock.settimeout(0.3)
                try:
                    if sock.recv(1024) == b"":
                        closed = True
                        break
                except TimeoutError:
                    pass
                except OSError:  # closed with bytes of ours unread: the kernel answers with a reset
                    closed = True
                    break
            assert closed, "the connection was kept open"
            assert time.monotonic() - started < 10
        assert process.get("/health").status_code == 200
