"""The explanation of one search (backend/application/explanation/rules.py holds the rules), only when asked:
both sides' ranked candidates as the search read them (read again only for an answer that does not keep them),
fused again by its rule, the hits' stored keyword terms, and for "why not this note?" that note's best chunk
on each side."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import replace

from backend.application.explanation.ranking_replay import Replayed, replay
from backend.application.explanation.rules import (
    ExplainInput,
    SearchExplanation,
    SideLists,
    explain_hits,
    note_filter,
)
from backend.application.explanation.why_not import NoteChunks, why_not
from backend.application.search.hit_confidence import Sides, read_sides
from backend.application.search.question import Question
from backend.application.search.ranking import own_words_first
from backend.application.search.service import SearchOutcome, SearchService
from backend.application.search.stages import QueryVectors
from backend.application.serving.live_index import LiveIndex
from backend.application.serving.serving_index import ServingIndex
from backend.domain.errors import SecurityViolationError
from backend.domain.models import PointFilter, ScoredPoint, SearchMode, SparseVector, from_same_fields
from backend.domain.notes.note_lookup import NoteLookup, lookup_note
from backend.domain.notes.vault_paths import safe_filter, vault_path
from backend.domain.ranking import fusion

NOTE_SCAN = 256  # chunks of one note read to find its best


class SearchExplainer:
    def __init__(self, *, search: SearchService, index: ServingIndex) -> None:
        self._search = search
        self._index = index

    def explain(
        self,
        query: str,
        outcome: SearchOutcome,
        *,
        point_filter: PointFilter | None = None,
        max_chunks_per_note: int | None = None,
        asked_note: str | None = None,
        threshold: float | None = None,
    ) -> SearchExplanation:
        """Why the hits of `outcome` (the search's answer to `query` with `point_filter`) rank as they do,
        and, with `asked_note` (a note's path or name), why that note is not higher."""
        search, options = self._search, self._search.options
        with self._index.serving() as live:
            store_filter = live.graph.tag_filter(safe_filter(point_filter))
            if store_filter is not None and store_filter.is_empty:
                store_filter = None
            # the question as the search read it (an outcome made elsewhere has it read again here)
            question = outcome.question or search.question(query, live)
            vectors = outcome.vectors or search.query_vectors(live, question, outcome.mode)
            depth = max(len(outcome.hits), options.prefetch_limit)
            # both sides as the search read them; an outcome without them (a conversation's, judged by its
            # last turn) has them read again
            sides = outcome.sides if outcome.vectors is not None and outcome.sides is not None else None
            if sides is None:
                sides = read_sides(live, vectors.dense, _sparse(vectors), depth, store_filter)
            lists = self._lists(
                sides, vectors, depth, question=question if outcome.mode is SearchMode.HYBRID else None
            )
            named = live.graph.notes_named(query)
            if store_filter is not None and store_filter.note_paths:
                named = [path for path in named if path in store_filter.note_paths]
            given = from_same_fields(
                ExplainInput,
                outcome,  # its hits, their evidence and the mode
                query=query,
                span=outcome.time_intent,
                time_boost=options.time_boost,
                named_paths=named,
                per_note=max_chunks_per_note or options.max_chunks_per_note,
                calibration=search.gate.calibration(search.serving_model(), dense=True),
                chunks=search.chunks.count(live) if outcome.hits else 0,
                fusion=options.fusion,
                cross_language=search.foreign_weights(question) is not None,
                threshold=threshold,
                saved=own_words_first(question, options.saved_folders),
            )
            explanation = explain_hits(given, lists, search.judge, _stored_terms(live, outcome.hits))
            if asked_note is None:
                return explanation
            asked = Replayed(
                question=question,
                mode=outcome.mode,
                vectors=vectors,
                point_filter=live.graph.tag_filter(safe_filter(point_filter)),
                span=outcome.time_intent,
                per_note=given.per_note,
                threshold=threshold,
            )
            answer = why_not(
                asked_note,
                live=live,
                given=given,
                sides=lists,
                encoder=search.judge,
                lookup=_lookup(live, asked_note),
                note_chunks=functools.partial(self._note_chunks, live, vectors, lists, store_filter),
                replay=functools.partial(replay, live, search, asked, lists),
            )
            return replace(explanation, why_not=answer)

    def _lists(
        self, sides: Sides, vectors: QueryVectors, depth: int, *, question: Question | None
    ) -> SideLists:
        """Both sides best first, each only where the search asked it (its vector made), and, for a hybrid
        search (`question` given), their fusion by the search's rule and weights."""
        dense = (
            list(sides.dense.scores.items())
            if sides.dense is not None and vectors.dense is not None
            else None
        )
        keyword = None
        if vectors.sparse is not None:  # asked; it may have matched nothing
            keyword = list(sides.keyword.scores.items()) if sides.keyword is not None else []
        if question is None or dense is None:
            return SideLists(dense, keyword, None, None, depth)
        scores, weights, values = self._fused(
            dense, keyword or [], foreign=self._search.foreign_weights(question)
        )
        return SideLists(dense, keyword, scores, weights, depth, values)

    def _fused(
        self,
        dense: list[tuple[str, float]],
        keyword: list[tuple[str, float]],
        *,
        foreign: tuple[float, float] | None,
    ) -> tuple[
        dict[str, float], tuple[float, float] | None, tuple[dict[str, float], dict[str, float]] | None
    ]:
        """Both sides joined by the rule and the weights the search applies, those weights (adaptive and score
        fusion: as summed, a side that found nothing left out), and each side's values as the rule combined
        them (None for rrf, which combines ranks). `foreign`: a foreign question's weights."""
        options = self._search.options
        weights: tuple[float, float] = foreign or options.rrf_weights
        if options.fusion in ("adaptive", "score"):
            if options.fusion == "adaptive":
                weights = fusion.adaptive_weights(dense, options.adaptive, fixed=foreign)
                scores = fusion.adaptive(dense, keyword, options.adaptive, fixed=weights)
                lists = [fusion.spread(dense), fusion.spread(keyword)]
            else:
                scores = fusion.top_scaled([dense, keyword], weights)
                lists = [dense, keyword]
            values, summed = fusion.scaled_parts(lists, weights)
            return scores, (round(summed[0], 4), round(summed[1], 4)), (values[0], values[1])
        if options.fusion == "rrf":
            return fusion.rrf([dense, keyword], weights, options.rrf_k), weights, None
        parts = fusion.dbsf_parts([dense, keyword])
        return fusion.dbsf([dense, keyword]), None, (parts[0], parts[1])

    def _note_chunks(
        self,
        live: LiveIndex,
        vectors: QueryVectors,
        lists: SideLists,
        point_filter: PointFilter | None,
        path: str,
    ) -> NoteChunks:
        """One note's chunks scored on each side the search had, and whether its filters let the note in."""
        paths = point_filter.note_paths if point_filter is not None else ()
        if paths and path not in paths:
            return NoteChunks(None, None, admitted=False, stored=True)
        scoped = note_filter(path, point_filter)
        if not live.store.scroll(point_filter=scoped, limit=1)[0]:
            exists = bool(live.store.scroll(point_filter=note_filter(path, None), limit=1)[0])
            return NoteChunks(None, None, admitted=not exists, stored=False)
        sides = read_sides(live, vectors.dense, _sparse(vectors), NOTE_SCAN, scoped)
        mine = self._lists(sides, vectors, 0, question=None)
        return NoteChunks(
            mine.dense if lists.dense is not None else None,
            mine.keyword if lists.keyword is not None else None,
            admitted=True,
            stored=True,
        )


def _sparse(vectors: QueryVectors) -> SparseVector:
    """The keyword vector to read the sides with (an empty one for a search that asked no keyword side)."""
    return vectors.sparse if vectors.sparse is not None else SparseVector((), ())


def _stored_terms(live: LiveIndex, hits: Sequence[ScoredPoint]) -> dict[str, frozenset[int]]:
    """The keyword terms each hit was indexed with, in one store read (its words are read from them)."""
    return {str(key): terms for key, terms in live.store.keyword_terms([hit.id for hit in hits]).items()}


def _lookup(live: LiveIndex, asked: str) -> NoteLookup:
    """The indexed note a path (with or without `.md`) or, when only one note answers to it, a name means;
    else the notes that all answer to it, or the closest names."""
    try:
        path = vault_path(asked)
    except SecurityViolationError:
        return NoteLookup(None)
    record = live.graph.record(path)
    if record is not None:
        return NoteLookup(record)
    return lookup_note(path, live.graph.records())
