"""Evaluation use case: run judged queries through search and score note-level rankings."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
