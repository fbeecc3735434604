"""The search's ranking rules replayed over the candidates it fused, stage by stage, for the explain data's
"why not this note?" (backend/application/explanation/why_not.py): which rule moved a chunk is read off the
stages, never guessed. Each stage is the search's own function (search.ranking.rank, pointers.follow_pointers,
search.ranking.put_first); the rules inside `put_first` are told apart by running it again without the
threshold, and without the per-note cap too."""

from __future__ import annotations

from dataclasses import dataclass

from backend.application.explanation.rules import SideLists
from backend.application.search.named_notes import named_hits
from backend.application.search.pointers import TargetAsk, follow_pointers
from backend.application.search.question import Question
from backend.application.search.ranking import best_first, hub_asked_about, own_words_first, put_first, rank
from backend.application.search.service import SearchService
from backend.application.search.stage_clock import StageClock
from backend.application.search.stages import QueryVectors
from backend.application.serving.live_index import LiveIndex
from backend.domain.models import PointFilter, ScoredPoint, SearchMode
from backend.domain.periods.time_intent import TimeSpan


@dataclass(frozen=True, slots=True)
class Replay:
    """The candidates at each stage of the ranking, best first."""

    fused: list[ScoredPoint]  # as fused (or one side's own), cut to the search's depth
    named: list[ScoredPoint]  # the first chunk of each note the question names (put first)
    boosted: list[ScoredPoint]  # after the period rule, the named notes' chunks left out (`rank`)
    led: list[ScoredPoint]  # pointers followed: their targets in their place
    unrefined: list[ScoredPoint]  # `put_first` without the per-note cap and the threshold
    uncut: list[ScoredPoint]  # `put_first` without the threshold
    final: list[ScoredPoint]  # `put_first` as the search ran it: its answer before the cut to its size


@dataclass(frozen=True, slots=True)
class Replayed:
    """What the replay needs of the search beyond its sides: the question and how it was asked."""

    question: Question
    mode: SearchMode
    vectors: QueryVectors
    point_filter: PointFilter | None  # as the store read it (tags widened)
    span: TimeSpan | None
    per_note: int | None
    threshold: float | None


def replay(live: LiveIndex, search: SearchService, asked: Replayed, lists: SideLists) -> Replay:
    options = search.options
    fused = _candidates(live, lists)
    named = named_hits(live, search.encoder, asked.question, asked.point_filter, StageClock())
    boost = (asked.span, options.time_boost) if asked.span is not None else None
    boosted = rank(named, fused, boost, own_words_first(asked.question, options.saved_folders))
    store_filter = asked.point_filter if asked.point_filter and not asked.point_filter.is_empty else None
    led = follow_pointers(
        live,
        boosted,
        question=asked.question,
        analyzer=search.analyzer,
        target_ask=TargetAsk(
            dense=asked.vectors.dense,
            sparse=asked.vectors.keywords,
            point_filter=store_filter,
            rrf_k=options.rrf_k,
            rrf_weights=options.rrf_weights,
        ),
    )
    own = asked.mode is SearchMode.KEYWORD
    about = hub_asked_about(asked.question, search.word_terms)
    return Replay(
        fused=fused,
        named=named,
        boosted=boosted,
        led=led,
        unrefined=put_first(named, led, None, None, about, own_scale=own),
        uncut=put_first(named, led, None, asked.per_note, about, own_scale=own),
        final=put_first(named, led, asked.threshold, asked.per_note, about, own_scale=own),
    )


def _candidates(live: LiveIndex, lists: SideLists) -> list[ScoredPoint]:
    """The candidates the ranking rules start from, as the search cut them: the best `depth` by the fused
    score (or the one side's own), the ties of the last place too, then ordered by `best_first`."""
    if lists.fused is not None:
        ranked = sorted(lists.fused.items(), key=lambda item: -item[1])
    else:
        ranked = list(lists.keyword if lists.keyword is not None else lists.dense or [])
    limit = lists.depth
    cut = min(len(ranked), limit)
    while cut < len(ranked) and limit and ranked[cut][1] == ranked[limit - 1][1]:
        cut += 1
    payloads = live.store.payloads([point_id for point_id, _ in ranked[:cut]])
    points = [
        ScoredPoint(id=str(point_id), score=score, payload=payloads[point_id])
        for point_id, score in ranked[:cut]
        if point_id in payloads
    ]
    return sorted(points, key=best_first)[:limit]


def place(points: list[ScoredPoint], point_id: str) -> int | None:
    """1-based place of a chunk in a stage's list (None: not in it)."""
    return next((i + 1 for i, point in enumerate(points) if point.id == point_id), None)


def passed(before: list[ScoredPoint], after: list[ScoredPoint], point_id: str) -> list[ScoredPoint]:
    """The chunks above `point_id` in `after` that were not above it in `before` (all above it, when it was
    not in `before`)."""
    at = place(before, point_id)
    above = {point.id for point in before[: at - 1]} if at is not None else set()
    mine = place(after, point_id)
    return [point for point in after[: (mine or len(after) + 1) - 1] if point.id not in above]
