"""Fit the weights of the hits' confidence (backend/domain/ranking/confidence.py); report what the recall gate
does.

Every dev set at once: personal-dev (a person's own vault, questions typed by kind, six the vault cannot
answer), LoCoMo dev (chat sessions), the example vault's questions and XQuAD English (encyclopaedia
paragraphs). Each set is also asked turns its vault cannot answer: chit-chat (tests/data/chitchat_turns.txt,
11 languages) and 150 questions each of two other sets. A hit is relevant when its note is judged relevant.

The fit is a logistic regression over each hit's own evidence (never how it compares with the other hits of
its list), on the first 5 hits of every turn, each set weighing the same and relevant and irrelevant hits
weighing the same. Its bias is then moved so that the recall floor (RECALL_FLOOR, 0.4) is the operating point
chosen by the worst set: the floor that gives the most answerable questions a relevant entry on the set that
gets the fewest (personal-dev, LoCoMo dev), while no chit-chat turn, and at most 10% of all the turns the
vaults cannot answer, get anything. Reported per set and threshold, as the OpenClaw recall quotes
(of the first 3 hits, those at or above the floor):

* answerable: share of answerable questions given at least one relevant entry;
* only irrelevant: share of all turns given entries, none of them relevant;
* none / foreign / chit-chat: the set's own unanswerable questions, other sets' questions and chit-chat given
  anything.

and per kind of question at the floor.

    .venv/bin/python -m scripts.measure.calibration.recall [--corpora ../shared/corpora] [--shipped] \
        [--model NAME]

Indexes are built (or reused) under data/eval/<set> (or --data-dir), as `make eval` does.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import random
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from backend.application.evaluation import RECALL_ENTRIES
from backend.application.indexing.model_choice import ENGLISH_MODEL
from backend.bootstrap import Services
from backend.config import REPO_ROOT, load_settings
from backend.domain.models import SearchMode
from backend.domain.ranking.confidence import (
    KEYWORD_ONLY,
    RECALL_FLOOR,
    Calibration,
    Evidence,
    calibration_for,
    features,
)
from backend.entrypoints.cli.commands import run_job
from backend.entrypoints.cli.target import open_local
from backend.infrastructure.eval_files import find_set, read_queries

CHITCHAT = REPO_ROOT / "tests" / "data" / "chitchat_turns.txt"
FOREIGN_PER_SET = 150
FIT_HITS = 5  # the first hits of each turn the weights are fitted on
THRESHOLDS = (0.2, 0.3, 0.4, 0.5, 0.6)
UNANSWERABLE_MAX = 0.10  # turns the vault cannot answer given anything, at most
WORST_OF = ("personal-dev", "locomo-dev")  # the sets whose answerable questions choose the floor
# The "now" a set's questions are asked in (personal-dev's "this year" is 2025)
TODAY = {"personal-dev": dt.date(2025, 11, 15)}
SETS = {
    "personal-dev": "personal-dev",
    "locomo-dev": "locomo-dev",
    "example-vault": str(REPO_ROOT / "tests" / "data" / "example-vault"),
    "xquad-dev-en": "xquad-dev/en",
}
FOREIGN = {
    "personal-dev": ("scifact/queries-train.jsonl", "locomo-dev/queries-dev.jsonl"),
    "locomo-dev": ("scifact/queries-train.jsonl", "xquad-dev/en/queries-dev.jsonl"),
    "example-vault": ("locomo-dev/queries-dev.jsonl", "xquad-dev/en/queries-dev.jsonl"),
    "xquad-dev-en": ("scifact/queries-train.jsonl", "locomo-dev/queries-dev.jsonl"),
}
UNANSWERABLE = ("none", "foreign", "chitchat")


@dataclass
class Turn:
    kind: str  # answerable | none (the set's own, unanswerable) | chitchat | foreign
    question_kind: str  # the set's type of question (time, hub, ...), else the turn's kind
    text: str
    relevant: set[str]


@dataclass
class Observed:
    turn: Turn
    evidence: list[Evidence]
    relevant: list[bool]
    chunks: int


def _turns(corpora: Path, name: str) -> tuple[Path, list[Turn]]:
    found = find_set(corpora / SETS.get(name, name))
    qrels = found.read_qrels()
    turns = []
    for q in found.read_queries():
        relevant = {note for note, grade in (qrels.get(q.id) or {}).items() if grade > 0}
        kind = "answerable" if relevant else "none"
        turns.append(Turn(kind, q.kind or kind, q.text, relevant))
    return found.vault, turns


def _foreign(corpora: Path, name: str) -> list[Turn]:
    """Questions about other vaults: the same kind of question, which this vault cannot answer."""
    others = FOREIGN.get(name, ("scifact/queries-train.jsonl", "locomo-dev/queries-dev.jsonl"))
    rng = random.Random(7)
    turns = []
    for path in others:
        queries = read_queries(corpora / path)
        rng.shuffle(queries)
        turns += [Turn("foreign", "foreign", q.text, set()) for q in queries[:FOREIGN_PER_SET]]
    return turns


def asked_turns(corpora: Path, name: str) -> tuple[Path, list[Turn]]:
    """The set's vault and every turn it is asked: its own questions, chit-chat, other sets' questions."""
    vault, turns = _turns(corpora, name)
    chit = [line.strip() for line in CHITCHAT.read_text(encoding="utf-8").splitlines() if line.strip()]
    turns += [Turn("chitchat", "chitchat", text, set()) for text in chit]
    return vault, turns + _foreign(corpora, name)


@contextmanager
def indexed(vault: Path, name: str, model: str | None, data_dir: Path) -> Iterator[Services]:
    """The set's services on its index under `data_dir` (built, or brought up to date, first)."""
    folder = name.replace("/", "-") + (f"-{model}" if model else "")
    overrides: dict[str, object] = {"embedding_model": model} if model else {}
    if name in TODAY:
        overrides["today"] = TODAY[name]
    services = open_local(load_settings(vault_path=vault, data_dir=data_dir / folder, **overrides))
    try:
        run_job(services, services.supervisor.index_job())
        yield services
    finally:
        services.close()


