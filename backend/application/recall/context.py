"""Context injection: a question (or the last chat messages) -> the best chunks, packed into one attributed
block within a character budget, ready to put in an agent's prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from backend.application.notes.memory import MemoryHit, MemoryService
from backend.application.recall.entries import (
    Considered,
    considered_of,
    fence_overhead,
    least_room,
    packed_entries,
    payload_line,
    payload_path,
    quoted_reason,
)
from backend.application.recall.gate import FAR_LESS_LIKELY, Gate
from backend.application.recall.suggesting import suggestion_for
from backend.application.search.presenting import ResultView, present_hits
from backend.application.search.service import SearchOutcome, SearchService
from backend.domain.errors import InvalidRequestError
from backend.domain.models import PointFilter, ScoredPoint, SearchMode
from backend.domain.ranking.confidence import far_less_likely
from backend.domain.ranking.result_rules import is_link_list
from backend.domain.ranking.vault_merge import merged_by_confidence
from backend.domain.recall.context_packing import (
    OVER_BUDGET,
    PackedPassage,
    Reading,
    label_span,
    latest_asked,
    query_from_messages,
    repeats,
)
from backend.domain.recall.memory_suggestion import MemorySuggestion
from backend.domain.recall.recall_budget import PLUGIN_RECALL, RecallBudget
from backend.domain.text.content_policy import ContentPolicy

MEMORY_CANDIDATES = 5

# what became of a candidate of the block (besides context_packing's DUPLICATE, OVER_BUDGET and EMPTY)
BELOW_FLOOR = "below the floor"
REPEATED = "repeated"  # overlaps an entry the caller already has (`exclude`)
EXCLUDED_CATEGORY = "excluded category"
POINTER = "a list of links whose note is quoted instead"
LINK_LIST = "a list of links: the notes it points to answer, not it"
# a note of headings alone, or of a query block (Dataview) alone, is found by its name; quoted, it says
# nothing
TITLE_ONLY = "holds only its note's name: nothing of it to quote"
BEYOND_MAX = "beyond max entries"
REPLACED = "its note says another replaced it"  # note_status.says_replaced
# several vaults: another holds the period, tag or name the question narrows to (search/narrowing.py)
NOT_NARROWED = "of a vault without what the question names: another vault holds it"


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
    cite: bool = True  # a quoted block's head asks for its entries to be cited as [path:lines]


@dataclass(frozen=True, slots=True)
class ContextSourceView:
    passage: PackedPassage
    result: ResultView | None  # None for a remembered fact
    memory: MemoryHit | None = None
    vault: str = ""  # its vault's name in a block of several vaults


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
    # the vault of its source note in a block of several vaults ("" of one): the vault to keep it with, as
    # two vaults may hold the path
    suggestion_vault: str = ""
    considered: list[Considered] = field(default_factory=list)  # every candidate and why it is in or out


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

    def gate(self, outcome: SearchOutcome) -> Gate:
        """How a block asked with a floor picks among the entries above it, for the question its search
        judged its hits by."""
        question = outcome.judged_by
        return Gate.asked_by(
            question,
            self._search.word_terms,
            by_odds=self._search.judged_by_meaning(outcome),
            # a question naming a period asks about that period, not its last time
            latest=question.latest and outcome.time_intent is None,
            today=self._search.options.today(),
        )

    def build(self, request: ContextQuery) -> ContextResult:
        return assemble(request, [VaultCandidates("", self.gather(request), self._memory)])

    def gather(self, request: ContextQuery) -> Gathered:
        """This vault's part of a block: its search, and the entries worth a place (ranked, each with its
        confidence), before any block is packed; `assemble` packs one block of one or several vaults."""
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
        left_out: dict[str, str] = {}  # chunk id -> why it is not in the block
        for hit in outcome.hits[:wanted]:
            if floor is not None and (hit.confidence or 0.0) < floor:
                left_out[hit.id] = BELOW_FLOOR
            elif repeats(
                payload_path(p := hit.payload), payload_line(p, "start"), payload_line(p, "end"), given
            ):
                left_out[hit.id] = REPEATED
        hits = [hit for hit in outcome.hits[:wanted] if hit.id not in left_out]
        search = self._search
        # no highlights: the block and its sources show none
        folders = search.options.saved_folders
        views = present_hits(
            hits,
            outcome.asked,
            self._policy,
            analyzer=search.analyzer,
            highlight=False,
            saved_folders=folders,
        )
        gate = self.gate(outcome) if floor is not None else None
        views = _kept_views(views, excluded, request.max_chunks, left_out, gate)
        facts: list[MemoryHit] = []
        warnings = list(outcome.warnings)
        if request.include_memory and self._memory is not None and not (gate and gate.to_the_agent):
            found = self._memory.search(query, limit=MEMORY_CANDIDATES)
            warnings += found.warnings
            facts = [f for f in found.hits if not excluded & {c.casefold() for c in f.sensitive_categories}]
        by_odds = gate is not None and gate.by_odds
        reads = gate.reads if gate is not None else None
        return Gathered(
            query, outcome, outcome.hits[:wanted], views, left_out, facts, warnings, by_odds, reads
        )


@dataclass(frozen=True, slots=True)
class Gathered:
    """One vault's candidates for a block: its entries worth a place, best first (at most max_chunks), and
    what became of the others (`left_out`)."""

    query: str
    outcome: SearchOutcome  # its question read as ranked, and as judged (the focus: `judged_by`)
    hits: list[ScoredPoint]  # every candidate the search gave, in its order
    views: list[ResultView]
    left_out: dict[str, str]
    facts: list[MemoryHit]
    warnings: list[str]
    by_odds: bool  # the floor's gate weighed odds (confidences comparable across entries)
    reads: Callable[[str], Reading] | None = None  # asked with a floor: how an entry is read for the question


@dataclass(frozen=True, slots=True)
class VaultCandidates:
    vault: str  # "" for the one vault of a block of one
    gathered: Gathered
    memory: MemoryService | None


def assemble(request: ContextQuery, parts: Sequence[VaultCandidates]) -> ContextResult:
    """One block from the candidates of one vault or several. Several: their entries are merged by
    calibrated confidence (one scale for every vault), each vault's in its own order (vault_merge.py);
    none far less likely than the surest of all is kept when every vault's gate weighs odds, and the
    best max_chunks are packed once: the block quotes the surest entries across the vaults, not each
    vault's best in turn."""
    first = parts[0].gathered
    query = first.query
    vault_of: dict[int, str] = {}  # id(candidate) -> its vault
    memory_of: dict[str, MemoryService | None] = {}
    facts: list[MemoryHit] = []
    for part in parts:
        memory_of[part.vault] = part.memory
        for item in (*part.gathered.views, *part.gathered.facts):
            vault_of[id(item)] = part.vault
        facts += part.gathered.facts
    # each vault's entries in its own order (its gate's), merged by confidence (vault_merge.py)
    several = len(parts) > 1
    narrowed = [part.gathered.outcome.narrowed for part in parts] if several else None
    views = merged_by_confidence([part.gathered.views for part in parts], lambda v: v.confidence, narrowed)
    # by vault and chunk id: the same path in two vaults may give two chunks one id
    left_out = {(p.vault, k): v for p in parts for k, v in p.gathered.left_out.items()}
    if several:
        # a vault holding less of what the question names (a note by its name, people, tags, period) than
        # another is not quoted beside it: ranked after it in a search, it has nothing to say in the turn.
        # So even when the other's entries were all left out (given already, below the floor): counted only
        # over the vaults with entries left, one question of personal-dev and one of LoCoMo dev beside it
        # were quoted from the wrong vault (scripts/measure/evaluation/vaults.py)
        if narrowed and len(set(narrowed)) > 1:
            most = max(narrowed)
            aside = {part.vault for part, holds in zip(parts, narrowed, strict=True) if holds < most}
            left_out.update(
                ((vault_of[id(v)], v.chunk_id), NOT_NARROWED) for v in views if vault_of[id(v)] in aside
            )
            views = [v for v in views if vault_of[id(v)] not in aside]
        if views and all(part.gathered.by_odds for part in parts):
            best = max(v.confidence for v in views)
            left_out.update(
                ((vault_of[id(v)], v.chunk_id), FAR_LESS_LIKELY)
                for v in views
                if far_less_likely(v.confidence, best)
            )
            views = [v for v in views if (vault_of[id(v)], v.chunk_id) not in left_out]
        left_out.update(((vault_of[id(v)], v.chunk_id), BEYOND_MAX) for v in views[request.max_chunks :])
        views = views[: request.max_chunks]
        facts.sort(key=lambda f: -(f.score or 0.0))
        facts = facts[:MEMORY_CANDIDATES]
    # remembered facts first: they are what the user chose to keep, and short
    candidates: list[ResultView | MemoryHit] = [*facts, *views]
    reads = {id(v): part.gathered.reads for part in parts if part.gathered.reads for v in part.gathered.views}
    entries = packed_entries(
        candidates,
        request.max_chars,
        quoted=request.quoted,
        vault_of=vault_of if several else None,
        reads=reads if request.min_confidence is not None else None,
        cite=request.cite,
    )
    packed = entries.packed
    warnings = [w for part in parts for w in _named(part.vault, part.gathered.warnings, len(parts))]
    if candidates and not packed.included:
        least = least_room(
            candidates,
            quoted=request.quoted,
            vault_of=vault_of if several else None,
            reads=reads if request.min_confidence is not None else None,
            cite=request.cite,
        )
        if least is not None:
            fenced = fence_overhead(cite=request.cite)
            warnings.append(
                f"no entry fits in max_chars={request.max_chars}"
                + (f" (the quoted fence alone takes {fenced})" if request.quoted else "")
                + f": the first quote needs max_chars={least} or more"
            )
    sources = [
        ContextSourceView(
            passage=p,
            result=c if isinstance(c, ResultView) else None,
            memory=c if isinstance(c, MemoryHit) else None,
            vault=vault_of.get(id(c), ""),
        )
        for p in packed.included
        for c in (candidates[p.index],)
    ]
    sensitive = any(candidates[p.index].sensitive_categories for p in packed.included)
    block = entries.block()
    # judged by what is asked now, from the notes the block quotes (not those left out of it), with the
    # memory of the vault of the first of them (a fact is kept with its source note's vault)
    quoted = [source.result for source in sources if source.result is not None]
    lead = next((s.vault for s in sources if s.result is not None), parts[0].vault)
    suggestion = suggestion_for(
        first.outcome.judged_by, [v for v in quoted if vault_of.get(id(v)) == lead], memory_of[lead]
    )
    hits = [(part.vault, hit) for part in parts for hit in part.gathered.hits]
    if several:
        hits.sort(key=lambda vh: -(vh[1].confidence or 0.0))
    return ContextResult(
        query=query,
        block=block,
        sources=sources,
        omitted=packed.omitted,
        mode=first.outcome.mode,
        warnings=warnings,
        sensitive_detected=sensitive,
        notices=[n for part in parts for n in _named(part.vault, part.gathered.outcome.notices, len(parts))],
        memory_suggestion=suggestion,
        suggestion_vault=lead if suggestion is not None else "",
        considered=considered_of(hits, candidates, packed, left_out, vault_of),
    )


