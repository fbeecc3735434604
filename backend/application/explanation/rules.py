"""Why each hit ranks where it does, and why a note someone expected is not among the results: the explain
data of /search (and the look-inside page's why-panel).

Computed only when asked, after the search, from what it read: both sides' own ranked lists for the question
(`SideLists`: the search keeps them with its answer, ids and scores best first), the fusion redone over them
by the same domain rule, each hit placed in them, and the hits' stored keyword terms (one store read); "why
not this note?" (why_not.py) adds one read of that note's chunks on each side and the ranking replayed over
the candidates (ranking_replay.py). A search without `explain` costs nothing of this. The rules are named in
sentences a person reads; the numbers are the ones the ranking used, and a hit's score can be rebuilt from
them: each side's value as fused, the weights, the period's factor, and the rules that set it otherwise."""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from backend.application.search.hit_confidence import _terms_of as terms_of
from backend.application.search.ranking import (
    REPLACED_FACTOR,
    SAVED_FACTOR,
    origin_of,
    ruled,
    time_factor,
)
from backend.application.serving.live_index import LiveIndex
from backend.domain.index.payload import PERIODS, REPLACED
from backend.domain.models import PointFilter, ScoredPoint, SearchMode
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.ranking.confidence import KEYWORD_ONLY, Calibration, Evidence, features
from backend.domain.ranking.result_rules import is_hub
from backend.domain.text.sparse import SparseEncoder, term_index

_WORD = re.compile(r"\w+")
# the names of the confidence's features, in the order `confidence.features` gives them
DENSE_FEATURES = ("dense similarity", "lead over the background", "keyword score / max IDF", "coverage")
KEYWORD_FEATURES = ("keyword score / max IDF", "coverage", "of the period asked")


@dataclass(frozen=True, slots=True)
class SidePlace:
    """Where one side put a chunk: its own score and its rank among that side's candidates (None: beyond
    them, and then the score is the most it can have, the last candidate's, or unknown)."""

    score: float | None
    rank: int | None


@dataclass(frozen=True, slots=True)
class SideLists:
    """Both sides' ranked candidates for the question (ids as strings, best first), and the fusion of them
    the search made (None in keyword or dense mode) with its weights: for adaptive and score fusion the
    ones it summed with (a side that found nothing left out, the other's weight then 1), so that `fused` is
    weights[0] x normalised[0] + weights[1] x normalised[1], each side's value 0 where it lacks the chunk."""

    dense: list[tuple[str, float]] | None
    keyword: list[tuple[str, float]] | None
    fused: dict[str, float] | None
    weights: tuple[float, float] | None
    depth: int  # how many candidates each side keeps
    # each side's scores as the fusion combined them (adaptive, score: 0..1; dbsf: 0..1, summed unweighted);
    # None for rrf (it combines ranks, not scores) and one side only
    normalised: tuple[dict[str, float], dict[str, float]] | None = None

    def value(self, side: int, point_id: str) -> float | None:
        """One side's value of a chunk as the fusion combined it (0: not among that side's candidates; None:
        the fusion never saw it, a named note's or a pointer's target found by a query of its own)."""
        if self.normalised is None or (self.dense, self.keyword)[side] is None:
            return None
        if self.fused is None or point_id not in self.fused:
            return None
        return round(self.normalised[side].get(point_id, 0.0), 4)

    def place(self, side: list[tuple[str, float]] | None, point_id: str) -> SidePlace | None:
        if side is None:
            return None
        for position, (candidate, score) in enumerate(side):
            if candidate == point_id:
                return SidePlace(score, position + 1)
        return SidePlace(None, None)

    def fused_order(self) -> list[str]:
        if self.fused is not None:
            return [key for key, _ in sorted(self.fused.items(), key=lambda item: -item[1])]
        side = self.keyword if self.keyword is not None else self.dense
        return [key for key, _ in side or []]


@dataclass(frozen=True, slots=True)
class HitWhy:
    chunk_id: str
    dense: SidePlace | None  # None: the search had no dense side
    keyword: SidePlace | None  # None: the search had no keyword side
    words: list[str]  # the question's words the chunk holds, by the keyword side's rules
    fused_score: float | None  # after fusion, before the ranking rules (None: one side only)
    time_factor: float | None  # what the period the question names multiplied its score by
    rules: list[str]
    features: dict[str, float]  # what its confidence was computed from
    dense_normalised: float | None = None  # its dense value as the fusion combined it (`SideLists.value`)
    keyword_normalised: float | None = None
    time_reason: str | None = None  # why `time_factor` is what it is, in `search.ranking.time_factor`'s words


