"""Each hit's confidence (backend/domain/ranking/confidence.py), from what the search already holds: the two
sides' raw scores where the fusion read them, else one store call for them, and the hit's own keyword
terms."""

from __future__ import annotations

import time
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from backend.application.search.ranking import note_periods
from backend.application.serving.live_index import LiveIndex
from backend.domain.index.index_texts import file_stem
from backend.domain.index.payload import LANGUAGE
from backend.domain.models import PointFilter, ScoredPoint, SparseVector
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.ranking.confidence import Calibration, Evidence
from backend.domain.text.languages import KNOWN_LANGUAGES
from backend.domain.text.sparse import DocumentFields, SparseEncoder, term_index
from backend.domain.text.text_analysis import TextAnalyzer

COUNT_TTL_SECONDS = 30.0  # the chunk count only scales the keyword score: a recent one is as good
# The rank whose score is a question's background: how close the vault's ordinary chunks come to it. Far
# enough down that one or two notes matching strongly (a near-duplicate, a hostile note) move it one rank.
BACKGROUND_RANK = 20


@dataclass(frozen=True, slots=True)
class SideScores:
    """One side's raw scores by point id, best first as the store gave them. A point not in a full list
    scored at most its last score; one missing from a shorter list did not match at all."""

    scores: Mapping[str, float]
    floor: float  # what a point beyond the list is taken to score
    background: float = 0.0  # the score at BACKGROUND_RANK (the last one of a shorter list)

    @classmethod
    def of(cls, ranked: Sequence[tuple[Hashable, float]], limit: int) -> SideScores:
        scores = {str(point_id): float(score) for point_id, score in ranked}
        floor = float(ranked[-1][1]) if len(ranked) >= limit and ranked else 0.0
        background = float(ranked[min(BACKGROUND_RANK, len(ranked)) - 1][1]) if ranked else 0.0
        return cls(scores, floor, background)

    @classmethod
    def of_points(cls, points: Sequence[ScoredPoint], limit: int) -> SideScores:
        return cls.of([(point.id, point.score) for point in points], limit)

    def score(self, point_id: str) -> float:
        return self.scores.get(point_id, self.floor)


@dataclass(frozen=True, slots=True)
class Sides:
    dense: SideScores | None
    keyword: SideScores | None


class ChunkCounter:
    """The index's chunk count, read from the store at most every COUNT_TTL_SECONDS per store."""

    def __init__(self) -> None:
        self._seen: tuple[int, float, int] | None = None  # (id of the store, when, count)

    def count(self, live: LiveIndex) -> int:
        now = time.monotonic()
        seen = self._seen
        if seen is not None and seen[0] == id(live.store) and now - seen[1] < COUNT_TTL_SECONDS:
            return seen[2]
        count = live.store.count()
        self._seen = (id(live.store), now, count)
        return count


def read_sides(
    live: LiveIndex,
    dense: Sequence[float] | None,
    sparse: SparseVector,
    limit: int,
    point_filter: PointFilter | None,
) -> Sides:
    """Both sides' raw scores in one store call (keyword only without a dense vector)."""
    if dense is not None:
        dense_side, keyword_side = live.store.rank_sides(
            dense=dense, sparse=sparse, limit=limit, point_filter=point_filter
        )
        return Sides(SideScores.of(dense_side, limit), SideScores.of(keyword_side, limit))
    if sparse.is_empty:
        return Sides(None, None)
    points = live.store.query(
        dense=None, sparse=sparse, limit=limit, prefetch_limit=limit, point_filter=point_filter
    )
    return Sides(None, SideScores.of_points(points, limit))


def evidence_of(
    hits: Sequence[ScoredPoint],
    *,
    sides: Sides,
    query: SparseVector,
    encoder: SparseEncoder,
    stored: StoredTerms | None = None,
    tags: Mapping[int, frozenset[int]] | None = None,
    span: TimeSpan | None = None,
) -> list[Evidence]:
    """What each hit shows about itself, in the order of `hits` (`query`: the terms it is judged by;
    `stored`: the keyword terms the index holds for the hits (`hit_terms`); a hit missing there, or whose
    stored terms cannot tell a judged term from a stop word, is encoded again from its payload; `tags`: the
    tag terms of the vault the question names, each with the question's terms it stands for: a hit tagged
    #mentalhealth holds "mental health"; `span`: the period the question names: a hit's share of it counts
    only where the hit speaks to the question apart from it, `speaks_apart`).

    A hit a pointer led to (`via`: a map-of-content line describing its note) shows what its pointer shows
    too, feature by feature the larger: the line that vouches for the note is evidence about the note."""
    terms = set(query.indices)
    asked = frozenset(terms).union(tags or ())  # what the coverage reads of a hit's terms
    # the question's terms besides the words naming its period ("last March"): what a chunk of the period
    # must also speak to for its period to count
    other = (
        terms - set(encoder.encode_query(span.text).indices) - _filler(encoder) if span is not None else terms
    )
    known: dict[str, Evidence] = {}  # a pointer is often a hit too, right after its target: read it once

    def shown(hit: ScoredPoint) -> Evidence:
        if hit.id not in known:
            held = _held(_own_terms(hit, stored, asked, encoder), tags) if terms else set()
            dense = sides.dense.score(hit.id) if sides.dense is not None else None
            background = sides.dense.background if sides.dense is not None else None
            share = span.share_of(note_periods(hit.payload)) if span is not None else 0.0
            known[hit.id] = Evidence(
                dense=dense,
                dense_background=background,
                keyword=sides.keyword.score(hit.id) if sides.keyword is not None else 0.0,
                covered=len(terms & held),
                query_terms=len(terms),
                of_period=share if share and speaks_apart(dense, background, other, held) else 0.0,
            )
        return known[hit.id]

    return [_vouched(shown(hit), shown(hit.via)) if hit.via is not None else shown(hit) for hit in hits]


