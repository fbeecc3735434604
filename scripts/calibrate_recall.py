"""Fit the weights of the hits' confidence (backend/domain/confidence.py); report what the recall gate does.

Answerable turns are a set's judged questions (a hit is relevant when its note is judged relevant); turns the
vault cannot answer are chit-chat (tests/data/chitchat_turns.txt, 11 languages) and questions of other sets.
The weights are fitted on LoCoMo dev only, once from the hybrid search (for the embedded model) and once from
keyword search (the weights for any other model, and for no model); the example vault and XQuAD English are
reported with the same weights, as held-out vaults. For each threshold, per set, with at most 3 entries a turn
as the OpenClaw recall gives:

* answerable: share of answerable turns that get at least one relevant entry;
* only irrelevant: share of all turns that get entries, none of them relevant;
* unanswerable: share of chit-chat and foreign turns that get any entry.

    .venv/bin/python -m scripts.calibrate_recall [--corpora ../shared/corpora] [--shipped]

Indexes are built (or reused) under data/eval/<set> with the embedded default, as `make eval` does.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from backend.application.model_choice import ENGLISH_MODEL
from backend.config import EXAMPLE_VAULT, REPO_ROOT, load_settings
from backend.domain.confidence import KEYWORD_ONLY, Calibration, Evidence, calibration_for, features
from backend.domain.models import SearchMode
from backend.entrypoints.cli.commands import run_job
from backend.entrypoints.cli.target import open_local
from backend.infrastructure.eval_files import find_set, read_queries

CHITCHAT = REPO_ROOT / "tests" / "data" / "chitchat_turns.txt"
EXAMPLE_QUERIES = REPO_ROOT / "tests" / "data" / "example_vault_queries.json"
FOREIGN_PER_SET = 150
ENTRIES = 3  # what the OpenClaw recall injects at most
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6)


@dataclass
class Turn:
    kind: str  # answerable | chitchat | foreign
    text: str
    relevant: set[str]


@dataclass
class Observed:
    turn: Turn
    evidence: list[Evidence]
    relevant: list[bool]
    chunks: int


def _turns(corpora: Path, name: str) -> tuple[Path, list[Turn]]:
    if name == "example":
        judged = json.loads(EXAMPLE_QUERIES.read_text(encoding="utf-8"))
        return EXAMPLE_VAULT, [Turn("answerable", q["query"], {q["expected_note"]}) for q in judged]
    found = find_set(corpora / name)
    qrels = found.read_qrels()
    turns = [Turn("answerable", q.text, set(qrels[q.id])) for q in found.read_queries() if qrels.get(q.id)]
    return found.vault, turns


def _foreign(corpora: Path, name: str) -> list[Turn]:
    """Questions about other vaults: the same kind of question, which this vault cannot answer."""
    others = {
        "locomo-dev": ("scifact/queries-train.jsonl", "xquad-dev/en/queries-dev.jsonl"),
        "xquad-dev/en": ("scifact/queries-train.jsonl", "locomo-dev/queries-dev.jsonl"),
        "example": ("locomo-dev/queries-dev.jsonl", "xquad-dev/en/queries-dev.jsonl"),
    }.get(name, ("scifact/queries-train.jsonl", "locomo-dev/queries-dev.jsonl"))
    rng = random.Random(7)
    turns = []
    for path in others:
        queries = read_queries(corpora / path)
        rng.shuffle(queries)
        turns += [Turn("foreign", q.text, set()) for q in queries[:FOREIGN_PER_SET]]
    return turns


def observe(corpora: Path, name: str, mode: SearchMode, model: str | None) -> list[Observed]:
    vault, turns = _turns(corpora, name)
    chit = [line.strip() for line in CHITCHAT.read_text(encoding="utf-8").splitlines() if line.strip()]
    turns += [Turn("chitchat", text, set()) for text in chit] + _foreign(corpora, name)
    folder = name.replace("/", "-") + (f"-{model}" if model else "")
    overrides = {"embedding_model": model} if model else {}
    services = open_local(
        load_settings(vault_path=vault, data_dir=REPO_ROOT / "data" / "eval" / folder, **overrides)
    )
    try:
        run_job(services, "rebuild" if services.index.model_mismatch else "index")
        chunks = services.index.chunk_count()
        observed = []
        for turn in turns:
            outcome = services.search.search(turn.text, top_k=10, mode=mode)
            relevant = [str(hit.payload.get("note_path")) in turn.relevant for hit in outcome.hits]
            observed.append(Observed(turn, outcome.evidence, relevant, chunks))
        return observed
    finally:
        services.close()


def _matrix(observed: Sequence[Observed], calibration: Calibration) -> tuple[np.ndarray, np.ndarray]:
    rows, labels = [], []
    for seen in observed:
        for evidence, relevant in list(zip(seen.evidence, seen.relevant, strict=True))[:5]:
            rows.append(features(evidence, seen.chunks, calibration))
            labels.append(1.0 if relevant else 0.0)
    return np.array(rows), np.array(labels)


def fit(observed: Sequence[Observed], shape: Calibration, name: str) -> Calibration:
    """L2-regularised logistic regression by gradient descent on standardised features."""
    x, y = _matrix(observed, shape)
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = (x - mean) / std
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(5000):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        w -= 0.1 * (z.T @ (p - y) + w) / len(y)
        b -= 0.1 * float((p - y).mean())
    weights = w / std
    bias = b - float((w * mean / std).sum())
    return Calibration(name, tuple(round(float(v), 3) for v in weights), round(bias, 3), shape.uses_dense)


def gate(
    observed: Sequence[Observed], calibration: Calibration, threshold: float
) -> tuple[float, float, float]:
    answerable = [s for s in observed if s.turn.kind == "answerable"]
    others = [s for s in observed if s.turn.kind != "answerable"]
    with_relevant = only_irrelevant = others_given = 0
    for seen in observed:
        given = [
            relevant
            for evidence, relevant in zip(seen.evidence, seen.relevant, strict=True)
            if calibration.probability(evidence, seen.chunks) >= threshold
        ][:ENTRIES]
        with_relevant += seen.turn.kind == "answerable" and any(given)
        only_irrelevant += bool(given) and not any(given)
        others_given += seen.turn.kind != "answerable" and bool(given)
    return (
        with_relevant / max(1, len(answerable)),
        only_irrelevant / max(1, len(observed)),
        others_given / max(1, len(others)),
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", type=Path, default=REPO_ROOT.parent / "shared" / "corpora")
    parser.add_argument(
        "--model", help="the embedding model to fit the dense weights for (default: the embedded default)"
    )
    parser.add_argument("--keyword", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--also", nargs="*", default=[], help="more held-out sets, e.g. xquad-dev/de")
    parser.add_argument(
        "--shipped",
        action="store_true",
        help="report the weights in backend/domain/confidence.py instead of fitting new ones",
    )
    args = parser.parse_args()
    sets = ("locomo-dev", "example", "xquad-dev/en", *args.also)
    dense_shape = Calibration("dense", (), 0.0, True)
    runs = [(SearchMode.HYBRID, dense_shape)] + ([(SearchMode.KEYWORD, KEYWORD_ONLY)] if args.keyword else [])
    for mode, shape in runs:
        seen = {name: observe(args.corpora, name, mode, args.model) for name in sets}
        if args.shipped:
            fitted = calibration_for(args.model or ENGLISH_MODEL, dense=mode is SearchMode.HYBRID)
        else:
            fitted = fit(seen["locomo-dev"], shape, shape.name)
        print(f"\n{mode.value}: weights={fitted.weights} bias={fitted.bias}")
        print(
            "| threshold | "
            + " | ".join(f"{n}: answerable / only irrelevant / unanswerable" for n in sets)
            + " |"
        )
        print("|---|" + "---|" * len(sets))
        for threshold in THRESHOLDS:
            cells = [gate(seen[name], fitted, threshold) for name in sets]
            row = " | ".join(f"{a:.3f} / {o:.3f} / {u:.3f}" for a, o, u in cells)
            print(f"| {threshold} | {row} |")
        turns = {
            name: (sum(s.turn.kind == "answerable" for s in seen[name]), len(seen[name])) for name in sets
        }
        print(f"turns (answerable, all): {turns}")


if __name__ == "__main__":
    main()