@dataclass(frozen=True, slots=True)
class WhyNot:
    """Where the note asked about landed, by one chunk of it throughout (its best: `why_not.py`)."""

    asked: str
    note_path: str | None  # None: no indexed note answers to what was asked
    title: str | None
    dense: SidePlace | None
    keyword: SidePlace | None
    words: list[str]
    fused_rank: int | None
    final_rank: int | None  # its place among the results shown
    reason: str
    rules: list[str] = field(default_factory=list)  # each ranking rule that moved that chunk, in words
    closest: list[str] = field(default_factory=list)  # no note answers: the paths of the closest names
    lines: tuple[int, int] | None = None  # the chunk followed: its first and last line
    ranked: int | None = None  # its place after every ranking rule, before the answer is cut (None: dropped)
    time_factor: float | None = None
    time_reason: str | None = None


@dataclass(frozen=True, slots=True)
class Period:
    """The period the question names, and what `time_factor` makes of it: the factor of a chunk wholly of
    it and of one that says it is of another time."""

    text: str
    start: dt.date
    end: dt.date
    factor: float
    other_time_factor: float


@dataclass(frozen=True, slots=True)
class SearchExplanation:
    fusion: str | None  # None: one side only (keyword or dense mode)
    weights: tuple[float, float] | None  # (dense, keyword) as fused for this question
    cross_language: bool
    time_boost: float | None  # TIME_BOOST, when the question names a period (None: it names none)
    candidates: tuple[int, int]  # dense, keyword
    hits: list[HitWhy] = field(default_factory=list)
    why_not: WhyNot | None = None
    period: Period | None = None


@dataclass(frozen=True, slots=True)
class ExplainInput:
    """What the search knew, besides the sides: its hits and their evidence, the mode, the period asked and
    its boost, the notes the question names, the chunk cap, the calibration of the confidences."""

    query: str
    hits: Sequence[ScoredPoint]
    evidence: Sequence[Evidence]
    mode: SearchMode
    span: TimeSpan | None
    time_boost: float
    named_paths: Sequence[str]
    per_note: int | None
    calibration: Calibration  # the serving model's, for hits with a dense side (RecallGate)
    chunks: int
    fusion: str
    cross_language: bool
    threshold: float | None = None
    saved: Collection[str] | None = (
        None  # the clippers' folders the ranking lowered saved notes by, if it did
    )


def explain_hits(
    given: ExplainInput, sides: SideLists, encoder: SparseEncoder, stored: Mapping[str, frozenset[int]]
) -> SearchExplanation:
    """Each hit's why, in the order of the hits (`stored`: the keyword terms each was indexed with; a hit
    missing there is encoded again from its payload)."""
    words = question_words(given.query, encoder)
    pointers = {hit.via.id for hit in given.hits if hit.via is not None}
    crowd = Counter(str(hit.payload.get("note_path", "")) for hit in given.hits)  # each note's hits
    named = set(given.named_paths)
    hits: list[HitWhy] = []
    for position, (hit, shown) in enumerate(zip(given.hits, given.evidence, strict=True)):
        held = stored.get(hit.id) or terms_of(hit.payload, encoder)
        factor, why = hit_time_factor(hit.payload, given.span, given.time_boost)
        fused = round(sides.fused[hit.id], 4) if sides.fused and hit.id in sides.fused else None
        rules = _rules(hit, position, given, named=named, pointers=pointers, crowd=crowd, time=(factor, why))
        rules += _score_rules(hit, position, given, base=_base_score(hit.id, sides), named=named)
        hits.append(
            HitWhy(
                chunk_id=hit.id,
                dense=sides.place(sides.dense, hit.id),
                keyword=sides.place(sides.keyword, hit.id),
                words=[word for word, terms in words if terms & held],
                fused_score=fused,
                time_factor=factor,
                rules=rules,
                features=_features(shown, given),
                dense_normalised=sides.value(0, hit.id),
                keyword_normalised=sides.value(1, hit.id),
                time_reason=why,
            )
        )
    return SearchExplanation(
        fusion=given.fusion if given.mode is SearchMode.HYBRID else None,
        weights=sides.weights,
        cross_language=given.cross_language,
        time_boost=given.time_boost if given.span is not None else None,
        candidates=(len(sides.dense or ()), len(sides.keyword or ())),
        hits=hits,
        period=period_of(given.span, given.time_boost),
    )


def period_of(span: TimeSpan | None, boost: float) -> Period | None:
    """The period asked, with the factors `time_factor` gives a note wholly of it and one of other times
    (asked of it, never worked out here: that rule is being tuned, and the data must say what it does)."""
    if span is None or not boost:
        return None
    whole = time_factor({PERIODS: [f"{span.start.isoformat()}/{span.end.isoformat()}"]}, span, boost)[0]
    other = time_factor({PERIODS: [(span.start - dt.timedelta(days=1)).isoformat()]}, span, boost)[0]
    return Period(span.text, span.start, span.end, round(whole, 4), round(other, 4))


def _base_score(point_id: str, sides: SideLists) -> float | None:
    """Its score before the ranking rules: the fused one, or in one side's mode that side's own."""
    if sides.fused is not None:
        return sides.fused.get(point_id)
    side = dict(sides.keyword if sides.keyword is not None else sides.dense or [])
    return side.get(point_id)


