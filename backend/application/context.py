"""Context injection: a question (or the last chat messages) -> the best chunks, packed into one attributed
block within a character budget, ready to put in an agent's prompt."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from backend.application.memory import MemoryHit, MemoryService
from backend.application.presenting import ResultView, present_hits
from backend.application.search import SearchService
from backend.application.suggesting import suggestion_for
from backend.domain.content_policy import ContentPolicy
from backend.domain.context_packing import (
    PackedPassage,
    Passage,
    label_span,
    latest_asked,
    neutralize,
    overlaps_any,
    pack,
    query_from_messages,
    quote,
    quote_overhead,
)
from backend.domain.errors import InvalidRequestError
from backend.domain.memory_suggestion import MemorySuggestion
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
    min_confidence: float | None = None  # leave out hits less likely than this to be relevant
    exclude: Sequence[str] = ()  # attributions (`path:start-end`) the caller already has: not again
    quoted: bool = False  # the block fenced as quoted data (see context_packing.quote)


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
    notices: list[str] = field(default_factory=list)  # filters that match no indexed note
    memory_suggestion: MemorySuggestion | None = None  # a fact the block holds, the agent may offer to keep


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
        focus = None
        if not query:
            if not request.messages:
                raise InvalidRequestError("give a query or the last messages of the conversation")
            query = query_from_messages(request.messages)
            # the conversation ranks; what is asked now decides whether a hit is worth giving at all
            focus = latest_asked(request.messages)
        excluded = {name.casefold() for name in request.exclude_categories}
        given = [span for span in map(label_span, request.exclude) if span is not None]
        # left-out chunks leave gaps: ask for more candidates so the budget can still be filled
        wanted = request.max_chunks * (2 if excluded else 1) + len(given)
        outcome = self._search.search(
            query,
            top_k=wanted,
            mode=request.mode,
            point_filter=request.point_filter,
            threshold=request.threshold,
            focus=focus,
        )
        floor = request.min_confidence
        hits = [
            hit
            for hit in outcome.hits[:wanted]
            if (floor is None or (hit.confidence or 0.0) >= floor)
            and not overlaps_any(
                _path(hit.payload), _line(hit.payload, "start"), _line(hit.payload, "end"), given
            )
        ]
        search = self._search
        views = present_hits(hits, query, self._policy, analyzer=search.analyzer, words=search.word_terms)
        views = [v for v in views if not excluded & {c.casefold() for c in v.sensitive_categories}]
        # a map-of-content chunk that led to a note quoted here says only where the answer is: the note's
        # entry names it (`pointed_from`), and its place in the budget goes to other material
        led = {v.pointed_from.chunk_id for v in views if v.pointed_from is not None}
        views = [v for v in views if v.chunk_id not in led][: request.max_chunks]
        facts: list[MemoryHit] = []
        warnings = list(outcome.warnings)
        if request.include_memory and self._memory is not None:
            found = self._memory.search(query, limit=MEMORY_CANDIDATES)
            warnings += found.warnings
            facts = [f for f in found.hits if not excluded & {c.casefold() for c in f.sensitive_categories}]
        # remembered facts first: they are what the user chose to keep, and short
        candidates: list[ResultView | MemoryHit] = [*facts, *views]
        passages = [_passage(c) for c in candidates]
        nonce = secrets.token_hex(8) if request.quoted else ""
        if request.quoted:
            passages = [replace(p, text=neutralize(p.text), title=neutralize(p.title)) for p in passages]
            packed = pack(passages, max(0, request.max_chars - quote_overhead(nonce)))
        else:
            packed = pack(passages, request.max_chars)
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
        block = quote(packed.block, nonce) if request.quoted and packed.block else packed.block
        # judged by what is asked now, from the notes the block quotes (not those left out of it)
        quoted = [source.result for source in sources if source.result is not None]
        suggestion = suggestion_for(focus or query, quoted, self._memory)
        return ContextResult(
            query=query,
            block=block,
            sources=sources,
            omitted=packed.omitted,
            mode=outcome.mode,
            warnings=warnings,
            sensitive_detected=sensitive,
            notices=outcome.notices,
            memory_suggestion=suggestion,
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


def _path(payload: dict[str, object]) -> str:
    return str(payload.get("note_path", ""))


def _line(payload: dict[str, object], end: str) -> int:
    return int(str(payload.get(f"{end}_line", 0)))
