"""/search, /context, /index/status, a note's read and a fact kept, over the vaults a request names (issue
46), for every door (the routes, the MCP tools, the CLI in-process): the vaults asked in the thread pool
(`fan_out`), the answers merged as domain/ranking/vault_merge.py says (each vault's order kept, by
calibrated `confidence` weighed by how sure each vault is, the vaults holding more of what the question
names first: not one sort by confidence), a vault that cannot answer named in `missing_vaults` while the
others answer.

Each vault is asked for the request's whole `top_k` (QMD's mistake was one global top-K filtered after: a
vault with many strong hits left the list short), and its `max_chunks_per_note` and filters hold within it;
the merge only orders and cuts. The related notes are read after the merge, each vault's of its results kept
(links never leave a vault). A request asking one vault is that vault's answer as it was before vaults, its
results naming their vault.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TypeVar

from starlette.concurrency import run_in_threadpool

from backend.api.answers import (
    context_answer,
    context_query,
    context_response,
    links_answer,
    note_answer,
    related_answer,
    related_out,
    remember_answer,
    search_answer,
)
from backend.api.context_schemas import ContextRequest, ContextResponse
from backend.api.errors import status_of
from backend.api.explain_schemas import SearchExplainOut
from backend.api.memory_schemas import MemoryIn, MemoryStored, MemorySuggestionOut
from backend.api.note_schemas import NoteOut
from backend.api.request_caps import check_filter_caps
from backend.api.schemas import (
    MissingVaultOut,
    NoteGroupOut,
    NoteLinksOut,
    RelatedNoteOut,
    SearchRequest,
    SearchResponse,
    SearchResult,
)
from backend.api.status_answer import status_answer
from backend.api.status_schemas import IndexStatus, VaultStateOut
from backend.application.operations import gather_context
from backend.application.recall.context import ContextQuery, VaultCandidates, assemble
from backend.application.search.narrowing import Narrowing
from backend.application.serving.note_graph import Relating
from backend.bootstrap import Services
from backend.domain.errors import KnowledgeBridgeError, VaultUnavailableError
from backend.domain.ranking.vault_merge import merged_by_confidence
from backend.domain.recall.context_packing import labels_of_vault
from backend.vault_set import Library, VaultFailure, addressed

log = logging.getLogger(__name__)
T = TypeVar("T")


async def fan_out(
    library: Library, names: Sequence[str], work: Callable[[Services], T]
) -> tuple[list[tuple[str, T]], list[MissingVaultOut]]:
    """`work` on each named vault, in the thread pool; the vaults that could not answer apart. A request
    the service refuses (4xx: a bad field, too many filters) is refused whole; a vault that fails (5xx:
    index unavailable, folder gone) is missing, unless it is the only one asked: then its error is the
    answer, as with one vault.

    Vaults whose stores run in this process are asked in turn, in one trip: the embedded store holds the
    interpreter while it searches, so two threads overlap nothing and only take turns at a price (the
    Zettelkasten beside LoCoMo dev over HTTP: 14.9 -> 14.3 ms p50, the code before beside this in the same
    rounds, docs/measurements.md). Vaults on a Qdrant server are asked at once, each in its own trip, their
    waits on the network overlapping."""
    alone = len(names) == 1
    if alone or all(library.services[n].settings.qdrant_url is None for n in names if n in library.services):
        outcomes = await run_in_threadpool(lambda: [_asked(library, name, work, alone) for name in names])
    else:
        outcomes = await asyncio.gather(
            *(run_in_threadpool(_asked, library, name, work, alone) for name in names)
        )
    answered = [(name, value) for name, value, failure in outcomes if failure is None and value is not None]
    missing = [MissingVaultOut(**vars_of(f)) for _, _, f in outcomes if f is not None]
    if not answered:
        said = "; ".join(f"{m.vault}: {m.detail}" for m in missing)
        raise VaultUnavailableError(f"no vault asked could answer ({said})")
    return answered, missing


def _asked(
    library: Library, name: str, work: Callable[[Services], T], alone: bool
) -> tuple[str, T | None, VaultFailure | None]:
    """`work`'s answer from one vault, or why it could not answer (`alone`: the only vault asked, whose
    failure is the request's)."""
    problem = library.problem(name)
    if problem is not None:
        if alone:
            raise problem.error()
        return name, None, problem
    try:
        return name, work(library.services[name]), None
    except KnowledgeBridgeError as exc:
        if alone or status_of(exc.code) < 500:
            raise
        return name, None, VaultFailure(name, exc.code, exc.detail)
    except Exception:  # one vault's bug must not take the others' answers down
        if alone:
            raise
        log.exception("the vault %s failed to answer", name)
        return name, None, VaultFailure(name, "INTERNAL_ERROR", "an unexpected error occurred")