def stored_of(live: LiveIndex, point_id: str, encoder: SparseEncoder) -> frozenset[int] | set[int]:
    """The keyword terms a chunk was indexed with (its text encoded again if the store has none for it)."""
    stored = live.store.keyword_terms([point_id]).get(point_id)
    if stored is not None:
        return stored
    return terms_of(live.store.payloads([point_id]).get(point_id, {}), encoder)


def question_words(query: str, encoder: SparseEncoder) -> list[tuple[str, set[int]]]:
    """Each distinct word of the question with the keyword terms it becomes (none for a stop word)."""
    seen: dict[str, set[int]] = {}
    for word in _WORD.findall(query):
        key = word.casefold()
        if key not in seen:
            seen[key] = {term_index(term) for term in encoder.analyzer.query_terms(word)}
    return [(word, terms) for word, terms in seen.items() if terms]


def hit_time_factor(
    payload: dict[str, Any], span: TimeSpan | None, boost: float
) -> tuple[float | None, str | None]:
    """What `search.ranking.time_factor` multiplied a chunk's score by, and why (None: no period asked)."""
    if span is None or not boost:
        return None, None
    factor, why = time_factor(payload, span, boost)
    return round(factor, 4), why


def _rules(
    hit: ScoredPoint,
    position: int,
    given: ExplainInput,
    *,
    named: set[str],
    pointers: set[str],
    crowd: dict[str, int],
    time: tuple[float | None, str | None],
) -> list[str]:
    path = str(hit.payload.get("note_path", ""))
    rules: list[str] = []
    if path in named and position < len(given.named_paths):
        rules.append("The question names this note (its title, an alias or its file name): put first.")
    if hit.via is not None:
        v = hit.via.payload
        rules.append(
            f"Brought here by a line of {v.get('note_path')}:{v.get('start_line')}-{v.get('end_line')}, a "
            "list of links whose line describes this note in the question's words."
        )
    if hit.id in pointers:
        rules.append("A list of links: placed right after the note its line points to.")
    factor, why = time
    if factor is not None and why is not None and given.span is not None and factor != 1.0:
        rules.append(period_rule(given.span, factor, why))
    if hit.payload.get(REPLACED):
        rules.append(
            "Its note says another note replaced it (status: superseded or the like): score "
            f"×{REPLACED_FACTOR:.2f}, and the recall never quotes it."
        )
    origin = origin_of(hit.payload, given.saved) if given.saved is not None else None
    if origin is not None:
        rules.append(
            f"Saved from elsewhere ({origin}), and the question asks about nothing read or saved: score "
            f"×{SAVED_FACTOR:.2f}; the recall quotes it only when none of the person's own notes answers."
        )
    if given.per_note and crowd.get(path, 0) >= given.per_note:
        rules.append(f"Its note fills the {given.per_note} places one note may have among the results.")
    return rules


def period_rule(span: TimeSpan, factor: float, why: str) -> str:
    """The period rule as it moved one chunk, in `time_factor`'s own words."""
    return f"{why[:1].upper()}{why[1:]} ({span.text}): score ×{factor:.2f}."


def _score_rules(
    hit: ScoredPoint, position: int, given: ExplainInput, *, base: float | None, named: set[str]
) -> list[str]:
    """What set its score other than fusion and the period: put first as named, a pointer's score taken, a
    map of content rescored below the result it follows. Read off the scores, so every change is named."""
    score, text = hit.score, str(hit.payload.get("content", ""))
    put_first = str(hit.payload.get("note_path", "")) in named and position < len(given.named_paths)
    boost = (given.span, given.time_boost) if given.span is not None and given.time_boost else None
    expected = ruled(replace(hit, score=base), boost, given.saved).score if base is not None else None
    if expected is not None and abs(score - expected) <= 1e-4 * max(1.0, abs(expected)):
        return []
    was = f" (fusion and the period gave {expected:.4f})" if expected is not None else ""
    if put_first:
        return [f"Its score is set to {score:.4f}, the best of the rest, so it stays first{was}."]
    if hit.via is not None:
        return [f"It takes the score of the list of links that brought it, {score:.4f}{was}."]
    if is_hub(text) and expected is not None and score < expected:
        return [
            f"A map of content (mostly links): placed after the notes it links to, its score lowered to "
            f"{score:.4f}, the score of the result it now follows{was}."
        ]
    if expected is None:
        return []
    return [f"The ranking rules set its score to {score:.4f}{was}."]


def _features(shown: Evidence, given: ExplainInput) -> dict[str, float]:
    calibration = given.calibration if shown.dense is not None else KEYWORD_ONLY
    names = (*DENSE_FEATURES, "of the period asked") if calibration.uses_dense else KEYWORD_FEATURES
    values = features(shown, given.chunks, calibration)
    return {name: round(value, 4) for name, value in zip(names, values, strict=True)}


def note_filter(path: str, point_filter: PointFilter | None) -> PointFilter:
    """The search's filter narrowed to one note."""
    return replace(point_filter or PointFilter(), note_paths=(path,))
