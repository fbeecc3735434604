"""Why each hit ranks where it does, and why a note someone expected is not among the results: the explain
data of /search (and the look-inside page's why-panel).

Computed only when asked, after the search, from what it read: both sides' own ranked lists for the question
(`SideLists`: the search keeps them with its answer, ids and scores best first), the fusion redone over them
by the same domain rule, each hit placed in them, and the hits' stored keyword terms (one store read); "why
not this note?" adds one read of that note's chunks on each side. A search without `explain` costs nothing
of this. The rules are named in sentences a person reads; the numbers are the ones the ranking used.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from backend.application.hit_confidence import _terms_of as terms_of
from backend.application.live_index import LiveIndex
from backend.application.search_ranking import time_factor
from backend.domain.confidence import Evidence, calibration_for, features
from backend.domain.models import PointFilter, ScoredPoint, SearchMode
from backend.domain.result_rules import is_hub, is_pointer
from backend.domain.sparse import SparseEncoder, term_index
from backend.domain.time_intent import TimeSpan

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
    the search made (None in keyword or dense mode) with its weights."""

    dense: list[tuple[str, float]] | None
    keyword: list[tuple[str, float]] | None
    fused: dict[str, float] | None
    weights: tuple[float, float] | None
    depth: int  # how many candidates each side keeps

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


@dataclass(frozen=True, slots=True)
class WhyNot:
    asked: str
    note_path: str | None  # None: no indexed note answers to what was asked
    title: str | None
    dense: SidePlace | None
    keyword: SidePlace | None
    words: list[str]
    fused_rank: int | None
    final_rank: int | None
    reason: str


@dataclass(frozen=True, slots=True)
class SearchExplanation:
    fusion: str | None  # None: one side only (keyword or dense mode)
    weights: tuple[float, float] | None  # (dense, keyword) as fused for this question
    cross_language: bool
    time_boost: float | None  # the boost of the period the question names (None: it names none)
    candidates: tuple[int, int]  # dense, keyword
    hits: list[HitWhy] = field(default_factory=list)
    why_not: WhyNot | None = None


@dataclass(frozen=True, slots=True)
class ExplainInput:
    """What the search knew, besides the sides: its hits and their evidence, the mode, the period asked and
    its boost, the notes the question names, the chunk cap, the model whose cosines the dense scores are."""

    query: str
    hits: Sequence[ScoredPoint]
    evidence: Sequence[Evidence]
    mode: SearchMode
    span: TimeSpan | None
    time_boost: float
    named_paths: Sequence[str]
    per_note: int | None
    model: str | None
    chunks: int
    fusion: str
    cross_language: bool


def explain_hits(
    given: ExplainInput, sides: SideLists, encoder: SparseEncoder, stored: Mapping[str, frozenset[int]]
) -> SearchExplanation:
    """Each hit's why, in the order of the hits (`stored`: the keyword terms each was indexed with; a hit
    missing there is encoded again from its payload)."""
    words = _question_words(given.query, encoder)
    pointers = {hit.via.id for hit in given.hits if hit.via is not None}
    crowd = Counter(str(hit.payload.get("note_path", "")) for hit in given.hits)  # each note's hits
    named = set(given.named_paths)
    hits: list[HitWhy] = []
    for position, (hit, shown) in enumerate(zip(given.hits, given.evidence, strict=True)):
        held = stored.get(hit.id) or terms_of(hit.payload, encoder)
        factor = _time_factor(hit, given.span, given.time_boost)
        rules = _rules(hit, position, given, named=named, pointers=pointers, crowd=crowd, factor=factor)
        hits.append(
            HitWhy(
                chunk_id=hit.id,
                dense=sides.place(sides.dense, hit.id),
                keyword=sides.place(sides.keyword, hit.id),
                words=[word for word, terms in words if terms & held],
                fused_score=round(sides.fused[hit.id], 4) if sides.fused and hit.id in sides.fused else None,
                time_factor=factor,
                rules=rules,
                features=_features(shown, given),
            )
        )
    return SearchExplanation(
        fusion=given.fusion if given.mode is SearchMode.HYBRID else None,
        weights=sides.weights,
        cross_language=given.cross_language,
        time_boost=given.time_boost if given.span is not None else None,
        candidates=(len(sides.dense or ()), len(sides.keyword or ())),
        hits=hits,
    )


