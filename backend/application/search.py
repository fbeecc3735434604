"""Search use case: one query -> dense and/or keyword vectors -> one fused store query -> hits."""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from backend.application.hit_confidence import (
    ChunkCounter,
    Sides,
    SideScores,
    evidence_of,
    read_sides,
    with_confidence,
)
from backend.application.live_index import LiveIndex
from backend.application.note_graph import RelatedNote
from backend.application.ports import Embedder
from backend.application.serving_index import ServingIndex
from backend.domain import fusion
from backend.domain.confidence import Evidence
from backend.domain.filter_check import unmatched_filters
from backend.domain.models import PointFilter, ScoredPoint, SearchMode, SparseVector
from backend.domain.result_rules import (
    LineSpan,
    apply_threshold,
    cap_per_note,
    dedupe_overlapping,
    hubs_after_their_notes,
)
from backend.domain.sparse import SparseEncoder
from backend.domain.text_analysis import TextAnalyzer
from backend.domain.time_intent import TimeSpan, find_time_span
from backend.domain.vault_paths import safe_filter

log = logging.getLogger(__name__)

ENTITY_SCAN = 256  # chunks read to find the first chunk of each note named by the query


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[ScoredPoint]
    total_hits: int
    mode: SearchMode  # the mode actually used (keyword when dense was unavailable)
    warnings: list[str] = field(default_factory=list)
    related: list[RelatedNote] = field(default_factory=list)
    embed_ms: float = 0.0  # time spent embedding the query
    store_ms: float = 0.0  # time spent in the store query
    time_intent: TimeSpan | None = None  # the span of days the query named (its notes were boosted)
    evidence: list[Evidence] = field(default_factory=list)  # what each hit's confidence was computed from
    # filters that match no indexed note (an unknown folder, tag or path): said, but the answer is whole
    notices: list[str] = field(default_factory=list)

    @property
    def degraded(self) -> bool:
        return bool(self.warnings)


@dataclass(frozen=True, slots=True)
class SearchOptions:
    prefetch_limit: int = 100
    rrf_k: int = 2
    rrf_weights: tuple[float, float] = (0.3, 0.7)  # dense, keyword (score and rrf fusion)
    # dense, keyword for a question in another language than the vault's (its words cannot match the notes')
    cross_language_weights: tuple[float, float] = (0.9, 0.1)
    adaptive: fusion.AdaptiveWeights = field(default_factory=fusion.AdaptiveWeights)
    # "adaptive" (each side spread, dense weighted by its winner's lead), "score" (each side over its top,
    # fixed weights), "rrf", or "dbsf" (distribution-based score fusion; no weights, no k)
    fusion: str = "adaptive"
    max_chunks_per_note: int | None = 2  # None: no cap
    # a note dated inside the span a query names scores (1 + time_boost) times its own: a boost, not a filter
    time_boost: float = 1.0
    today: Callable[[], dt.date] = dt.date.today


