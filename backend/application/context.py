"""Context injection: a question (or the last chat messages) -> the best chunks, packed into one attributed
block within a character budget, ready to put in an agent's prompt."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from backend.application.memory import MemoryHit, MemoryService
from backend.application.presenting import ResultView, present_hits
from backend.application.search import SearchService
from backend.domain.content_policy import ContentPolicy
from backend.domain.context_packing import PackedPassage, Passage, pack, query_from_messages
from backend.domain.errors import InvalidRequestError
from backend.domain.models import PointFilter, SearchMode

MEMORY_CANDIDATES = 5


@dataclass(frozen=True, slots=True)
class ContextQuery:
    query: str | None = None
    messages: Sequence[tuple[str, str]] = ()  # (role, content), oldest first
    max_chars: int = 4000
    max_chunks: int = 10
    mode: SearchMode = SearchMode.HYBRID
    point_filter: PointFilter | None = None
    threshold: float | None = None
    include_memory: bool = False
    exclude_categories: Sequence[str] = ()


@dataclass(frozen=True, slots=True)
class ContextSourceView:
    passage: PackedPassage
    result: ResultView | None  # None for a remembered fact
    memory: MemoryHit | None = None


@dataclass(frozen=True, slots=True)
class ContextResult:
    query: str
    block: str
    sources: list[ContextSourceView]
    omitted: int
    mode: SearchMode
    warnings: list[str] = field(default_factory=list)
    sensitive_detected: bool = False


class ContextService:
    def __init__(
        self,
        *,
        search: SearchService,
        memory: MemoryService | None,
        policy: ContentPolicy,
    ) -> None:
        self._search = search
        self._memory = memory
        self._policy = policy

    def build(self, request: ContextQuery) -> ContextResult:
        query = (request.query or "").strip()
        if not query:
            if not request.messages:
                raise InvalidRequestError("give a query or the last messages of the conversation")
            query = query_from_messages(request.messages)
        excluded = {name.casefold() for name in request.exclude_categories}
        # excluded chunks leave gaps: ask for more candidates so the budget can still be filled
        wanted = request.max_chunks * (2 if excluded else 1)
        outcome = self._search.search(
            query,
            top_k=wanted,
            mode=request.mode,
            point_filter=request.point_filter,
            threshold=request.threshold,
        )
        views = present_hits(outcome.hits[:wanted], query, self._policy, analyzer=self._search.analyzer)
        views = [v for v in views if not excluded & {c.casefold() for c in v.sensitive_categories}]
        views = views[: request.max_chunks]
        facts: list[MemoryHit] = []
        warnings = list(outcome.warnings)
        if request.include_memory and self._memory is not None:
            found = self._memory.search(query, limit=MEMORY_CANDIDATES)
            warnings += found.warnings
            facts = [f for f in found.hits if not excluded & {c.casefold() for c in f.sensitive_categories}]
        # remembered facts first: they are what the user chose to keep, and short
        candidates: list[ResultView | MemoryHit] = [*facts, *views]
        packed = pack([_passage(c) for c in candidates], request.max_chars)
        sources = [
            ContextSourceView(
                passage=p,
                result=c if isinstance(c, ResultView) else None,
                memory=c if isinstance(c, MemoryHit) else None,
            )
            for p in packed.included
            for c in (candidates[p.index],)
        ]
        sensitive = any(candidates[p.index].sensitive_categories for p in packed.included)
        return ContextResult(
            query=query,
            block=packed.block,
            sources=sources,
            omitted=packed.omitted,
            mode=outcome.mode,
            warnings=warnings,
            sensitive_detected=sensitive,
        )


def _passage(candidate: ResultView | MemoryHit) -> Passage:
    if isinstance(candidate, MemoryHit):
        return Passage(
            path=candidate.source,
            start_line=0,
            end_line=0,
            title=f"from {candidate.source}",
            text=candidate.value,
            memory_key=candidate.key,
        )
    return Passage(
        path=candidate.note_path,
        start_line=candidate.start_line,
        end_line=candidate.end_line,
        title=candidate.heading_context or candidate.note_title,
        text=candidate.content,
    )