def observe_in(services: Services, turns: Sequence[Turn], mode: SearchMode) -> list[Observed]:
    chunks = services.index.chunk_count()
    observed = []
    for turn in turns:
        outcome = services.search.search(turn.text, top_k=10, mode=mode)
        relevant = [str(hit.payload.get("note_path")) in turn.relevant for hit in outcome.hits]
        observed.append(Observed(turn, outcome.evidence, relevant, chunks))
    return observed


def observe(corpora: Path, name: str, mode: SearchMode, model: str | None, data_dir: Path) -> list[Observed]:
    vault, turns = asked_turns(corpora, name)
    with indexed(vault, name, model, data_dir) as services:
        return observe_in(services, turns, mode)


def _matrix(
    seen: dict[str, list[Observed]], calibration: Calibration
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, labels and weights: each set weighs the same, and so do relevant and irrelevant hits."""
    rows, labels, weights = [], [], []
    for observed in seen.values():
        start = len(rows)
        for turn in observed:
            for evidence, relevant in list(zip(turn.evidence, turn.relevant, strict=True))[:FIT_HITS]:
                rows.append(features(evidence, turn.chunks, calibration))
                labels.append(1.0 if relevant else 0.0)
        weights += [1.0 / max(1, len(rows) - start)] * (len(rows) - start)
    y, w = np.array(labels), np.array(weights)
    for label in (0.0, 1.0):
        w[y == label] *= 0.5 / max(w[y == label].sum(), 1e-12)
    return np.array(rows), y, w * len(y)


def fit(seen: dict[str, list[Observed]], shape: Calibration, name: str) -> Calibration:
    """Weighted, L2-regularised logistic regression by gradient descent on standardised features."""
    x, y, sample = _matrix(seen, shape)
    mean, std = x.mean(0), x.std(0) + 1e-9
    z = (x - mean) / std
    w, b = np.zeros(z.shape[1]), 0.0
    for _ in range(5000):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        g = sample * (p - y)
        w -= 0.1 * (z.T @ g + w) / len(y)
        b -= 0.1 * float(g.mean())
    weights = w / std
    bias = b - float((w * mean / std).sum())
    return Calibration(name, tuple(round(float(v), 3) for v in weights), round(bias, 3), shape.uses_dense)


def given(seen: Observed, calibration: Calibration, threshold: float) -> list[bool]:
    """What the recall quotes (of the first RECALL_ENTRIES hits, those at or above `threshold`): relevant?"""
    pairs = list(zip(seen.evidence, seen.relevant, strict=True))[:RECALL_ENTRIES]
    return [rel for ev, rel in pairs if calibration.probability(ev, seen.chunks) >= threshold]


def gate(observed: Sequence[Observed], calibration: Calibration, threshold: float) -> dict[str, float]:
    """Per kind of turn, the share given anything (answerable: given a relevant entry); "only irrelevant":
    the share of all turns given entries none of which is relevant."""
    counts: dict[str, list[int]] = {}
    only_irrelevant = 0
    for seen in observed:
        quoted = given(seen, calibration, threshold)
        hit = any(quoted) if seen.turn.kind == "answerable" else bool(quoted)
        counts.setdefault(seen.turn.kind, [0, 0])
        counts[seen.turn.kind][0] += hit
        counts[seen.turn.kind][1] += 1
        only_irrelevant += bool(quoted) and not any(quoted)
    shares = {kind: got / total for kind, (got, total) in counts.items()}
    shares["only irrelevant"] = only_irrelevant / max(1, len(observed))
    return shares


def by_question_kind(observed: Sequence[Observed], calibration: Calibration) -> dict[str, tuple[int, int]]:
    counts: dict[str, tuple[int, int]] = {}
    for seen in observed:
        quoted = given(seen, calibration, RECALL_FLOOR)
        hit = any(quoted) if seen.turn.kind == "answerable" else bool(quoted)
        got, total = counts.get(seen.turn.question_kind, (0, 0))
        counts[seen.turn.question_kind] = (got + hit, total + 1)
    return counts


def operating_point(seen: dict[str, list[Observed]], calibration: Calibration) -> Calibration:
    """The weights with the bias moved so RECALL_FLOOR is the threshold the worst set chooses (see the
    module docstring); unchanged when no threshold keeps chit-chat and unanswerable turns out."""
    best: tuple[float, float] | None = None
    all_turns = [turn for observed in seen.values() for turn in observed]
    for threshold in np.arange(0.05, 0.96, 0.01):
        shares = {name: gate(observed, calibration, float(threshold)) for name, observed in seen.items()}
        if any(shares[name].get("chitchat", 0.0) > 0 for name in seen):
            continue
        if _unanswerable_given(all_turns, calibration, float(threshold)) > UNANSWERABLE_MAX:
            continue
        worst = min(shares[name]["answerable"] for name in (set(WORST_OF) & shares.keys() or shares.keys()))
        if best is None or worst > best[1]:
            best = (float(threshold), worst)
    if best is None:
        return calibration
    shift = _logit(RECALL_FLOOR) - _logit(best[0])
    return replace(calibration, bias=round(calibration.bias + shift, 3))


def _unanswerable_given(observed: Sequence[Observed], calibration: Calibration, threshold: float) -> float:
    """The share of the turns their vault cannot answer (its own, chit-chat, other sets') given anything."""
    turns = [s for s in observed if s.turn.kind in UNANSWERABLE]
    return sum(bool(given(s, calibration, threshold)) for s in turns) / max(1, len(turns))


def _logit(p: float) -> float:
    return math.log(p / (1 - p))


def report(seen: dict[str, list[Observed]], calibration: Calibration) -> None:
    kinds = ("answerable", "only irrelevant", *UNANSWERABLE)
    names = list(seen)
    print("| threshold | " + " | ".join(f"{n}: {' / '.join(kinds)}" for n in names) + " |")
    print("|---|" + "---|" * len(names))
    for threshold in THRESHOLDS:
        cells = []
        for name in names:
            shares = gate(seen[name], calibration, threshold)
            cells.append(" / ".join(f"{shares[k]:.3f}" if k in shares else "-" for k in kinds))
        print(f"| {threshold} | " + " | ".join(cells) + " |")
    print(
        f"\nper kind of question at the floor {RECALL_FLOOR} (answerable: a relevant entry; else: anything):"
    )
    for name in names:
        counts = by_question_kind(seen[name], calibration)
        print(f"  {name}: " + ", ".join(f"{kind} {got}/{total}" for kind, (got, total) in counts.items()))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", type=Path, default=REPO_ROOT.parent / "shared" / "corpora")
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT / "data" / "eval")
    parser.add_argument(
        "--model", help="the embedding model to fit the dense weights for (default: the embedded default)"
    )
    parser.add_argument("--hybrid", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--keyword", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--also", nargs="*", default=[], help="more sets, e.g. xquad-dev/de")
    parser.add_argument(
        "--held-out",
        nargs="*",
        default=[],
        help="sets reported but neither fitted on nor choosing the floor (e.g. locomo-dev for a model the "
        "service picks only for vaults not in English)",
    )
    parser.add_argument(
        "--shipped",
        action="store_true",
        help="report the weights in backend/domain/ranking/confidence.py instead of fitting new ones",
    )
    args = parser.parse_args()
    sets = (*SETS, *args.also)
    dense_shape = Calibration("dense", (), 0.0, True)
    runs = [(SearchMode.HYBRID, dense_shape)] if args.hybrid else []
    runs += [(SearchMode.KEYWORD, KEYWORD_ONLY)] if args.keyword else []
    for mode, shape in runs:
        seen = {name: observe(args.corpora, name, mode, args.model, args.data_dir) for name in sets}
        if args.shipped:
            fitted = calibration_for(args.model or ENGLISH_MODEL, dense=mode is SearchMode.HYBRID)
        else:
            fitting = {name: observed for name, observed in seen.items() if name not in args.held_out}
            fitted = operating_point(fitting, fit(fitting, shape, shape.name))
        print(f"\n{mode.value}: weights={fitted.weights} bias={fitted.bias}")
        report(seen, fitted)


if __name__ == "__main__":
    main()