NoteSides = Callable[[str], tuple[SidePlace | None, SidePlace | None, str | None, bool]]


def why_not(
    asked: str,
    *,
    live: LiveIndex,
    given: ExplainInput,
    sides: SideLists,
    encoder: SparseEncoder,
    note_sides: NoteSides,
    resolve: Callable[[str], str | None],
) -> WhyNot:
    """Where each side put the note `asked` names (its best chunk) and why it is not higher in the results.
    `note_sides(path)`: its best chunk's dense and keyword places over the whole index, that chunk's id, and
    whether the search's filters let the note in; `resolve`: the indexed note a path or name means."""
    path = resolve(asked)
    if path is None:
        return WhyNot(asked, None, None, None, None, [], None, None, _NOT_INDEXED)
    record = live.graph.record(path)
    title = record.title if record is not None else None
    dense, keyword, best, admitted = note_sides(path)
    shown = [str(hit.payload.get("note_path", "")) for hit in given.hits]
    final = shown.index(path) + 1 if path in shown else None
    held = _stored_of(live, best, encoder) if best is not None else set()
    words = [word for word, terms in _question_words(given.query, encoder) if terms & held]
    order = sides.fused_order()
    fused = order.index(best) + 1 if best is not None and best in order else None
    if not admitted:
        reason = "The search's filters (folders, tags, dates or paths) leave this note out."
    elif best is None:
        reason = "The note has no chunk in the index (empty, or only frontmatter)."
    else:
        reason = _reason(given, sides, dense=dense, keyword=keyword, words=words, fused=fused, final=final)
        if record is not None and not record.dense_ready and given.mode is not SearchMode.KEYWORD:
            reason += " It has no dense vectors yet (the embedder is catching up): found by keyword only."
    return WhyNot(asked, path, title, dense, keyword, words, fused, final, reason)


_NOT_INDEXED = "No indexed note answers to this path or name (GET /notes lists them)."


def _reason(
    given: ExplainInput,
    sides: SideLists,
    *,
    dense: SidePlace | None,
    keyword: SidePlace | None,
    words: list[str],
    fused: int | None,
    final: int | None,
) -> str:
    """One paragraph: where it landed, then what held it back, side by side."""
    if final is not None:
        return f"It is result {final}."
    parts: list[str] = []
    if fused is not None:
        ranked = "Fused, its" if sides.fused is not None else "Its"
        parts.append(
            f"{ranked} best chunk ranks {fused}: below the {len(given.hits)} results shown; the ranking "
            "rules (one chunk per overlap, hubs after their notes, at most "
            f"{given.per_note or 'any number of'} chunks a note) keep that order."
        )
    else:
        parts.append(f"Neither side keeps its best chunk among its first {sides.depth} candidates.")
    if dense is not None:
        if dense.rank is not None:
            parts.append(f"By meaning it ranks {dense.rank} (cosine {dense.score:.3f}).")
        else:
            last = sides.dense[-1][1] if sides.dense else None
            below = f" (the {sides.depth}th candidate's is {last:.3f})" if last is not None else ""
            cosine = f"; its cosine is {dense.score:.3f}" if dense.score is not None else ""
            parts.append(f"By meaning it is beyond the first {sides.depth}{cosine}{below}.")
    if keyword is not None:
        held = f"it holds {', '.join(words)}" if words else "on common words of the question only"
        if keyword.rank is not None:
            parts.append(f"By keyword it ranks {keyword.rank} (BM25 {keyword.score:.2f}; {held}).")
        elif not words:
            parts.append("None of the question's words are in it (keyword side).")
        else:
            parts.append(f"By keyword {held}, but it is beyond the first {sides.depth}.")
    if sides.weights is not None:
        parts.append(f"This question weighs dense {sides.weights[0]:.2f}, keyword {sides.weights[1]:.2f}.")
    return " ".join(parts)


