"""/context, /index/status, a note's read and a fact kept, over the vaults a request names (issue 46), for
every door (the routes, the MCP tools, the CLI in-process); /search is vault_search.py. The vaults are asked
in the thread pool (`fan_out`), a context block's entries merged as domain/ranking/vault_merge.py says (each
vault's order kept, by calibrated `confidence` weighed by how sure each vault is, the vaults holding more of
what the question names first: not one sort by confidence), a vault that cannot answer named in
`missing_vaults` while the others answer. A request asking one vault is that vault's answer as it was
before vaults, naming its vault.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TypeVar

from starlette.concurrency import run_in_threadpool

from backend.api.answers import (
    context_answer,
    context_query,
    context_response,
    links_answer,
    note_answer,
    remember_answer,
)
from backend.api.context_schemas import ContextRequest, ContextResponse
from backend.api.errors import status_of
from backend.api.memory_schemas import MemoryIn, MemoryStored
from backend.api.note_schemas import NoteOut
from backend.api.request_caps import check_filter_caps
from backend.api.schemas import (
    MissingVaultOut,
    NoteLinksOut,
)
from backend.api.status_answer import status_answer
from backend.api.status_schemas import IndexStatus, VaultStateOut
from backend.application.operations import gather_context
from backend.application.recall.context import ContextQuery, VaultCandidates, assemble
from backend.bootstrap import Services
from backend.domain.errors import KnowledgeBridgeError, VaultUnavailableError
from backend.domain.recall.context_packing import labels_of_vault
from backend.vault_set import Library, VaultFailure

log = logging.getLogger(__name__)
T = TypeVar("T")


async def fan_out(
    library: Library, names: Sequence[str], work: Callable[[Services], T]
) -> tuple[list[tuple[str, T]], list[MissingVaultOut]]:
    """`work` on each named vault, in the thread pool; the vaults that could not answer apart. A request
    the service refuses (4xx: a bad field, too many filters) is refused whole; a vault that fails (5xx:
    index unavailable, folder gone) is missing, unless it is the only one asked: then its error is the
    answer, as with one vault.

    Vaults whose stores run in this process are asked in turn, in one trip (`in_turn`): the embedded store
    holds the interpreter while it searches, so two threads overlap nothing and only take turns at a price
    (the Zettelkasten beside LoCoMo dev over HTTP: 14.9 -> 14.3 ms p50, the code before beside this in the
    same rounds, docs/measurements.md). Vaults on a Qdrant server are asked at once, each in its own trip,
    their waits on the network overlapping."""
    if in_process(library, names):
        return await run_in_threadpool(in_turn, library, names, work)
    alone = len(names) == 1
    outcomes = await asyncio.gather(
        *(run_in_threadpool(ask_vault, library, name, work, alone) for name in names)
    )
    return _sorted_out(outcomes)


def in_process(library: Library, names: Sequence[str]) -> bool:
    """Whether the vaults are best asked in turn, in one trip to the thread pool: one alone, or every one
    whose store runs in this process."""
    return len(names) == 1 or all(
        library.services[n].settings.qdrant_url is None for n in names if n in library.services
    )


def in_turn(
    library: Library, names: Sequence[str], work: Callable[[Services], T]
) -> tuple[list[tuple[str, T]], list[MissingVaultOut]]:
    """`fan_out` in this thread: each vault in turn."""
    alone = len(names) == 1
    return _sorted_out([ask_vault(library, name, work, alone) for name in names])


def _sorted_out(
    outcomes: Sequence[tuple[str, T | None, VaultFailure | None]],
) -> tuple[list[tuple[str, T]], list[MissingVaultOut]]:
    answered = [(name, value) for name, value, failure in outcomes if failure is None and value is not None]
    missing = [MissingVaultOut(**vars_of(f)) for _, _, f in outcomes if f is not None]
    if not answered:
        said = "; ".join(f"{m.vault}: {m.detail}" for m in missing)
        raise VaultUnavailableError(f"no vault asked could answer ({said})")
    return answered, missing


def ask_vault(
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
