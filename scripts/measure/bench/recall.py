"""What the OpenClaw recall costs a turn: the plugin's before_prompt_build hook timed from Node against the
service (its own process, the embedded default: edge Qdrant + MiniLM), once the vault is fully dense.

Turns: the vault's questions and chit-chat (tests/data/chitchat_turns.txt), shuffled, five turns a session.
The example vault asks its 16 judged questions; the Zettelkasten asks "what are my notes on <title>?" for
random notes. Reports p50/p95/max of the hook's wall time and the share of turns given a block, and writes
the section "Recall hook latency" of docs/benchmarks.md.

    .venv/bin/python -m scripts.measure.bench.recall [--turns 300] [--vault example|zettelkasten ...]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import tempfile
from pathlib import Path

from backend.config import EXAMPLE_VAULT, REPO_ROOT
from scripts.measure.common import machine, percentile, replace_section, section_head
from scripts.measure.service import ServiceProcess
from scripts.node import NODE, environment

CORPORA = REPO_ROOT.parent / "shared" / "corpora"
VAULTS = {"example": EXAMPLE_VAULT, "zettelkasten": CORPORA / "zettelkasten" / "vault"}
HOOK = Path(__file__).with_name("recall_hook.mjs")
REPORT = REPO_ROOT / "docs" / "benchmarks.md"
SECTION = "## Recall hook latency"
WARMUP = 10


def _questions(name: str, vault: Path, count: int, rng: random.Random) -> list[str]:
    if name == "example":
        judged = json.loads((REPO_ROOT / "tests" / "data" / "example_vault_queries.json").read_text())
        return [q["query"] for q in judged]
    notes = sorted(p for p in vault.rglob("*.md") if not any(part.startswith(".") for part in p.parts))
    return [f"what are my notes on {p.stem}?" for p in rng.sample(notes, min(count, len(notes)))]


def _turns(name: str, vault: Path, count: int) -> list[dict[str, str]]:
    rng = random.Random(26)
    chit = (REPO_ROOT / "tests" / "data" / "chitchat_turns.txt").read_text(encoding="utf-8").split("\n")
    questions = _questions(name, vault, count, rng)
    texts = [rng.choice(questions) if i % 3 else rng.choice([c for c in chit if c]) for i in range(count)]
    return [{"text": text, "session": f"s{i // 5}"} for i, text in enumerate(texts)]


def bench(name: str, turns: int, data_root: Path) -> dict:
    vault = VAULTS[name]
    with ServiceProcess(vault, data_root / name) as service:
        status = service.wait_dense(timeout=3600, poll=2, give_up=True)
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as fh:
            for turn in _turns(name, vault, turns + WARMUP):
                fh.write(json.dumps(turn) + "\n")
        done = subprocess.run(
            [str(NODE), str(HOOK), fh.name, service.url, str(WARMUP)],
            env=environment(),
            capture_output=True,
            text=True,
            check=False,
        )
        Path(fh.name).unlink()
        if done.returncode != 0:
            raise SystemExit(f"the hook failed:\n{done.stderr}")
        rows = [json.loads(line) for line in done.stdout.splitlines()]
    ms = [row["ms"] for row in rows]
    return {
        "vault": name,
        "notes": status.get("indexed_notes"),
        "chunks": status.get("indexed_chunks"),
        "model": status.get("embedding_model"),
        "turns": len(rows),
        "p50": percentile(ms, 0.5),
        "p95": percentile(ms, 0.95),
        "max": max(ms),
        "given": sum(row["given"] for row in rows) / len(rows),
    }


def _write(results: list[dict], where: str) -> str:
    lines = [
        *section_head(SECTION, "bench-recall", where),
        "The OpenClaw plugin's `before_prompt_build` hook (integrations/openclaw/recall.js) called from Node",
        "as the Gateway calls it, one call a turn, against the service in its own process on loopback with",
        "the embedded default, the vault fully dense. Turns: the vault's questions and chit-chat, 2 to 1,",
        "five turns a session (repeats left out). Goal (issue 26): p95 ≤ 60 ms.",
        "",
        "| vault | notes | chunks | turns | p50 ms | p95 ms | max ms | turns given a block |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['vault']} | {r['notes']} | {r['chunks']} | {r['turns']} | {r['p50']:.1f} | {r['p95']:.1f} "
            f"| {r['max']:.1f} | {r['given']:.0%} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--vault", action="append", choices=sorted(VAULTS))
    parser.add_argument("--data-root", type=Path, default=REPO_ROOT / "data" / "bench-recall")
    args = parser.parse_args()
    where = machine()
    results = [bench(name, args.turns, args.data_root) for name in args.vault or ["example", "zettelkasten"]]
    section = _write(results, where)
    print(section)
    replace_section(REPORT, SECTION, section)


if __name__ == "__main__":
    main()