def vars_of(failure: VaultFailure) -> dict[str, str]:
    return {"vault": failure.vault, "error_code": failure.error_code, "detail": failure.detail}


# -- /search ------------------------------------------------------------------------------------------


async def search_vaults(library: Library, body: SearchRequest) -> tuple[SearchResponse, str]:
    started = time.perf_counter()
    names = library.asked(body.vaults)
    why_of = None  # the vault a `why_not` cited `vault:<name>/<path>` names: its note is the one explained
    if body.why_not is not None:
        path, why_of = addressed(body.why_not, None)
        body = body.model_copy(update={"why_not": path})
    answered, missing = await fan_out(library, names, lambda services: search_answer(services, body))
    if len(answered) == 1 and not missing:
        name, (answer, timing, _) = answered[0]
        _name_vault(answer, name)
        return answer, timing
    for name, (answer, _, _) in answered:
        _name_vault(answer, name)
    narrowed = [found.narrowed for _, found in answered]
    merged = _merged([(name, found.answer) for name, found in answered], body, narrowed, why_of)
    if body.include_related and merged.results:
        read = {name: found.outcome.relating for name, found in answered}
        merged.related_notes, failed = await _related(library, read, merged.results, body.related_limit)
        merged.warnings += failed
        merged.status = "degraded" if failed else merged.status
    merged.missing_vaults = missing
    if missing:
        merged.status = "degraded"
    total = (time.perf_counter() - started) * 1000
    merged.search_time_ms = round(total, 2)
    return merged, f"total;dur={total:.2f}"


def _name_vault(answer: SearchResponse, name: str) -> None:
    for result in answer.results:
        result.vault = name
    for group in answer.groups or ():
        group.vault = name
        for chunk in group.chunks:
            chunk.vault = name
    for note in answer.related_notes:
        note.vault = name
    for fact in answer.memories:
        fact.vault = name
    if answer.memory_suggestion is not None:  # stored with only its path, a path of two vaults is ambiguous
        answer.memory_suggestion.vault = name
    if answer.explain is not None and answer.explain.why_not is not None:
        answer.explain.why_not.vault = name


async def _related(
    library: Library, read: Mapping[str, Relating | None], results: Sequence[SearchResult], limit: int
) -> tuple[list[RelatedNoteOut], list[str]]:
    """The related notes of the results kept, each vault's of its own kept results (links never leave a
    vault), most linked first; and, as warnings, the vaults that could not say.

    A merge keeps a prefix of each vault's results, whose links the vault read as it searched (`read`: the
    one store query its related notes take): they are found from those in memory, with no second trip to
    the thread pool (a trip costs more than the read, ~0.15 ms against ~0.08). Only a kept note whose links
    were not read (grouped by note, a group past the first top_k chunks) is read now, in one trip."""
    kept: dict[str, list[str]] = {}
    for result in results:
        paths = kept.setdefault(result.vault, [])
        if result.note_path not in paths:
            paths.append(result.note_path)
    notes: list[RelatedNoteOut] = []
    unread: dict[str, list[str]] = {}
    for name, paths in kept.items():
        links = read.get(name)
        if links is not None and links.paths.issuperset(paths):
            notes += _of_vault([related_out(note) for note in links.of(paths, limit)], name)
        else:
            unread[name] = paths
    failed: list[str] = []
    if unread:
        more, failed = await run_in_threadpool(_read_related, library, unread, limit)
        notes += more
    notes.sort(key=lambda n: -n.link_count)
    return notes[:limit], failed


def _read_related(
    library: Library, unread: Mapping[str, Sequence[str]], limit: int
) -> tuple[list[RelatedNoteOut], list[str]]:
    notes: list[RelatedNoteOut] = []
    failed: list[str] = []
    for name, paths in unread.items():
        try:
            notes += _of_vault(related_answer(library.services[name], paths, limit), name)
        except KnowledgeBridgeError as exc:  # the results stand without them
            failed.append(f"{name}: related notes are unavailable: {exc.detail}")
    return notes, failed


def _of_vault(notes: list[RelatedNoteOut], name: str) -> list[RelatedNoteOut]:
    for note in notes:
        note.vault = name
    return notes


def _group_confidence(group: NoteGroupOut) -> float:
    return max((chunk.confidence for chunk in group.chunks), default=0.0)