# words that name no topic: "school stuff from september", "bee things last summer" ask about school and bees
FILLER_WORDS = "stuff things thing bits anything something everything"


def _filler(encoder: SparseEncoder) -> set[int]:
    return set(encoder.encode_query(FILLER_WORDS).indices)


def speaks_apart(
    dense: float | None, background: float | None, other: set[int], held: frozenset[int] | set[int]
) -> bool:
    """Whether a chunk speaks to the question apart from being of the period it names: by meaning, it is
    closer to the question than the question's background (its 20th closest chunk); by its words, it holds
    more than half of the question's terms besides the period's. A question that is its period alone ("what
    happened last March?") is answered by any chunk of it. A journal day of the month asked about that
    tells of a dinner is of the period, but not an answer, and its period must not make it look like one."""
    if dense is not None and background is not None and dense > background:
        return True
    return not other or 2 * len(other & held) > len(other)


def _vouched(own: Evidence, pointer: Evidence) -> Evidence:
    dense = own.dense if own.dense is None or pointer.dense is None else max(own.dense, pointer.dense)
    return Evidence(
        dense=dense,
        dense_background=own.dense_background,
        keyword=max(own.keyword, pointer.keyword),
        covered=max(own.covered, pointer.covered),
        query_terms=own.query_terms,
        of_period=own.of_period,
    )


def with_confidence(
    hits: Sequence[ScoredPoint], evidence: Sequence[Evidence], calibration: Calibration, *, chunks: int
) -> list[ScoredPoint]:
    """The hits, each with its confidence by `calibration` (RecallGate's for the model and sides)."""
    return [
        replace(hit, confidence=round(calibration.probability(shown, chunks), 4))
        for hit, shown in zip(hits, evidence, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class StoredTerms:
    """The keyword terms the index holds for some hits, by id, and the terms a stop word can be stored as.

    The stored vector is the content-only encoding's terms plus the chunk's stop words (indexed at a low
    weight): the same coverage for a judged question, unless one of its terms is also a stop word's term
    ("others" and the stop word "other" stem alike). Only then is the hit's text encoded again."""

    by_id: Mapping[str, frozenset[int]]
    stops: frozenset[int]  # `stop_term_indices`


def stop_term_indices(analyzer: TextAnalyzer) -> frozenset[int]:
    """Every term a stop word can be indexed as, in any language (the unstemmed words included)."""
    return frozenset(term_index(term) for lang in KNOWN_LANGUAGES for term in analyzer.stop_terms(lang))


def hit_terms(live: LiveIndex, hits: Sequence[ScoredPoint], stops: frozenset[int]) -> StoredTerms:
    """The keyword terms each hit (and the pointer that led to it) was indexed with, in one store read:
    encoding each hit's text again cost a Zettelkasten search ~1-2.5 ms."""
    vias = [hit.via.id for hit in hits if hit.via is not None]
    ids = list(dict.fromkeys([*(hit.id for hit in hits), *vias]))
    by_id = {str(point_id): terms for point_id, terms in live.store.keyword_terms(ids).items()}
    return StoredTerms(by_id, stops)


def _own_terms(
    hit: ScoredPoint, stored: StoredTerms | None, asked: frozenset[int], encoder: SparseEncoder
) -> frozenset[int] | set[int]:
    held = stored.by_id.get(hit.id) if stored is not None else None
    if stored is None or held is None or asked & held & stored.stops:
        return _terms_of(hit.payload, encoder)  # deleted meanwhile by the writer, or a stop word's term
    return held


def _held(
    held: frozenset[int] | set[int], tags: Mapping[int, frozenset[int]] | None
) -> frozenset[int] | set[int]:
    if not tags:
        return held
    return held.union(*(words for tag, words in tags.items() if tag in held))


def _terms_of(payload: dict[str, Any], encoder: SparseEncoder) -> set[int]:
    """The keyword terms of the chunk as the index analysed them: body, title, aliases, tags, headings."""
    fields = DocumentFields(
        body=str(payload.get("content", "")),
        file_name=file_stem(str(payload.get("note_path", ""))),
        title=str(payload.get("note_title", "")),
        aliases=tuple(payload.get("aliases") or ()),
        tags=tuple(payload.get("tags") or ()),
        headings=tuple(payload.get("heading_path") or ()),
        language=payload.get(LANGUAGE),  # as indexed; detected again for a chunk stored before it was kept
    )
    return set(encoder.encode_document(fields).indices)
