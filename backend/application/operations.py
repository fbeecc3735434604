"""One use case per operation an agent or a person can ask for: search, context, note read and listing,
links, memory.

The HTTP routes, the MCP tools and the CLI call these alike and only translate what they return, so every
door applies the same rules (the index opened first, secrets redacted, sensitivity flagged, the dense
catch-up nudged after a search). They take `Handles`, what the composition root wires.

Opening is one rule, declared once per use case (`@on_open_index`) rather than called by each door: it runs
when the use case starts, after the door has validated the request, so a request that is wrong anyway is
told so (422, 400, 413) whatever the store's state, and a valid one gets INDEX_UNAVAILABLE while the store
cannot be reached (FastAPI resolves a dependency before it validates the body: opening there would answer
503 first).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from backend.application.explanation.explainer import SearchExplainer
from backend.application.explanation.rules import SearchExplanation
from backend.application.notes.memory import MemoryPage, MemoryService, MemoryView
from backend.application.notes.note_chunks import NoteChunkReader, NoteChunks
from backend.application.notes.reading import NoteListing, NoteReader, NoteView
from backend.application.recall.context import (
    Considered,
    ContextQuery,
    ContextResult,
    ContextService,
    Gathered,
    recall_verdicts,
)
from backend.application.recall.suggesting import suggestion_for
from backend.application.search.presenting import ResultView, group_by_note, note_groups, present_hits
from backend.application.search.service import SearchOutcome, SearchService
from backend.application.search.stage_clock import EXPLAIN, MEMORY, PRESENTING
from backend.application.serving.note_graph import RELATED_LIMIT, NoteLinks, RelatedNote
from backend.application.serving.serving_index import ServingIndex
from backend.domain.errors import InvalidRequestError, KnowledgeBridgeError
from backend.domain.links import LinkRecord
from backend.domain.models import PointFilter, ScoredPoint, SearchMode
from backend.domain.notes.note_listing import NoteListFilter, NoteOrder
from backend.domain.recall.memory_suggestion import SUGGEST_AMONG, MemorySuggestion
from backend.domain.text.content_policy import ContentPolicy


class IndexRules(Protocol):
    """What the use cases ask of the index supervisor."""

    def open(self) -> None:
        """No-op once open; after a start with the store down: INDEX_UNAVAILABLE, or open it now."""

    def catch_up_dense(self) -> None:
        """A no-op unless notes wait for dense vectors; then it may start the catch-up sync."""


class Handles(Protocol):
    """The services the use cases run on."""

    index: ServingIndex
    search: SearchService
    policy: ContentPolicy
    notes: NoteReader
    memory: MemoryService
    context: ContextService

    @property
    def supervisor(self) -> IndexRules: ...

    @property
    def explainer(self) -> SearchExplainer: ...

    @property
    def chunk_reader(self) -> NoteChunkReader: ...


P = ParamSpec("P")
T = TypeVar("T")


def on_open_index(use_case: Callable[Concatenate[Handles, P], T]) -> Callable[Concatenate[Handles, P], T]:
    """The use case runs on an open index: opened here, when it starts (see the module's docstring)."""

    @functools.wraps(use_case)
    def run(handles: Handles, /, *args: P.args, **kwargs: P.kwargs) -> T:
        handles.supervisor.open()
        return use_case(handles, *args, **kwargs)

    return run


@dataclass(frozen=True, slots=True)
class SearchQuery:
    query: str
    top_k: int = 5
    mode: SearchMode = SearchMode.HYBRID
    point_filter: PointFilter | None = None
    include_related: bool = True
    related_limit: int = RELATED_LIMIT
    threshold: float | None = None
    max_chunks_per_note: int | None = None
    by_note: bool = False  # top_k counts notes, each with its matched chunks
    include_memory: bool = False
    memory_top_k: int = 3
    candidates: int | None = None  # how deep the store query goes when grouping by note
    explain: bool = False  # say why each hit ranks where it does (from what the search read, ~1 ms)
    why_not: str | None = None  # a note's path or name: say why it is not higher (implies explain)


@dataclass(slots=True)
class SearchAnswer:
    """A search as every door shows it: hits presented (secrets redacted, sensitivity flagged)."""

    outcome: SearchOutcome
    views: list[ResultView]
    memories: list[MemoryView] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # what was unavailable: the answer is degraded
    total_ms: float = 0.0
    memory_suggestion: MemorySuggestion | None = None  # a fact the hits hold, for the agent to offer keeping
    explanation: SearchExplanation | None = None  # with `explain`: why each view ranks where it does
    recall: dict[str, Considered] = field(
        default_factory=dict
    )  # with `explain`: chunk id -> recall's verdict

    @property
    def notices(self) -> list[str]:
        """Filters that match no indexed note: said along with the warnings, the answer still whole."""
        return self.outcome.notices

    @property
    def sensitive_detected(self) -> bool:
        return any(v.sensitive_categories for v in self.views) or any(
            m.sensitive_categories for m in self.memories
        )


@dataclass(frozen=True, slots=True)
class Found:
    """A search before its hits are presented: where vaults merge, only the hits the merge keeps are (the
    others' highlights and schema objects would be made to be thrown away; of its first hits, the text its
    memory suggestion reads is)."""

    request: SearchQuery
    outcome: SearchOutcome
    hits: list[ScoredPoint]  # the answer's, in its order: its top_k chunks, or the chunks of its top_k notes
    started: float  # perf_counter when the search began

    def groups(self) -> list[list[ScoredPoint]]:
        """The hits as their notes' groups, best note first."""
        return note_groups(self.hits)


def search_notes(handles: Handles, request: SearchQuery) -> SearchAnswer:
    """One vault's search, its hits presented (several vaults: `find_notes`, a merge, `present_found`)."""
    return present_found(handles, find_notes(handles, request))


@on_open_index
def find_notes(handles: Handles, request: SearchQuery) -> Found:
    started = time.perf_counter()
    outcome = handles.search.search(
        request.query,
        top_k=request.top_k,
        mode=request.mode,
        point_filter=request.point_filter,
        include_related=request.include_related,
        related_limit=request.related_limit,
        threshold=request.threshold,
        max_chunks_per_note=request.max_chunks_per_note,
        # grouped: top_k counts notes, so every matched chunk is a candidate (no deeper store query)
        candidates=request.candidates if request.by_note else None,
    )
    handles.supervisor.catch_up_dense()
    hits = group_by_note(outcome.hits, request.top_k) if request.by_note else outcome.hits[: request.top_k]
    return Found(request, outcome, hits, started)


def present_found(
    handles: Handles, found: Found, kept: Collection[str] | None = None, *, waited: bool = False
) -> SearchAnswer:
    """The answer of a search found: its hits presented, or only those of `kept` (chunk ids: what a merge
    of vaults keeps of this vault's), in their order, and its first hits' text read for its memory
    suggestion. `waited`: other vaults searched and merged since (their time is no stage of this search's,
    nor is what followed its own search before: a dense catch-up's check, grouping by note)."""
    request, outcome, started = found.request, found.outcome, found.started
    if waited:
        outcome.clock.resume()
    search = handles.search
    present = functools.partial(
        present_hits,
        question=outcome.asked,
        policy=handles.policy,
        analyzer=search.analyzer,
        words=search.word_terms,
        saved_folders=search.options.saved_folders,
    )
    if kept is None:
        views = head = present(found.hits)
    else:
        views = present([hit for hit in found.hits if hit.id in kept])
        # the suggestion is the vault's own, of its first hits whether the merge kept them or not (the
        # merged answer offers it only from a result kept, so none where none is): those cut are read for
        # their text alone
        first = found.hits[:SUGGEST_AMONG] if views else []
        read = {view.chunk_id: view for view in views}
        read |= {v.chunk_id: v for v in present([h for h in first if h.id not in read], highlight=False)}
        head = [read[hit.id] for hit in first]
    outcome.clock.lap(PRESENTING)
    suggestion = suggestion_for(outcome.asked, head, handles.memory) if head else None
    answer = SearchAnswer(outcome=outcome, views=views, warnings=list(outcome.warnings))
    answer.memory_suggestion = suggestion
    if request.include_memory:
        try:
            facts = handles.memory.search(request.query, limit=request.memory_top_k)
        except KnowledgeBridgeError as exc:  # the notes still answer: say what is missing
            answer.warnings.append(f"remembered facts are unavailable: {exc.detail}")
        else:
            answer.warnings += facts.warnings
            answer.memories = list(facts.hits)
    outcome.clock.lap(MEMORY)
    if request.explain or request.why_not is not None:
        shown = {view.chunk_id for view in views}
        pairs = zip(outcome.hits, outcome.evidence, strict=True)
        told = [(hit, evidence) for hit, evidence in pairs if hit.id in shown]
        answer.explanation = handles.explainer.explain(
            request.query,
            replace(outcome, hits=[hit for hit, _ in told], evidence=[evidence for _, evidence in told]),
            point_filter=request.point_filter,
            max_chunks_per_note=request.max_chunks_per_note,
            asked_note=request.why_not,
            threshold=request.threshold,
        )
        verdicts = recall_verdicts(views, handles.context.gate(outcome))
        answer.recall = {c.chunk_id: c for c in verdicts}
        outcome.clock.lap(EXPLAIN)
    answer.total_ms = (time.perf_counter() - started) * 1000
    return answer


@on_open_index
def build_context(handles: Handles, query: ContextQuery) -> ContextResult:
    return handles.context.build(query)


@on_open_index
def gather_context(handles: Handles, query: ContextQuery) -> Gathered:
    """One vault's part of a block of several vaults (context.assemble packs them once)."""
    return handles.context.gather(query)


@dataclass(frozen=True, slots=True)
class LinkPage:
    links: list[LinkRecord]
    total: int
    next_offset: int | None


@on_open_index
def unresolved_links(handles: Handles, limit: int, offset: int) -> LinkPage:
    """A page of the links to notes not created yet, vault-wide (by source note, then as written)."""
    links = handles.index.unresolved_links()
    page = links[offset : offset + limit]
    more = offset + limit < len(links)
    return LinkPage(page, len(links), offset + limit if more else None)


@on_open_index
def note_chunks(handles: Handles, path: str) -> NoteChunks:
    return handles.chunk_reader.chunks(path)


@on_open_index
def read_note(
    handles: Handles, path: str, start_line: int | None = None, end_line: int | None = None
) -> NoteView:
    return handles.notes.read(path, start_line=start_line, end_line=end_line)


@on_open_index
def note_links(handles: Handles, path: str) -> NoteLinks:
    return handles.index.note_links(handles.notes.find(path).path)


@on_open_index
def related_notes(handles: Handles, paths: Sequence[str], limit: int = RELATED_LIMIT) -> list[RelatedNote]:
    """The notes most linked to or from these, as a search's `related` of those results: for an answer of
    several vaults, whose related notes are those of the results the merge kept, known only after it."""
    with handles.index.serving() as live:
        return live.graph.related(paths, limit)


@on_open_index  # the source must be an indexed note: the index has to be open to tell
def remember(handles: Handles, key: str, value: str, source: str) -> tuple[MemoryView, bool]:
    return handles.memory.remember(key, value, source)


def list_memories(handles: Handles, limit: int, offset: int) -> MemoryPage:
    return handles.memory.list(limit=limit, offset=offset)  # facts live apart from the index: no open


def forget(handles: Handles, key: str) -> None:
    handles.memory.forget(key)  # as listing: the key alone says which fact, no note is looked up


@dataclass(frozen=True, slots=True)
class NoteListQuery:
    folder: str = ""
    tag: str | None = None
    date_from: date | None = None
    date_to: date | None = None
    modified_since: datetime | None = None  # without a zone: UTC
    order: NoteOrder = NoteOrder.PATH
    limit: int = 50
    offset: int = 0


def list_notes(handles: Handles, query: NoteListQuery) -> NoteListing:
    # the request's own rules first: a wrong one is told so whatever the store's state
    if query.date_from and query.date_to and query.date_from > query.date_to:
        raise InvalidRequestError("date_from must not be after date_to")
    since = query.modified_since
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)  # a time without a zone is UTC
    wanted = NoteListFilter(
        folder=query.folder,
        tag=query.tag.strip() if query.tag and query.tag.strip() else None,
        date_from=query.date_from.isoformat() if query.date_from else None,
        date_to=query.date_to.isoformat() if query.date_to else None,
        modified_since=since.timestamp() if since else None,
    )
    return _listed(handles, wanted, query)


@on_open_index
def _listed(handles: Handles, wanted: NoteListFilter, query: NoteListQuery) -> NoteListing:
    return handles.notes.list(wanted, order=query.order, limit=query.limit, offset=query.offset)
