"""Equal results, proven: two checkouts asked the same questions of the same indexes, every ranked list,
score, confidence and shown hit (redacted text, highlights, sensitive categories) compared. A speed change
must not change an answer (or must say which and why).

    python -m scripts.measure.compare_results --before /work/before-37 --before-data /tmp/data-before \
        --after-data /tmp/data-after

Each checkout's `SearchService` answers in its own process (this file run with that checkout first on the
path); `--before-data`/`--after-data` hold one index folder per set (LoCoMo dev, SciFact, personal-dev, the
XQuAD languages, the example vault), built by either checkout: copies, since opening an index may write to it.
Prints, per set and mode, the questions whose answer differs; exit 1 when any does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# from this file, not from scripts.measure.service: run as `--dump` with another checkout first on the path,
# it imports nothing of scripts/ (that checkout may have none of it)
REPO = Path(__file__).resolve().parents[2]
CORPORA = REPO.parent / "shared" / "corpora"
MODES = ("hybrid", "keyword", "dense")


def dev_sets(corpora: Path) -> dict[str, dict[str, Any]]:
    """Each set: its vault, its questions, the folder name of its index, the day its questions count from."""
    xquad = corpora / "xquad-dev"
    sets: dict[str, dict[str, Any]] = {
        "locomo-dev": {
            "vault": corpora / "locomo-dev/vault",
            "queries": corpora / "locomo-dev/queries-dev.jsonl",
        },
        "scifact": {"vault": corpora / "scifact/vault", "queries": corpora / "scifact/queries-train.jsonl"},
        "personal-dev": {
            "vault": corpora / "personal-dev/vault",
            "queries": corpora / "personal-dev/queries-dev.jsonl",
            "today": "2025-11-15",
        },
        "example-vault": {
            "vault": REPO / "docs/example-vault",
            "queries": REPO / "tests/data/example-vault/queries-dev.jsonl",
        },
    }
    for language in ("en", "de", "es", "ru", "zh", "en-over-de"):
        vault_of = (xquad / language / "VAULT").read_text().strip() if language == "en-over-de" else language
        sets[language] = {
            "vault": xquad / vault_of / "vault",
            "queries": xquad / language / "queries-dev.jsonl",
        }
    return sets


def dump(vault: Path, data_dir: Path, queries: Path, today: str | None, limit: int) -> dict[str, Any]:
    """Every question's answer in each mode, from the checkout first on the path (imported here, late)."""
    from backend.application.operations import SearchQuery, search_notes
    from backend.bootstrap import build_services
    from backend.config import load_settings
    from backend.domain.models import SearchMode

    extra = {"today": dt.date.fromisoformat(today)} if today else {}
    services = build_services(load_settings(vault_path=vault, data_dir=data_dir, watch=False, **extra))
    asked = [json.loads(line)["text"] for line in queries.read_text().splitlines() if line.strip()][:limit]
    answers: dict[str, Any] = {}
    try:
        services.supervisor.open(start_indexing=False)  # as a service opens it (laid out for search)
        # answered as a started service answers: after its warm-up, for a checkout that has one
        warm = getattr(services, "warm_search", None) or getattr(services.supervisor, "warm_search", None)
        if warm is not None:
            warm().join()
        for mode in MODES:
            for query in asked:
                found = search_notes(services, SearchQuery(query=query, top_k=10, mode=SearchMode(mode)))
                outcome = found.outcome
                answers[f"{mode}\t{query}"] = {
                    "mode": outcome.mode.value,
                    "hits": [[h.id, round(h.score, 9), h.confidence] for h in outcome.hits],
                    "total": outcome.total_hits,
                    "related": [r.path for r in outcome.related],
                    "warnings": found.warnings,
                    # as shown: redacted text, highlights, sensitive categories
                    "shown": [
                        [v.content, v.highlights, v.sensitive_categories, v.redactions] for v in found.views
                    ],
                }
    finally:
        services.close()
    return answers