class SearchService:
    def __init__(
        self,
        *,
        embedder: Embedder | None,
        encoder: SparseEncoder,
        index: ServingIndex,
        options: SearchOptions | None = None,
    ) -> None:
        self._embedder = embedder
        self._encoder = encoder
        self._index = index
        self._options = options or SearchOptions()
        self._chunks = ChunkCounter()

    @property
    def analyzer(self) -> TextAnalyzer:
        """How queries and notes become keyword terms (highlights follow the same rules)."""
        return self._encoder.analyzer

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = SearchMode.HYBRID,
        point_filter: PointFilter | None = None,
        candidates: int | None = None,
        include_related: bool = False,
        threshold: float | None = None,
        max_chunks_per_note: int | None = None,
        focus: str | None = None,
    ) -> SearchOutcome:
        """`candidates` widens the fused list (evaluation needs enough chunks to fill 10 notes).
        `max_chunks_per_note` caps the chunks of one note (None: the configured default).
        `focus`: the part of `query` the hits' confidence judges them by (a conversation's latest message,
        when `query` holds earlier ones too to rank by); None: the whole query.
        `threshold` is on the mode's own score scale (RRF for hybrid, raw similarity or BM25 otherwise).
        Paths and folders of `point_filter` must be vault-relative (SecurityViolationError otherwise)."""
        point_filter = safe_filter(point_filter)
        self._index.check_searchable()
        warnings: list[str] = []
        fallback = self._index.keyword_fallback
        if fallback is not None:
            warnings.append(fallback)
            mode = SearchMode.KEYWORD
        dense_only = self._index.dense_fallback  # an outdated index's keyword vectors are another encoding's
        if dense_only is not None:
            warnings.append(dense_only)
            mode = SearchMode.DENSE
        if not self._index.complete:
            warnings.append(
                f"the first indexing is still running ({self._index.indexed_notes} notes so far); "
                "results may be incomplete"
            )
        with self._index.serving() as live:  # a rebuild that switches meanwhile waits for this search
            per_note = max_chunks_per_note or self._options.max_chunks_per_note
            outcome, sides = self._search(
                live,
                query,
                top_k,
                mode,
                point_filter,
                candidates,
                include_related,
                threshold,
                warnings,
                per_note,
            )
            judged = self._encoder.encode_query(focus if focus is not None else query)
            return self._confident(live, outcome, sides, judged)

    def _search(
        self,
        live: LiveIndex,
        query: str,
        top_k: int,
        mode: SearchMode,
        point_filter: PointFilter | None,
        candidates: int | None,
        include_related: bool,
        threshold: float | None,
        warnings: list[str],
        per_note: int | None,
    ) -> tuple[SearchOutcome, Sides]:
        started = time.perf_counter()
        span = find_time_span(query, self._options.today()) if self._options.time_boost else None
        entity = self._entity_hits(live, query, point_filter)
        entity_ms = (time.perf_counter() - started) * 1000
        dense: list[float] | None = None
        started = time.perf_counter()
        pending = self._index.dense_pending if mode is not SearchMode.KEYWORD else 0
        health = self._index.serving_health
        failed = health is not None and health.problem is not None
        # keyword first: without a standing failure the notes are simply still waiting their turn
        why = (
            "the embedder was unavailable when they were indexed"
            if failed
            else "the index is still filling them in"
        )
        if pending and pending >= self._index.indexed_notes:
            warnings.append(f"the dense vectors are not built yet ({why}); answered from keyword search only")
            mode = SearchMode.KEYWORD
        elif pending:
            warnings.append(
                f"{pending} of {self._index.indexed_notes} notes have no dense vectors yet "
                f"({why}): they are found by keywords only"
            )
        if pending and health is not None and health.problem is not None:
            warnings[-1] += f"; {health.describe()}"  # e.g. MODEL_NOT_FOUND and the `ollama pull` to run
        if mode is not SearchMode.KEYWORD:
            dense, reason = self._embed_query(query)
            if dense is None:
                warnings.append(f"{reason}; answered from keyword search only")
                mode = SearchMode.KEYWORD
        sparse = self._encoder.encode_query(query) if mode is not SearchMode.DENSE else None
        if mode is SearchMode.KEYWORD and (sparse is None or sparse.is_empty):
            found = SearchOutcome(
                hits=entity[:top_k],
                total_hits=len(entity),
                mode=mode,
                warnings=warnings,
                time_intent=span,
                notices=unmatched_filters(point_filter, live.graph.records(), answered=bool(entity)),
            )
            return found, Sides(None, None)

        embed_ms = (time.perf_counter() - started) * 1000
        limit = max(top_k, candidates or 0, self._options.prefetch_limit)
        started = time.perf_counter()
        points, sides = self._query(
            live,
            dense,
            sparse if sparse is not None and not sparse.is_empty else None,
            limit,
            point_filter if point_filter is not None and not point_filter.is_empty else None,
            self._foreign_weights(query),
            hybrid=mode is SearchMode.HYBRID,
        )
        store_ms = (time.perf_counter() - started) * 1000 + entity_ms
        size = max(top_k, candidates or 0)
        named = {hit.id for hit in entity}
        if span is not None:
            points = [_boosted(p, span, self._options.time_boost) for p in points]
        fused = [p for p in sorted(points, key=_best_first) if p.id not in named]
        matched = _put_first(entity, fused, threshold, per_note, own_scale=mode is SearchMode.KEYWORD)
        if sides is None:  # the fusion did not read both sides' own scores: read them for the confidence
            keywords = sparse if sparse is not None else self._encoder.encode_query(query)
            sides = read_sides(live, dense, keywords, limit, point_filter)
        hits = matched[:size]
        related: list[RelatedNote] = []
        if include_related and hits:
            paths = list(dict.fromkeys(str(h.payload.get("note_path", "")) for h in hits[:top_k]))
            related = live.graph.related(paths)
        found = SearchOutcome(
            hits=hits,
            total_hits=len(matched),
            mode=mode,
            warnings=warnings,
            related=related,
            embed_ms=embed_ms,
            store_ms=store_ms,
            time_intent=span,
            notices=unmatched_filters(point_filter, live.graph.records(), answered=bool(hits)),
        )
        return found, sides

    def _query(
        self,
        live: LiveIndex,
        dense: list[float] | None,
        sparse: SparseVector | None,
        limit: int,
        point_filter: PointFilter | None,
        foreign: tuple[float, float] | None,
        *,
        hybrid: bool,
    ) -> tuple[list[ScoredPoint], Sides | None]:
        """The fused candidates, and both sides' raw scores where the fusion read them: RRF or DBSF inside
        one store query; adaptive and score fusion (which the engines do not offer) over both sides' ids and
        scores, fused by the domain's rule so both engines rank alike, then the payloads of the candidates
        kept (reading them for both whole sides cost ~18% of p95). `foreign`: the weights for a question in
        another language than the vault's, or None. A hybrid question without keyword terms (stop words
        only) is fused too, with an empty keyword side, so its scores are on the same 0..1 scale as any
        other hybrid answer."""
        options = self._options
        weights = foreign or options.rrf_weights
        scaled = options.fusion in ("adaptive", "score") and hybrid and dense is not None
        if not scaled or dense is None:
            points = live.store.query(
                dense=dense,
                sparse=sparse,
                limit=limit,
                prefetch_limit=limit,  # never below the configured depth: limit includes it
                point_filter=point_filter,
                rrf_k=self._options.rrf_k,
                rrf_weights=weights,
                fusion=self._options.fusion,
            )
            # keyword only: the points' scores are that side's own; otherwise they are fused
            return points, Sides(None, SideScores.of_points(points, limit)) if dense is None else None
        keyword = sparse if sparse is not None else SparseVector((), ())
        sides = live.store.rank_sides(dense=dense, sparse=keyword, limit=limit, point_filter=point_filter)
        raw = Sides(SideScores.of(sides[0], limit), SideScores.of(sides[1], limit))
        if options.fusion == "adaptive":
            fused = fusion.adaptive(sides[0], sides[1], options.adaptive, fixed=foreign)
        else:
            fused = fusion.top_scaled(sides, weights)
        ranked = sorted(fused.items(), key=lambda item: -item[1])
        # payloads only for what can be returned, and the ties of the last place (ties go by note and chunk)
        cut = min(len(ranked), limit)
        while cut < len(ranked) and ranked[cut][1] == ranked[limit - 1][1]:
            cut += 1
        payloads = live.store.payloads([point_id for point_id, _ in ranked[:cut]])
        points = [
            ScoredPoint(id=str(point_id), score=score, payload=payloads[point_id])
            for point_id, score in ranked[:cut]
            if point_id in payloads  # deleted meanwhile by the writer
        ]
        return sorted(points, key=_best_first)[:limit], raw

    def _confident(
        self, live: LiveIndex, outcome: SearchOutcome, sides: Sides, judged: SparseVector
    ) -> SearchOutcome:
        """The outcome with each hit's confidence, and what it was computed from."""
        hits = outcome.hits
        evidence = evidence_of(hits, sides=sides, query=judged, encoder=self._encoder)
        health = self._index.serving_health  # whose cosines the dense scores are
        model = health.model_name if health is not None else None
        chunks = self._chunks.count(live) if hits else 0
        hits = with_confidence(hits, evidence, model=model, dense=sides.dense is not None, chunks=chunks)
        return replace(outcome, hits=hits, evidence=evidence)

    def _foreign_weights(self, query: str) -> tuple[float, float] | None:
        """The fusion weights for a question in another language than the vault's (an English question
        about German notes shares only names and numbers with them, and the keyword side would rank by
        those), else None."""
        if self._encoder.analyzer.foreign(query):
            return self._options.cross_language_weights
        return None

    def _entity_hits(
        self, live: LiveIndex, query: str, point_filter: PointFilter | None
    ) -> list[ScoredPoint]:
        """The first chunk of each note whose title, alias or file name is the query, in path order.

        One keyword store query limited to those notes: an agent naming a note gets it first, without
        waiting for the embedder and whatever the fused ranking thinks of a bare name.
        """
        paths = live.graph.notes_named(query)
        if point_filter is not None and point_filter.note_paths:
            paths = [path for path in paths if path in point_filter.note_paths]
        if not paths:
            return []
        scoped = replace(point_filter or PointFilter(), note_paths=tuple(paths))
        sparse = self._encoder.encode_query(query)
        if sparse.is_empty:  # a name made of stop words only ("The End")
            points, _ = live.store.scroll(point_filter=scoped, limit=ENTITY_SCAN)
        else:
            points = live.store.query(
                dense=None, sparse=sparse, limit=ENTITY_SCAN, prefetch_limit=ENTITY_SCAN, point_filter=scoped
            )
        first: dict[str, ScoredPoint] = {}
        for p in points:
            path = str(p.payload.get("note_path", ""))
            known = first.get(path)
            if known is None or _chunk_index(p.payload) < _chunk_index(known.payload):
                first[path] = p
        return [first[path] for path in paths if path in first]

    def _embed_query(self, query: str) -> tuple[list[float] | None, str]:
        health = self._index.serving_health  # the model of the index's vectors (an outdated one's own)
        if self._embedder is None or health is None:
            return None, "no embedder is configured (EMBEDDING_PROVIDER=none)"
        if not health.worth_trying():  # known down: answer now rather than wait through its retries
            return None, health.describe()
        vector = health.query(query)
        if vector is None:
            log.warning("query embedding failed: %s", health.describe())
            return None, health.describe()
        return vector, ""


