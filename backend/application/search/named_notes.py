"""The notes a query names by title, alias or file name: found before any vector, they come first in the
search's answer (backend/application/search/service.py)."""

from __future__ import annotations

from dataclasses import replace

from backend.application.search import stage_clock as stage
from backend.application.search.question import Question
from backend.application.search.ranking import chunk_index
from backend.application.search.stage_clock import StageClock
from backend.application.serving.live_index import LiveIndex
from backend.domain.models import PointFilter, ScoredPoint
from backend.domain.text.sparse import SparseEncoder

ENTITY_SCAN = 256  # chunks read to find the first chunk of each note named by the query


def named_hits(
    live: LiveIndex,
    encoder: SparseEncoder,
    question: Question,
    point_filter: PointFilter | None,
    clock: StageClock,
) -> list[ScoredPoint]:
    """The first chunk of each note whose title, alias or file name is the question, in path order.

    One keyword store query limited to those notes: an agent naming a note gets it first, without
    waiting for the embedder and whatever the fused ranking thinks of a bare name.
    """
    paths = live.graph.notes_named(question.text)
    if point_filter is not None and point_filter.note_paths:
        paths = [path for path in paths if path in point_filter.note_paths]
    if not paths:
        return []
    clock.lap(stage.ANALYSIS)
    scoped = replace(point_filter or PointFilter(), note_paths=tuple(paths))
    sparse = encoder.encode_terms(question.terms)
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
        if known is None or chunk_index(p.payload) < chunk_index(known.payload):
            first[path] = p
    clock.lap(stage.STORE_NAMED)
    return [first[path] for path in paths if path in first]