def answers_of(checkout: Path, spec: dict[str, Any], data_dir: Path, limit: int) -> dict[str, Any]:
    from backend.infrastructure.index_catalog.edge import EdgeIndexCatalog

    # the vault the index was built from (an index answers for its own vault only): the example vault of
    # the checkout that built it, say
    vault = EdgeIndexCatalog(data_dir / "qdrant").vault_owner() or str(spec["vault"])
    command = [sys.executable, str(Path(__file__).resolve()), "--dump", vault, str(data_dir)]
    command += [str(spec["queries"]), spec.get("today") or "", str(limit)]
    done = subprocess.run(
        command, cwd=checkout, env={**os.environ, "PYTHONPATH": str(checkout), "LOG_LEVEL": "WARNING"},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{checkout} on {spec['vault']}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def differences(before: dict[str, Any], after: dict[str, Any], tolerance: float = 0.0) -> list[str]:
    """The answers that differ, beyond scores within `tolerance` of each other."""
    found = []
    for key, old in before.items():
        new = after.get(key)
        if new != old and (new is None or kinds_of(old, new, tolerance)):
            mode, query = key.split("\t", 1)
            found.append(f"{mode}: {query!r}\n    before {old}\n    after  {new}")
    return found


def kinds_of(old: dict[str, Any], new: dict[str, Any], tolerance: float = 0.0) -> set[str]:
    """How two answers to one question differ: "ranking" (the ids or their order), "scores" (beyond
    `tolerance`), "confidences", and any other field by its name."""
    kinds = {name for name in old if name != "hits" and old[name] != new.get(name)}
    old_hits, new_hits = old["hits"], new["hits"]
    if [h[0] for h in old_hits] != [h[0] for h in new_hits]:
        return kinds | {"ranking"}
    if score_gap(old, new) > tolerance:
        kinds.add("scores")
    if [h[2] for h in old_hits] != [h[2] for h in new_hits]:
        kinds.add("confidences")
    return kinds


def score_gap(old: dict[str, Any], new: dict[str, Any]) -> float:
    """The largest difference of one hit's score between two answers ranking the same hits."""
    return max((abs(a[1] - b[1]) for a, b in zip(old["hits"], new["hits"], strict=False)), default=0.0)


def summary(before: dict[str, Any], after: dict[str, Any]) -> str:
    """How many answers differ in each way, and the largest score difference of a hit ranked alike."""
    counts: dict[str, int] = {}
    gap = 0.0
    for key, old in before.items():
        new = after.get(key)
        if new is None or new == old:
            continue
        for kind in kinds_of(old, new):
            counts[kind] = counts.get(kind, 0) + 1
        if [h[0] for h in old["hits"]] == [h[0] for h in new["hits"]]:
            gap = max(gap, score_gap(old, new))
    kinds = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
    return f"{kinds or 'none'}; largest score difference of a hit ranked alike {gap:.2g}"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--dump":
        vault, data_dir, queries, today, limit = sys.argv[2:7]
        print(json.dumps(dump(Path(vault), Path(data_dir), Path(queries), today or None, int(limit))))
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", type=Path, required=True, help="a checkout of the code before the change")
    ap.add_argument("--before-data", type=Path, required=True, help="its index folders, one per set")
    ap.add_argument("--after", type=Path, default=REPO)
    ap.add_argument("--after-data", type=Path, required=True)
    ap.add_argument("--corpora", type=Path, default=CORPORA)
    ap.add_argument("--sets", nargs="+", help="only these sets (default: every one with an index folder)")
    ap.add_argument("--limit", type=int, default=100000, help="only the first N questions of each set")
    ap.add_argument(
        "--score-tolerance",
        type=float,
        default=0.0,
        help="scores this close count as equal (the ranking, confidences and the rest must still match)",
    )
    args = ap.parse_args()
    changed = 0
    for name, spec in dev_sets(args.corpora).items():
        if (args.sets and name not in args.sets) or not (args.before_data / name).is_dir():
            continue
        before = answers_of(args.before.resolve(), spec, args.before_data / name, args.limit)
        after = answers_of(args.after.resolve(), spec, args.after_data / name, args.limit)
        found = differences(before, after, args.score_tolerance)
        changed += len(found)
        print(f"{name}: {len(before)} answers (questions x modes), {len(found)} differ", flush=True)
        if before != after:
            print(f"  differing in: {summary(before, after)}", flush=True)
        for line in found[:5]:
            print("  " + line)
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