def _merged(
    named: list[tuple[str, SearchResponse]],
    body: SearchRequest,
    narrowed: Sequence[Narrowing],
    why_of: str | None = None,
) -> SearchResponse:
    """The answers of several vaults as one: results merged, each vault's in its own order, by confidence
    weighed by its vault's surest (domain/ranking/vault_merge.py), cut to top_k; groups likewise by their
    best chunk's confidence; facts by score. Its related notes are read after (`_related`)."""
    names = [name for name, _ in named]
    answers = [answer for _, answer in named]
    groups = None
    if body.group_by == "note":
        merged = merged_by_confidence([a.groups or [] for a in answers], _group_confidence, narrowed)
        groups = merged[: body.top_k]
        every = [chunk for group in merged for chunk in group.chunks]
        results = [chunk for group in groups for chunk in group.chunks]
    else:
        every = merged_by_confidence([a.results for a in answers], lambda r: r.confidence, narrowed)
        results = every[: body.top_k]
    memories = sorted((m for a in answers for m in a.memories), key=lambda m: -(m.score or 0.0))
    # the vault of the surest result speaks for the whole: its mode, suggestion and explanation
    top = results[0].vault if results else named[0][0]
    lead = next(answer for name, answer in named if name == top)
    warnings = [f"{name}: {warning}" for name, answer in named for warning in answer.warnings]
    return SearchResponse(
        query=body.query,
        mode=lead.mode,
        status="degraded" if any(a.status == "degraded" for a in answers) else "healthy",
        warnings=warnings,
        results=results,
        related_notes=[],  # those of the results kept: `_related`
        memories=memories[: body.memory_top_k],
        sensitive_detected=any(r.sensitive_categories for r in results)
        or any(m.sensitive_categories for m in memories[: body.memory_top_k]),
        total_hits=sum(a.total_hits for a in answers),
        search_time_ms=0.0,
        time_intent=next((a.time_intent for a in answers if a.time_intent is not None), None),
        groups=groups,
        memory_suggestion=_kept_suggestion(sorted(named, key=lambda pair: pair[0] != top), results),
        explain=_explained(lead, named, every, len(results), dict(zip(names, narrowed, strict=True)), why_of),
        stages=lead.stages,
    )


def _kept_suggestion(
    named: Sequence[tuple[str, SearchResponse]], results: Sequence[SearchResult]
) -> MemorySuggestionOut | None:
    """The first vault's suggestion (the surest result's vault first) whose line a kept result holds: one
    from a hit the merge cut would offer to remember a fact the agent was not shown."""
    for name, answer in named:
        offered = answer.memory_suggestion
        if offered is not None and any(
            r.vault == name
            and r.note_path == offered.source
            and r.start_line <= offered.start_line <= r.end_line
            for r in results
        ):
            return offered
    return None


def _explained(
    lead: SearchResponse,
    named: Sequence[tuple[str, SearchResponse]],
    every: Sequence[SearchResult],
    shown: int,
    holds: Mapping[str, Narrowing],
    why_of: str | None = None,
) -> SearchExplainOut | None:
    """The explanation of the vault of the surest result; its "why not" from the vault holding the note
    asked about (the first asked that does: the others holding the path are named in its reason), told of
    the merged list (`every` result of every vault merged, of which the first `shown` are the answer's): its
    final rank and place there, and how the merge placed it. A vault's own rank would say "It is result 2"
    of a note the merge cut."""
    explain = lead.explain
    if explain is None or explain.why_not is None:
        return explain
    asked = [a.explain.why_not for _, a in named if a.explain is not None and a.explain.why_not is not None]
    # the vault its path was cited with first (`why_of`), else the first asked that holds it
    holding = sorted((w for w in asked if w.indexed), key=lambda w: w.vault != why_of)
    if not holding:  # no vault holds it: its reason (the closest names) is the lead's
        return explain.model_copy(update={"why_not": explain.why_not.model_copy(update={"final_rank": None})})
    why = holding[0]
    vault, own = why.vault or "", why.final_rank  # its place among its own vault's results
    mine = (vault, why.note_path)
    place = next((i for i, r in enumerate(every, 1) if (r.vault, r.note_path) == mine), None)
    final = place if place is not None and place <= shown else None
    if own is None or place is None:  # its vault's results leave it out: the vault's reason says why
        reason, ranked = f"In the vault {vault}: {why.reason}", None
    elif final is not None:
        reason, ranked = f"It is result {final} (result {own} of the vault {vault}).", place
    else:
        before = {r.vault for r in every[: place - 1]} - {vault}
        because = (
            "their vaults hold the note the question is the name of, or more of the people, tags or period "
            "it names"
            if any(holds[other] > holds[vault] for other in before)
            else "surer, each vault's confidences weighed by its surest result against the surest of any"
        )
        reason = (
            f"It is result {own} of the vault {vault}, cut when the vaults' lists were merged: {place - own} "
            f"results of other vaults come before it ({because}); merged, it ranks {place}, below the "
            f"{shown} results shown."
        )
        ranked = place
    if len(holding) > 1:  # a path of several vaults: say which one this is, and how to ask of another
        others = [w.vault or "" for w in holding[1:]]
        ask = " or ".join(f'["{other}"]' for other in others)
        reason = (
            f"{why.note_path} is in the vaults {', '.join([vault, *others])}: this explains {vault}'s (ask "
            f"with `vaults`: {ask} for the other). {reason}"
        )
    update = {"final_rank": final, "ranked": ranked, "reason": reason}
    return explain.model_copy(update={"why_not": why.model_copy(update=update)})


