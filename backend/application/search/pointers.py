"""Pointers lead to what they point at: a list of note links (a map of content, a home note, a "see also" or
reading list) among a search's best candidates, whose line describes a note in the question's words, gives
its place to that note's best chunk and follows it. The list matches a question in the words of its
description, but the note it describes holds the answer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from backend.application.search.question import Question
from backend.application.search.stage_clock import RANKING, STORE_POINTER_TARGETS, StageClock
from backend.application.serving.live_index import LiveIndex
from backend.domain.models import PointFilter, ScoredPoint, SparseVector
from backend.domain.ranking.result_rules import (
    POINTER_MIN_TERMS,
    best_pointer_line,
    is_pointer,
    targets_before_pointers,
)
from backend.domain.text.text_analysis import TextAnalyzer

POINTER_SCAN = 10  # the best candidates read for pointers whose line the question picks out
TARGET_SCAN = 64  # chunks read to find the best chunk of each pointed-to note that is not a candidate


@dataclass(frozen=True, slots=True)
class TargetAsk:
    """The search's own vectors, filter and fusion: what the scoped query for the targets asks with."""

    dense: Sequence[float] | None
    sparse: SparseVector | None
    point_filter: PointFilter | None
    rrf_k: int
    rrf_weights: tuple[float, float]


def follow_pointers(
    live: LiveIndex,
    points: list[ScoredPoint],
    *,
    question: Question,
    analyzer: TextAnalyzer,
    target_ask: TargetAsk,
    clock: StageClock | None = None,
) -> list[ScoredPoint]:
    """Each pointer among the best `POINTER_SCAN` candidates (`is_pointer`) whose line the question picks
    out (`best_pointer_line`) and whose link leads to an indexed note gives its place to that note's best
    chunk, the pointer right after it. The target chunk is a candidate already, or found by one store query
    scoped to the targets that are not (only when a pointer is followed at all). `points`: best first."""
    wanted = question.wanted
    if len(wanted) < POINTER_MIN_TERMS:
        return points
    languages = question.languages
    pointers: list[tuple[ScoredPoint, str]] = []
    for hit in points[:POINTER_SCAN]:
        text, source = str(hit.payload.get("content", "")), _path_of(hit)
        line = best_pointer_line(text, wanted, analyzer, languages) if is_pointer(text) else None
        target = live.graph.resolve_note(line.target, source=source) if line is not None else None
        if target is not None and target != source:
            pointers.append((hit, target))
    if not pointers:
        return points
    best: dict[str, ScoredPoint] = {}
    for hit in points:
        best.setdefault(_path_of(hit), hit)
    missing = sorted({target for _, target in pointers} - best.keys())
    ask = target_ask
    if missing and (ask.dense is not None or ask.sparse is not None):
        if clock is not None:
            clock.lap(RANKING)
        scoped = replace(ask.point_filter or PointFilter(), note_paths=tuple(missing))
        for hit in live.store.query(
            dense=ask.dense,
            sparse=ask.sparse,
            limit=TARGET_SCAN,
            prefetch_limit=TARGET_SCAN,
            point_filter=scoped,
            rrf_k=ask.rrf_k,
            rrf_weights=ask.rrf_weights,
        ):
            best.setdefault(_path_of(hit), hit)
        if clock is not None:
            clock.lap(STORE_POINTER_TARGETS)
    followed = [(hit, best[target]) for hit, target in pointers if target in best]
    return targets_before_pointers(points, followed, same=_same_chunk, lead=_led_by)


def _path_of(hit: ScoredPoint) -> str:
    return str(hit.payload.get("note_path", ""))


def _same_chunk(a: ScoredPoint, b: ScoredPoint) -> bool:
    return a.id == b.id


def _led_by(target: ScoredPoint, pointer: ScoredPoint) -> ScoredPoint:
    """The target in its pointer's place: the pointer's score (so the list stays best first), and the
    pointer it came by (its confidence counts the pointer's evidence, and recall need not quote both)."""
    return replace(target, score=pointer.score, via=pointer)