def _named(vault: str, lines: Sequence[str], vaults: int) -> list[str]:
    """A vault's warnings, each saying its vault when several answer."""
    return [f"{vault}: {line}" if vaults > 1 else line for line in lines]


def recall_verdicts(
    views: Sequence[ResultView], gate: Gate, budget: RecallBudget = PLUGIN_RECALL
) -> list[Considered]:
    """What OpenClaw's per-turn recall (the plugin's defaults, nothing given in earlier turns) would make of
    these hits were they its /context's candidates: the rules of `ContextService.build`, in its order
    (`gate`: as `ContextService.gate` says for the question and its search). Its candidates are the first
    `max_entries` hits, as /context's are (`gather` searches for as many): a hit after them is never quoted,
    nor does it make one of them look far less likely."""
    left_out = {v.chunk_id: BELOW_FLOOR for v in views if v.confidence < budget.floor}
    left_out.update(
        (v.chunk_id, BEYOND_MAX) for v in views[budget.max_entries :] if v.chunk_id not in left_out
    )
    candidates = [v for v in views if v.chunk_id not in left_out]
    kept = _kept_views(candidates, set(), budget.max_entries, left_out, gate)
    reads = {id(v): gate.reads for v in kept} if gate.reads else None
    packed = packed_entries(kept, budget.max_chars, quoted=True, reads=reads).packed
    fate = {kept[p.index].chunk_id: quoted_reason(p) for p in packed.included}
    fate.update((kept[index].chunk_id, why) for index, why in packed.left_out.items())
    return [
        Considered(
            f"{v.note_path}:{v.start_line}-{v.end_line}",
            v.note_path,
            v.start_line,
            v.end_line,
            v.confidence,
            left_out.get(v.chunk_id) or fate.get(v.chunk_id, OVER_BUDGET),
            v.chunk_id,
        )
        for v in views
    ]


