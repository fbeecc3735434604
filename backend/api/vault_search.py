"""/search over several vaults (issue 46): each vault searched, the hits merged as
domain/ranking/vault_merge.py says (each vault's order kept, by calibrated `confidence` weighed by how sure
each vault is, the vaults holding more of what the question names first: not one sort by confidence), and
only the hits the merge keeps presented (highlights, the schema's objects: made for a result the answer
shows, not for the others of each vault's top_k; a vault's first hits are read for their text, which its
memory suggestion reads), a vault that cannot answer (its search failing, or its answer as it is
presented) named in `missing_vaults` while the others answer, their hits merged again to fill the list it
leaves.

Each vault is asked for the request's whole `top_k` (QMD's mistake was one global top-K filtered after: a
vault with many strong hits left the list short), and its `max_chunks_per_note` and filters hold within it;
the merge only orders and cuts. The related notes are read after the merge, each vault's of its results kept
(links never leave a vault). A request asking one vault is that vault's answer as it was before vaults, its
results naming their vault. With `explain` (or `why_not`) every hit is presented: a vault's explanation
tells where a note ranks among all its results, and "why not" where the merge put one it cut.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from starlette.concurrency import run_in_threadpool

from backend.api.answers import (
    SearchAnswered,
    find_for,
    found_answer,
    related_answer,
    related_out,
    search_answer,
)
from backend.api.explain_schemas import SearchExplainOut
from backend.api.memory_schemas import MemorySuggestionOut
from backend.api.schemas import (
    MissingVaultOut,
    RelatedNoteOut,
    SearchRequest,
    SearchResponse,
    SearchResult,
)
from backend.api.vault_answers import ask_vault, fan_out, in_process, in_turn, vars_of
from backend.application.operations import Found
from backend.application.search.narrowing import Narrowing
from backend.application.search.presenting import shown_confidence
from backend.application.serving.note_graph import Relating
from backend.bootstrap import Services
from backend.domain.errors import KnowledgeBridgeError, VaultUnavailableError
from backend.domain.ranking.vault_merge import merged_by_confidence
from backend.vault_set import Library, VaultFailure, addressed


class Merge(NamedTuple):
    """Every vault's hits in the order the merge puts them, as (vault, chunk id), and how many of the first
    the answer shows."""

    order: list[tuple[str, str]]
    shown: int


Searched = tuple[Found, Narrowing]  # a vault's hits, and what it holds of what the question narrows to


async def search_vaults(library: Library, body: SearchRequest) -> tuple[SearchResponse, str]:
    """/search over the vaults `body` asks (all the caller may see when it names none), and its
    Server-Timing header."""
    started = time.perf_counter()
    names = library.asked(body.vaults)
    why_of = None  # the vault a `why_not` cited `vault:<name>/<path>` names: its note is the one explained
    if body.why_not is not None:
        path, why_of = addressed(body.why_not, None)
        body = body.model_copy(update={"why_not": path})
    if len(names) == 1:
        answered, _ = await fan_out(library, names, lambda services: search_answer(services, body))
        name, (answer, timing, _) = answered[0]
        _name_vault(answer, name)
        return answer, timing
    if in_process(library, names):  # searched, merged and presented in one trip to the thread pool
        settled = await run_in_threadpool(_searched_in_turn, library, names, body)
    else:  # each vault's store a server's: the vaults searched at once, then presented at once
        searched, missing = await fan_out(library, names, lambda services: _searched(services, body))
        merge = merge_of(searched, body)
        kept = _kept(searched, merge, body)
        presented = await asyncio.gather(
            *(run_in_threadpool(_present, library, name, f, body, kept[name]) for name, (f, _) in searched)
        )
        if any(failure is not None for _, _, failure in presented):  # merged again, some presented anew
            done = {name: (kept[name], answer) for (name, _), answer in zip(searched, presented, strict=True)}
            settled = await run_in_threadpool(_settle, library, names, searched, missing, body, done)
        else:
            settled = _Settled(searched, missing, merge, presented)  # as _settle would: merged once
    answered = [(name, answer) for name, answer, _ in settled.presented if answer is not None]
    for name, (answer, _, _) in answered:
        _name_vault(answer, name)
    narrowed = [holds for _, (_, holds) in settled.searched]
    named = [(name, found.answer) for name, found in answered]
    merged = _merged(named, body, settled.merge, narrowed, why_of)
    if body.include_related and merged.results:
        read = {name: found.outcome.relating for name, found in answered}
        merged.related_notes, failed = await _related(library, read, merged.results, body.related_limit)
        merged.warnings += failed
        merged.status = "degraded" if failed else merged.status
    merged.missing_vaults = settled.missing
    if settled.missing:
        merged.status = "degraded"
    total = (time.perf_counter() - started) * 1000
    merged.search_time_ms = round(total, 2)
    return merged, f"total;dur={total:.2f}"


Presented = tuple[str, SearchAnswered | None, VaultFailure | None]  # a vault's answer, or why it has none


class _Settled(NamedTuple):
    """The vaults that answered: their searches, how they merged, their answers presented; and those
    missing."""

    searched: list[tuple[str, Searched]]
    missing: list[MissingVaultOut]
    merge: Merge
    presented: list[Presented]


def _searched(services: Services, body: SearchRequest) -> Searched:
    found = find_for(services, body)
    return found, found.outcome.narrowed


def _searched_in_turn(library: Library, names: Sequence[str], body: SearchRequest) -> _Settled:
    """Each vault searched in turn (`in_turn`), then merged and presented (`_settle`)."""
    searched, missing = in_turn(library, names, lambda services: _searched(services, body))
    return _settle(library, names, searched, missing, body, {})


def _settle(
    library: Library,
    names: Sequence[str],
    searched: list[tuple[str, Searched]],
    missing: list[MissingVaultOut],
    body: SearchRequest,
    done: dict[str, tuple[set[str] | None, Presented]],
) -> _Settled:
    """The vaults' hits merged and each vault's kept presented, but where `done` holds its answer of the
    same hits kept already. A vault whose answer fails as it is presented (a fault of its facts, its
    explanation) is missing, and the others' hits are merged again, to fill the list it leaves: a vault
    that now keeps more is presented again (its stages count both times). The missing are named in the
    order the vaults were asked (`names`), however they failed."""
    while True:
        merge = merge_of(searched, body)
        kept = _kept(searched, merge, body)
        for name, (found, _) in searched:
            if name not in done or done[name][0] != kept[name]:
                done[name] = (kept[name], _present(library, name, found, body, kept[name]))
        presented = [done[name][1] for name, _ in searched]
        failures = [failure for _, _, failure in presented if failure is not None]
        if not failures:
            return _Settled(searched, missing, merge, presented)
        missing = missing + [MissingVaultOut(**vars_of(failure)) for failure in failures]
        missing.sort(key=lambda m: names.index(m.vault))  # in the order asked
        failed = {failure.vault for failure in failures}
        searched = [pair for pair in searched if pair[0] not in failed]
        if not searched:
            said = "; ".join(f"{m.vault}: {m.detail}" for m in missing)
            raise VaultUnavailableError(f"no vault asked could answer ({said})")


def _present(
    library: Library, name: str, found: Found, body: SearchRequest, kept: set[str] | None
) -> Presented:
    """A vault's answer with the hits of `kept` presented (all with None), or why it failed: as a vault
    that fails to search, it is missing while the others answer (`ask_vault`)."""

    def answer(services: Services) -> SearchAnswered:
        return found_answer(services, body, found, kept, waited=True)

    return ask_vault(library, name, answer, False)


def merge_of(searched: Sequence[tuple[str, Searched]], body: SearchRequest) -> Merge:
    """Every vault's hits merged: by chunk, or grouped by note by each note's surest chunk."""
    narrowed = [holds for _, (_, holds) in searched]
    if body.group_by == "note":
        notes = merged_by_confidence(
            [[(name, group) for group in found.groups()] for name, (found, _) in searched],
            lambda item: max((shown_confidence(hit) for hit in item[1]), default=0.0),
            narrowed,
        )
        order = [(name, hit.id) for name, group in notes for hit in group]
        return Merge(order, sum(len(group) for _, group in notes[: body.top_k]))
    chunks = merged_by_confidence(
        [[(name, hit) for hit in found.hits] for name, (found, _) in searched],
        lambda item: shown_confidence(item[1]),
        narrowed,
    )
    return Merge([(name, hit.id) for name, hit in chunks], min(body.top_k, len(chunks)))


def _kept(
    searched: Sequence[tuple[str, Searched]], merge: Merge, body: SearchRequest
) -> dict[str, set[str] | None]:
    """The chunk ids of each vault that the merge shows; None (every hit) with `explain` or `why_not`: a
    vault's explanation tells where a note ranks among all its results, and "why not" where the merge put
    one it cut."""
    every = body.explain or body.why_not is not None
    shown = merge.order[: merge.shown]
    return {name: None if every else {chunk for of, chunk in shown if of == name} for name, _ in searched}


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


def _merged(
    named: list[tuple[str, SearchResponse]],
    body: SearchRequest,
    merge: Merge,
    narrowed: Sequence[Narrowing],
    why_of: str | None = None,
) -> SearchResponse:
    """The answers of several vaults as one: their results in the order the merge put their hits (`merge`),
    cut to what it shows (top_k results, or the chunks of top_k notes); facts by score. Its related notes
    are read after (`_related`)."""
    names = [name for name, _ in named]
    answers = [answer for _, answer in named]
    presented = {
        (name, result.chunk_id): result
        for name, answer in named
        for result in (
            [chunk for group in answer.groups or () for chunk in group.chunks]
            if body.group_by == "note"
            else answer.results
        )
    }
    # every result presented, in the merge's order: those shown, and with `explain` the ones it cut too
    every = [presented[key] for key in merge.order if key in presented]
    results = every[: merge.shown]
    groups = None
    if body.group_by == "note":
        by_note = {(name, group.note_path): group for name, answer in named for group in answer.groups or ()}
        groups = [by_note[key] for key in dict.fromkeys((r.vault, r.note_path) for r in results)]
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
    """The first vault's suggestion (the surest result's vault first) whose line a kept result holds: each
    vault's is of its own first hits, kept or not (`present_found`), and one from a hit the merge cut would
    offer to remember a fact the agent was not shown."""
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
