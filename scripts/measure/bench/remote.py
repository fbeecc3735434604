"""The work sent to a remote model (issue 45, point 6), a part of `make bench` (`--only remote`).

    python -m scripts.measure.bench.suite --only remote --compare-with /tmp/before  # before: main's checkout
    python -m scripts.measure.bench.remote --vault ../shared/corpora/real-dev/vault --compare-with /tmp/before

`python -m backend serve` with EMBEDDING_PROVIDER=ollama against a stand-in Ollama on loopback
(tests/fake_ollama.py: a real HTTP server speaking /api/embed; deterministic 1,024-dimensional vectors as
mxbai-embed-large's, one request worked on at a time as a CPU Ollama does, a fixed time a text standing in
for the model's work). Four steps, each until every note is dense and the job is done: the first index of
the vault (empty data dir, empty embedding cache), a rebuild of it (POST /index/rebuild), the same vault
in another data dir (what `make eval`, a benchmark or a wiped data dir does), and a second vault holding the
same notes (a copy at another path, its own data dir). Texts sent: what the server was asked for; cache
hits: what `/index/status` says (only this code says it); seconds from the process start, or from the
rebuild's request, to the job's end with every note dense.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from scripts.measure.bench.parts import code_versions, run_alone
from scripts.measure.bench.real_vault import profile, write_vault
from scripts.measure.common import log
from scripts.measure.service import ServiceProcess
from tests.fake_ollama import FakeOllama

DIMENSION = 1024  # mxbai-embed-large's: what the index and the cache hold per text
SECONDS_A_TEXT = 0.005  # the stand-in model's time a text; a 335M model on 2 CPU cores is about 10x slower
POLL_SECONDS = 0.5
CAP_SECONDS = 3600.0
STEPS = ("first index", "rebuild", "another data dir", "another vault, same notes")


@dataclass(slots=True)
class Step:
    code: str
    name: str
    sent: int  # texts the server was asked for
    requests: int
    hits: int | None  # texts the cache answered, as /index/status says (None: the code does not say)
    seconds: float


def measure(label: str, repo: Path, vault: Path, work: Path, seconds_a_text: float) -> list[Step]:
    """The four steps with `repo`'s code, each its own stand-in server's count."""
    copy = work / "second-vault"
    if not copy.exists():
        shutil.copytree(vault, copy)
    cache = work / label / "cache"  # this code's shared cache; the code before keeps one per data dir
    steps: list[Step] = []
    with FakeOllama(dimension=DIMENSION, seconds_a_text=seconds_a_text, parallel=1) as server:
        env = server.env() | {
            "WATCH": "false",
            "EMBEDDING_DIMENSION": str(DIMENSION),
            "EMBEDDING_CACHE_DIR": str(cache),
            "LOG_LEVEL": "INFO",
        }
        with _service(vault, work / label / "data", env, repo) as service:
            steps.append(_step(label, STEPS[0], server, service, None))
            accepted = service.post("/index/rebuild")
            accepted.raise_for_status()
            steps.append(_step(label, STEPS[1], server, service, accepted.json()["job_id"]))
        with _service(vault, work / label / "data-eval", env, repo) as service:
            steps.append(_step(label, STEPS[2], server, service, None))
        with _service(copy, work / label / "data-second", env, repo) as service:
            steps.append(_step(label, STEPS[3], server, service, None))
    return steps


def _service(vault: Path, data: Path, env: dict[str, str], repo: Path) -> ServiceProcess:
    data.mkdir(parents=True, exist_ok=True)
    return ServiceProcess(vault, data, env=env, repo=repo, log_path=data / "service.log")


def _step(label: str, name: str, server: FakeOllama, service: ServiceProcess, job_id: str | None) -> Step:
    texts, requests = server.texts, server.answered
    started = time.monotonic() if job_id is not None else service.started
    hits_before = _hits(service) if job_id is not None else 0
    status = _until_dense(service, job_id)
    hits = status.get("embedder", {}).get("cache_hits")
    seconds = time.monotonic() - started
    log(f"remote model, {label}, {name}: {server.texts - texts} texts sent in {seconds:.1f} s")
    return Step(
        label,
        name,
        server.texts - texts,
        server.answered - requests,
        hits - hits_before if hits is not None else None,
        seconds,
    )


def _hits(service: ServiceProcess) -> int:
    return int(service.get("/index/status").json().get("embedder", {}).get("cache_hits") or 0)


def _until_dense(service: ServiceProcess, job_id: str | None) -> dict:
    """/index/status once the job (`job_id`, else the start's) is done and no note waits for its vectors."""
    deadline = time.monotonic() + CAP_SECONDS
    while time.monotonic() < deadline:
        service.assert_alive()
        try:
            status = service.get("/index/status").json()
        except httpx.HTTPError:  # not listening yet
            time.sleep(POLL_SECONDS)
            continue
        job = status.get("job") or {}
        ours = job.get("id") == job_id if job_id is not None else job.get("kind") is not None
        if ours and job.get("finished_at") is not None and status.get("dense_pending") == 0:
            if job.get("phase") != "done":
                raise RuntimeError(f"the {job.get('kind')} job ended {job.get('phase')}: {job.get('error')}")
            return status
        time.sleep(POLL_SECONDS)  # polling: the status has no event to await
    raise RuntimeError(f"not dense after {CAP_SECONDS:.0f} s")


def lines(steps: list[Step], described: str, seconds_a_text: float, before: Path | None) -> list[str]:
    intro = (
        __doc__.split("\n\n", 2)[2].strip().replace("\n", " ")
        + f" The stand-in's time a text: {seconds_a_text * 1000:g} ms. The vault: {described}."
    )
    if before is not None:
        intro += f" 'before' is the checkout at {before}, run right before 'now' on the same vault."
    rows = [
        "## The work sent to a remote model",
        "",
        intro,
        "",
        "| step | code | texts sent | requests | cache hits | seconds until dense |",
        "|---|---|---|---|---|---|",
    ]
    for name in STEPS:
        for step in (s for s in steps if s.name == name):
            hits = f"{step.hits:,}" if step.hits is not None else "n/a"
            rows.append(
                f"| {name} | {step.code} | {step.sent:,} | {step.requests:,} | {hits} | {step.seconds:.1f} |"
            )
    totals = {
        code: sum(s.sent for s in steps if s.code == code) for code in dict.fromkeys(s.code for s in steps)
    }
    seconds = {code: sum(s.seconds for s in steps if s.code == code) for code in totals}
    rows += [
        "",
        "All four steps: " + "; ".join(f"{c} {totals[c]:,} texts, {seconds[c]:.0f} s" for c in totals),
    ]
    return [*rows, ""]


def bench_remote(args: argparse.Namespace, corpora: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        if args.remote_vault is not None:
            vault = args.remote_vault.resolve()
        elif args.quick:
            vault = (corpora / "real-dev" / "vault").resolve()
        else:
            vault = write_vault(corpora, work / "real-shaped")
        shape = profile(vault)
        described = (
            f"{vault.name}, {sum(shape.notes.values()):,} notes, {sum(shape.chunks.values()):,} chunks, "
            f"{sum(shape.windows.values()):,} dense windows"
        )
        steps: list[Step] = []
        for label, repo in code_versions(args):
            steps += measure(label, repo, vault, work, args.seconds_a_text)
    return lines(steps, described, args.seconds_a_text, args.compare_with)


def add_arguments(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--remote-vault", type=Path, help="remote: this vault (default: the real-shaped one)")
    ap.add_argument("--seconds-a-text", type=float, default=SECONDS_A_TEXT, help="remote: the model's time")


def _alone(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--vault", dest="remote_vault", type=Path)
    ap.add_argument("--seconds-a-text", type=float, default=SECONDS_A_TEXT)


def main(argv: list[str] | None = None) -> int:
    return run_alone(bench_remote, __doc__, argv, _alone)


if __name__ == "__main__":
    raise SystemExit(main())