def _span(hit: ScoredPoint) -> LineSpan:
    p = hit.payload
    return LineSpan(str(p.get("note_path", "")), int(p.get("start_line", 0)), int(p.get("end_line", 0)))


def _best_first(point: ScoredPoint) -> tuple[float, str, int]:
    """Qdrant orders equal scores by where points sit in its storage, which differs between the embedded
    store and a server (and after a migration); ties go by note path and chunk instead, so the same index
    answers the same wherever it is stored."""
    return -point.score, str(point.payload.get("note_path", "")), _chunk_index(point.payload)


def _boosted(point: ScoredPoint, span: TimeSpan, boost: float) -> ScoredPoint:
    if not span.contains(point.payload.get("date")):
        return point
    return replace(point, score=point.score + abs(point.score) * boost)


def _chunk_index(payload: dict[str, Any]) -> int:
    return int(payload.get("chunk_index", 0))


def _put_first(
    entity: list[ScoredPoint],
    fused: list[ScoredPoint],
    threshold: float | None,
    per_note: int | None,
    *,
    own_scale: bool,
) -> list[ScoredPoint]:
    """The named notes first, then the fused results refined as usual.

    A named note is what was asked for, so the threshold does not drop it; it takes the best fused score
    (and its own keyword score when that is the mode's scale) so the list stays best-first.
    """
    if not entity:
        return _refine(fused, threshold, per_note)
    top = fused[0].score if fused else 0.0
    firsts = [replace(hit, score=max(top, hit.score) if own_scale or not fused else top) for hit in entity]
    kept = dedupe_overlapping([*firsts, *fused], _span)  # named notes are distinct, so all of them stay
    rest = hubs_after_their_notes(kept[len(firsts) :], text=_text, note_path=_note_path, rescore=_below)
    kept = cap_per_note([*kept[: len(firsts)], *rest], _note_path, per_note)
    named = len(firsts)
    return [*kept[:named], *apply_threshold(kept[named:], threshold)]


def _refine(hits: list[ScoredPoint], threshold: float | None, per_note: int | None) -> list[ScoredPoint]:
    """Overlapping chunks of one note dropped (so a dropped neighbour frees its slot), hubs moved below the
    notes they link to, at most `per_note` chunks of a note, then the threshold."""
    kept = dedupe_overlapping(hits, _span)
    kept = hubs_after_their_notes(kept, text=_text, note_path=_note_path, rescore=_below)
    return apply_threshold(cap_per_note(kept, _note_path, per_note), threshold)


def _text(hit: ScoredPoint) -> str:
    return str(hit.payload.get("content", ""))


def _note_path(hit: ScoredPoint) -> str:
    return str(hit.payload.get("note_path", ""))


def _below(hub: ScoredPoint, above: ScoredPoint) -> ScoredPoint:
    return replace(hub, score=min(hub.score, above.score))
