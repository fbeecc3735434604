"""Flood test: does a normal search stay fast while many clients send huge filter lists? (issue 17)

    python -m scripts.measure.load.flood --clients 200 --seconds 20
    python -m scripts.measure.load.flood --repo /tmp/before  # the same against the code before (a checkout)
    python -m scripts.measure.load.flood --port 19650  # a port of your own (a machine shared by others)

Serves the example vault with `python -m backend serve` from `--repo` on a loopback port. Once indexed, a
probe sends normal searches one after another, first alone and then while `--clients` asyncio clients (in a
process of their own) each send `POST /search` with ~`--mb` MB of `paths` and `tags` back to back for
`--seconds`. Reported: the probe's latency percentiles and statuses alone and under the flood, the flood's
statuses, and the service's resident memory (before, peak sampled every 0.2 s). Loopback only, bounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import httpx

from scripts.measure.common import machine, percentile
from scripts.measure.service import REPO, free_port

PROBE = {"query": "how much do I owe Sreenivas", "top_k": 5}


def flood_body(megabytes: float) -> bytes:
    """A /search body whose `paths` and `tags` lists hold about `megabytes` MB."""
    count = int(megabytes * 1024 * 1024 / 2 / 30)
    body = {
        "query": "anything",
        "paths": [f"Folder {i % 97}/some note number {i:07}.md" for i in range(count)],
        "tags": [f"tag-number-{i:012}-x" for i in range(count)],
    }
    return json.dumps(body).encode()


async def _one_client(port: int, payload: bytes, until: float, statuses: Counter[str]) -> None:
    head = (
        f"POST /search HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    ).encode()
    while time.monotonic() < until:
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            try:
                writer.write(head + payload)
                reading = asyncio.ensure_future(reader.readline())
                with_timeout = min(60.0, max(until - time.monotonic(), 0.0) + 30.0)
                try:
                    await asyncio.wait_for(writer.drain(), with_timeout)
                except (TimeoutError, ConnectionError):
                    pass  # answered (and closed) before the body was read: the status says why
                line = await asyncio.wait_for(reading, with_timeout)
                statuses[line.split()[1].decode() if line.startswith(b"HTTP/") else "no answer"] += 1
            finally:
                writer.close()
        except (TimeoutError, ConnectionError, OSError) as exc:
            statuses[type(exc).__name__] += 1


def _flood(port: int, clients: int, seconds: float, megabytes: float, out: multiprocessing.Queue) -> None:
    payload = flood_body(megabytes)
    statuses: Counter[str] = Counter()
    until = time.monotonic() + seconds

    async def run() -> None:
        await asyncio.gather(*(_one_client(port, payload, until, statuses) for _ in range(clients)))

    asyncio.run(run())
    out.put((len(payload), dict(statuses)))


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    with open(f"/proc/{pid}/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time the process has used."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def probe(url: str, until: float | None, count: int) -> tuple[list[float], Counter[str]]:
    latencies: list[float] = []
    statuses: Counter[str] = Counter()
    with httpx.Client(timeout=120) as client:
        while (until is None and len(latencies) < count) or (until is not None and time.monotonic() < until):
            started = time.perf_counter()
            try:
                statuses[str(client.post(url + "/search", json=PROBE).status_code)] += 1
            except httpx.HTTPError as exc:
                statuses[type(exc).__name__] += 1
            latencies.append((time.perf_counter() - started) * 1000)
            time.sleep(0.05)
    return latencies, statuses


def summary(latencies: list[float]) -> str:
    return (
        f"n={len(latencies)} p50 {percentile(latencies, 0.5):,.0f} ms, "
        f"p95 {percentile(latencies, 0.95):,.0f} ms, max {max(latencies):,.0f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", type=Path, default=REPO, help="checkout whose service is measured")
    parser.add_argument("--vault", type=Path, default=REPO / "docs/example-vault")
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--mb", type=float, default=1.0, help="size of each flood request's filter lists")
    parser.add_argument("--provider", default="none", help="EMBEDDING_PROVIDER of the service")
    parser.add_argument("--port", type=int, default=0, help="the service's port (default: any free one)")
    args = parser.parse_args()

    port = args.port or free_port()
    url = f"http://127.0.0.1:{port}"
    data = Path(tempfile.mkdtemp(prefix="flood-"))
    env = {**os.environ, "EMBEDDING_PROVIDER": args.provider, "WATCH": "false", "LOG_LEVEL": "WARNING"}
    env |= {"HOST": "127.0.0.1", "PORT": str(port), "VAULT_PATH": str(args.vault.resolve())}
    env |= {"DATA_DIR": str(data), "PYTHONPATH": str(args.repo)}
    log = open(data / "service.log", "w+b")  # noqa: SIM115
    service = subprocess.Popen(
        [sys.executable, "-m", "backend", "serve"],
        cwd=args.repo,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                job = httpx.get(url + "/index/status", timeout=2).json().get("job")
                if job and job.get("finished_at"):
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or service.poll() is not None:
                raise SystemExit(f"the service did not start: {(data / 'service.log').read_text()[-2000:]}")
            time.sleep(0.1)
        print(f"machine: {machine()}; code: {args.repo}; vault: {args.vault}; provider: {args.provider}")
        alone, alone_statuses = probe(url, None, 40)
        rss_before = rss_mb(service.pid)
        print(f"probe alone: {summary(alone)} {dict(alone_statuses)}; RSS {rss_before:.0f} MB")

        peak = [rss_before]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.2):
                try:
                    peak.append(rss_mb(service.pid))
                except OSError:
                    return

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        cpu_before, wall_before = cpu_seconds(service.pid), time.monotonic()
        results: multiprocessing.Queue = multiprocessing.Queue()
        flooder = multiprocessing.Process(
            target=_flood, args=(port, args.clients, args.seconds, args.mb, results), daemon=True
        )
        flooder.start()
        time.sleep(1.0)  # the flood under way (clients connected and sending) before the probe starts
        loaded, loaded_statuses = probe(url, time.monotonic() + args.seconds - 1.0, 0)
        size, flood_statuses = results.get(timeout=args.seconds + 180)
        flooder.join(30)
        cpu = (cpu_seconds(service.pid) - cpu_before) / (time.monotonic() - wall_before)
        stop.set()
        sampler.join(5)
        print(
            f"flood: {args.clients} clients x {size / 1024 / 1024:.2f} MB for {args.seconds:g} s: "
            f"{flood_statuses}"
        )
        print(f"probe under the flood: {summary(loaded)} {dict(loaded_statuses)}")
        print(
            f"service RSS: {rss_before:.0f} MB before, {max(peak):.0f} MB peak (sampled every 0.2 s); "
            f"CPU {cpu:.2f} cores during the flood"
        )
        return 0
    finally:
        service.terminate()
        try:
            service.wait(60)
        except subprocess.TimeoutExpired:
            service.kill()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
