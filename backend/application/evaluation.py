"""Evaluation use case: run judged queries through search and score note-level rankings."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from statistics import fmean

from backend.application.search import SearchService
from backend.domain.metrics import dedupe_notes, hit_at, mrr_at, ndcg_at, recall_at
from backend.domain.models import SearchMode

CANDIDATE_CHUNKS = 100  # enough chunks to fill the top 10 notes after deduplication


@dataclass(frozen=True, slots=True)
class JudgedQuery:
    id: str
    text: str


@dataclass(frozen=True, slots=True)
class ModeScores:
    mode: SearchMode
    queries: int
    ndcg_10: float
    recall_10: float
    hit_3: float
    mrr_10: float
    degraded: int  # queries answered by keyword only because dense was unavailable


def evaluate(
    search: SearchService,
    queries: Sequence[JudgedQuery],
    qrels: Mapping[str, Mapping[str, int]],
    mode: SearchMode,
    *,
    on_query: Callable[[], None] | None = None,
) -> ModeScores:
    judged = [q for q in queries if qrels.get(q.id)]
    ndcg, recall, hit, mrr = [], [], [], []
    degraded = 0
    for query in judged:
        outcome = search.search(query.text, top_k=10, mode=mode, candidates=CANDIDATE_CHUNKS)
        degraded += outcome.degraded
        ranking = dedupe_notes([hit.payload["note_path"] for hit in outcome.hits])
        relevant = qrels[query.id]
        ndcg.append(ndcg_at(ranking, relevant, 10))
        recall.append(recall_at(ranking, relevant, 10))
        hit.append(hit_at(ranking, relevant, 3))
        mrr.append(mrr_at(ranking, relevant, 10))
        if on_query:
            on_query()
    if not judged:
        return ModeScores(mode, 0, 0.0, 0.0, 0.0, 0.0, 0)
    return ModeScores(mode, len(judged), fmean(ndcg), fmean(recall), fmean(hit), fmean(mrr), degraded)


@dataclass(frozen=True, slots=True)
class SetReport:
    """One judged set's scores, a row per mode, with the seconds each mode took."""

    name: str
    rows: list[tuple[ModeScores, float]]


def evaluate_modes(
    name: str,
    search: SearchService,
    queries: Sequence[JudgedQuery],
    qrels: Mapping[str, Mapping[str, int]],
    modes: Sequence[SearchMode],
    on_query: Callable[[], None] | None = None,
) -> SetReport:
    rows = []
    for mode in modes:
        started = time.perf_counter()
        scores = evaluate(search, queries, qrels, mode, on_query=on_query)
        rows.append((scores, time.perf_counter() - started))
    return SetReport(name, rows)


def scores_json(reports: Sequence[SetReport]) -> list[dict[str, object]]:
    """A row per set and mode: the ModeScores fields, `set`, and `seconds`."""
    return [
        {"set": report.name, **asdict(s), "mode": s.mode.value, "seconds": seconds}
        for report in reports
        for s, seconds in report.rows
    ]


def scores_table(reports: Sequence[SetReport]) -> str:
    """Per set, a line per mode; then, with hybrid and both single modes scored, hybrid's margin over the
    better single mode (what the fusion defaults are chosen by: the worst set's margin)."""
    lines: list[str] = []
    margins: list[float] = []
    for report in reports:
        lines.append(f"{report.name}")
        lines.append(
            f"  {'mode':<8} {'queries':>7} {'nDCG@10':>8} {'recall@10':>9} {'hit@3':>6} {'MRR@10':>7}"
        )
        by_mode = {s.mode: s for s, _ in report.rows}
        for s, seconds in report.rows:
            qps = s.queries / seconds if seconds else 0.0
            lines.append(
                f"  {s.mode.value:<8} {s.queries:>7} {s.ndcg_10:>8.3f} {s.recall_10:>9.3f} "
                f"{s.hit_3:>6.3f} {s.mrr_10:>7.3f}   {qps:.1f} queries/s"
            )
            if s.degraded:
                lines.append(f"  warning: {s.degraded} {s.mode.value} queries fell back to keyword search")
        if all(mode in by_mode for mode in SearchMode):
            best = max(by_mode[SearchMode.DENSE].ndcg_10, by_mode[SearchMode.KEYWORD].ndcg_10)
            margins.append(by_mode[SearchMode.HYBRID].ndcg_10 - best)
            lines.append(f"  hybrid - best single mode (nDCG@10): {margins[-1]:+.3f}")
    if len(margins) > 1:
        lines.append(f"worst set's margin of hybrid over its best single mode: {min(margins):+.3f}")
    return "\n".join(lines)
