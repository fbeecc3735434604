"""What one search carries from stage to stage (backend/application/search/service.py): the request as the
stages read it, what the query itself names, its vectors, and the store query made of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from backend.application.search.question import Question
from backend.application.search.stage_clock import StageClock
from backend.domain.models import PointFilter, ScoredPoint, SearchMode, SparseVector
from backend.domain.periods.time_intent import TimeSpan


@dataclass(frozen=True, slots=True)
class Asked:
    """One search as its stages read it (`per_note` already defaulted): its question read once."""

    question: Question
    top_k: int
    mode: SearchMode
    point_filter: PointFilter | None  # as the store reads it: tags widened to the vault's (`tag_filter`)
    given_filter: PointFilter | None  # as the caller gave it: what the notices name
    candidates: int | None
    include_related: bool
    related_limit: int
    threshold: float | None
    per_note: int | None
    clock: StageClock = field(default_factory=StageClock, compare=False)  # started as the search is

    @property
    def size(self) -> int:
        """How many hits the answer holds: `top_k`, or more for evaluation (`candidates`)."""
        return max(self.top_k, self.candidates or 0)

    @property
    def store_filter(self) -> PointFilter | None:
        return self.point_filter if self.point_filter is not None and not self.point_filter.is_empty else None


@dataclass(frozen=True, slots=True)
class Clues:
    """What the query itself names, found before any vector: the span of days (its notes are boosted) and
    the notes called by their title, alias or file name (the first chunk of each comes first)."""

    span: TimeSpan | None
    named: list[ScoredPoint]
    store_ms: float  # the store query that found the named notes


@dataclass(frozen=True, slots=True)
class QueryVectors:
    dense: list[float] | None  # None: not embedded (keyword mode, or the embedder failed)
    sparse: SparseVector | None  # None: dense mode; may be empty (stop words only)

    @property
    def keywords(self) -> SparseVector | None:
        """The keyword side worth querying: None when there is none or it is empty."""
        return self.sparse if self.sparse is not None and not self.sparse.is_empty else None


@dataclass(frozen=True, slots=True)
class StoreAsk:
    """One store query: the vectors, how many candidates, the filter, the fusion weights."""

    dense: list[float] | None
    sparse: SparseVector | None
    limit: int
    point_filter: PointFilter | None
    foreign: tuple[float, float] | None  # the weights for a question in another language than the vault's
    hybrid: bool