def _kept_views(
    views: Sequence[ResultView],
    excluded: set[str],
    max_chunks: int,
    left_out: dict[str, str],
    gate: Gate | None,
) -> list[ResultView]:
    """The views worth a place in the block, at most `max_chunks`; each other one's reason in `left_out`.
    With a `gate` (the caller asked for confident entries only: a floor) the block picks among those left,
    as `Gate` says."""
    for view in views:
        if excluded & {c.casefold() for c in view.sensitive_categories}:
            left_out[view.chunk_id] = EXCLUDED_CATEGORY
    # a map-of-content chunk that led to a note quoted here says only where the answer is: the note's
    # entry names it (`pointed_from`), and its place in the budget goes to other material
    led = {v.pointed_from.chunk_id for v in views if v.pointed_from is not None}
    left_out.update((chunk_id, POINTER) for chunk_id in led if chunk_id not in left_out)
    # nor is any other list of links quoted (a map of content, a home note, a "see also" list): an agent
    # reading one learns only note names; the notes it points to are quoted where they answer, or nothing
    for view in views:
        if view.chunk_id not in left_out and is_link_list(view.content):
            left_out[view.chunk_id] = LINK_LIST
        elif view.chunk_id not in left_out and view.title_only:
            left_out[view.chunk_id] = TITLE_ONLY
        elif view.chunk_id not in left_out and view.replaced:  # quoted, a replaced plan reads as the plan
            left_out[view.chunk_id] = REPLACED
    kept = [v for v in views if v.chunk_id not in left_out]
    if gate is not None:
        kept = gate.picked(kept, left_out)
    left_out.update((v.chunk_id, BEYOND_MAX) for v in kept[max_chunks:])
    return kept[:max_chunks]