# -- a note, and a fact tied to one, in its vault -------------------------------------------------------


def read_note(
    library: Library, path: str, vault: str | None, start_line: int | None = None, end_line: int | None = None
) -> NoteOut:
    """GET /note, the MCP `get_note` tool and `kb note`: the note at `path` (or `vault:<name>/<path>`) of
    the vault holding it (`Library.holding`), naming that vault."""
    name, services, held = library.holding(path, vault)
    answer = note_answer(services, held, start_line, end_line)
    answer.vault = name
    return answer


def read_links(library: Library, path: str, vault: str | None) -> NoteLinksOut:
    """GET /note/{path}/links, the MCP `note_links` tool and `kb links`, as `read_note` finds the note."""
    name, services, held = library.holding(path, vault)
    answer = links_answer(services, held)
    answer.vault = name
    return answer


def remember_fact(library: Library, body: MemoryIn) -> MemoryStored:
    """POST /memory, the MCP `remember` tool and `kb memory remember`: the fact kept in the vault holding
    its source note, tied to that note's path there (a `vault:<name>/<path>` source is the path)."""
    name, services, source = library.holding(body.source, body.vault)
    stored = remember_answer(services, body.model_copy(update={"source": source}))
    stored.fact.vault = name
    return stored


# -- /context -----------------------------------------------------------------------------------------


async def context_vaults(library: Library, body: ContextRequest) -> ContextResponse:
    names = library.asked(body.vaults)
    if len(names) == 1:
        own = body.model_copy(update={"exclude": labels_of_vault(body.exclude, names[0])})
        (name, answer), *_ = (await fan_out(library, names, lambda s: context_answer(s, own)))[0]
        for source in answer.sources:
            source.vault = name
        if answer.memory_suggestion is not None:
            answer.memory_suggestion.vault = name
        for considered in answer.explain.considered if answer.explain else ():
            considered.vault = name
        return answer
    settings = next(iter(library.services.values()), None)
    if settings is not None:
        check_filter_caps(body, settings.settings)
    query = context_query(body)

    def of_vault(services: Services) -> ContextQuery:
        # what the caller already has of this vault, not of another holding the same path
        return replace(query, exclude=labels_of_vault(query.exclude, services.settings.vault_name))

    answered, missing = await fan_out(
        library, names, lambda services: gather_context(services, of_vault(services))
    )
    parts = [VaultCandidates(name, gathered, library.services[name].memory) for name, gathered in answered]
    answer = context_response(body, assemble(query, parts))
    answer.missing_vaults = missing
    if missing:
        answer.status = "degraded"
    return answer


# -- /index/status ------------------------------------------------------------------------------------


async def status_vaults(library: Library, vault: str | None) -> IndexStatus:
    """The status of the vault asked; with several vaults and none asked, the first that answers with
    every vault's state in `vaults` (one vault's failure is its state, not the answer's)."""
    if vault is None and library.several:
        states = [await _vault_state(library, name) for name in library.names]
        first = next((s for s in states if s.status is not None), None)
        status = first.status.model_copy() if first is not None and first.status else None
        if status is None:
            said = "; ".join(f"{s.vault}: {s.detail}" for s in states)
            raise VaultUnavailableError(f"no vault of this service answers ({said})")
        status.vaults = states
        return status
    name, services = library.get(vault)
    status = await run_in_threadpool(status_answer, services)
    status.vault = name
    return status


async def _vault_state(library: Library, name: str) -> VaultStateOut:
    problem = library.problem(name)
    services = library.services.get(name)
    path = str(services.settings.vault_path) if services is not None else ""
    if problem is not None or services is None:
        failure = problem or library.failures[name]
        return VaultStateOut(
            vault=name, path=path, available=False, error_code=failure.error_code, detail=failure.detail
        )
    try:
        status = await run_in_threadpool(status_answer, services)
    except KnowledgeBridgeError as exc:
        return VaultStateOut(vault=name, path=path, available=False, error_code=exc.code, detail=exc.detail)
    status.vault = name
    return VaultStateOut(vault=name, path=path, available=True, status=status)