def _stored_of(live: LiveIndex, point_id: str, encoder: SparseEncoder) -> frozenset[int] | set[int]:
    """The keyword terms a chunk was indexed with (its text encoded again if the store has none for it)."""
    stored = live.store.keyword_terms([point_id]).get(point_id)
    if stored is not None:
        return stored
    return terms_of(live.store.payloads([point_id]).get(point_id, {}), encoder)


def _question_words(query: str, encoder: SparseEncoder) -> list[tuple[str, set[int]]]:
    """Each distinct word of the question with the keyword terms it becomes (none for a stop word)."""
    seen: dict[str, set[int]] = {}
    for word in _WORD.findall(query):
        key = word.casefold()
        if key not in seen:
            seen[key] = {term_index(term) for term in encoder.analyzer.query_terms(word)}
    return [(word, terms) for word, terms in seen.items() if terms]


def _time_factor(hit: ScoredPoint, span: TimeSpan | None, boost: float) -> float | None:
    """The multiplier `search_ranking.boosted` applied (a negative score aside: there it adds its size)."""
    if span is None or not boost:
        return None
    return round(time_factor(hit.payload, span, boost)[0], 4)


def _rules(
    hit: ScoredPoint,
    position: int,
    given: ExplainInput,
    *,
    named: set[str],
    pointers: set[str],
    crowd: dict[str, int],
    factor: float | None,
) -> list[str]:
    p = hit.payload
    path, text = str(p.get("note_path", "")), str(p.get("content", ""))
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
    elif is_hub(text) and not is_pointer(text):
        rules.append("A map of content (mostly links): never placed above the notes it links to.")
    if factor is not None and given.span is not None and factor != 1.0:
        if factor > 1.0:
            rules.append(f"Of the period asked ({given.span.text}): score ×{factor:.2f}.")
        else:
            rules.append(f"Dated at another time than {given.span.text}: score ×{factor:.2f}.")
    if given.per_note and crowd.get(path, 0) >= given.per_note:
        rules.append(f"Its note fills the {given.per_note} places one note may have among the results.")
    return rules


def _features(shown: Evidence, given: ExplainInput) -> dict[str, float]:
    calibration = calibration_for(given.model, dense=shown.dense is not None)
    names = (*DENSE_FEATURES, "of the period asked") if calibration.uses_dense else KEYWORD_FEATURES
    values = features(shown, given.chunks, calibration)
    return {name: round(value, 4) for name, value in zip(names, values, strict=True)}


def best_of_note(
    dense: list[tuple[str, float]] | None, keyword: list[tuple[str, float]] | None
) -> tuple[str | None, float | None, float | None]:
    """The note's best chunk (by the keyword side when it matched, else by meaning) and its two scores."""
    best = (keyword or dense or [(None, 0.0)])[0][0]
    if best is None:
        return None, None, None
    dense_score = dict(dense or {}).get(best)
    keyword_score = dict(keyword or {}).get(best)
    return best, dense_score, keyword_score


def rank_among(side: list[tuple[str, float]] | None, score: float | None, depth: int) -> SidePlace | None:
    """Where a score would rank among a side's candidates (None beyond a full list)."""
    if side is None:
        return None
    if score is None:
        return SidePlace(None, None)
    above = sum(1 for _, other in side if other > score)
    if above >= depth:
        return SidePlace(score, None)
    return SidePlace(score, above + 1)


def note_filter(path: str, point_filter: PointFilter | None) -> PointFilter:
    """The search's filter narrowed to one note."""
    return replace(point_filter or PointFilter(), note_paths=(path,))
