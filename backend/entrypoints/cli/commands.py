"""The CLI's commands that read or change the index: each asks the running service over HTTP when one
answers, and works on DATA_DIR in this process only when none does (`target`), with the same answer
either way (the in-process path calls the very functions the routes answer with, on the same `Library` of
vaults: with VAULTS, `--vault NAME` and `--vaults A,B` mean what the routes' `vault` and `vaults` mean)."""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from dataclasses import asdict
from typing import Any
from urllib.parse import quote

from pydantic import BaseModel

from backend.bootstrap import Services
from backend.config import PROGRAM, Settings
from backend.domain.errors import KnowledgeBridgeError, MemoryNotFoundError, NoteAmbiguousError
from backend.entrypoints.cli.asked_vaults import (
    each_vault,
    labelled,
    of_vault,
    served,
    vault_names,
    vault_param,
)
from backend.entrypoints.cli.output import (
    LIST_LIMIT,
    Progress,
    print_json,
    show_links,
    show_memories,
    show_note,
    show_search,
    show_status,
    show_verify,
    vectors_left,
    warn,
)
from backend.entrypoints.cli.target import (
    RemoteService,
    asking,
    check_same_vault,
    find_service,
    open_local,
    say,
    working_here,
)
from backend.entrypoints.cli.vaults import in_vault, lookup_settings, open_library, own_settings, several
from backend.vault_set import Library

DRIFT_EXIT = 3  # `verify` found drift (1 is "could not check": an error)
EMPTY_EXIT = 4  # `--strict` and the vault gave no note to index
POLL_SECONDS = 0.2  # following a job of the service: there is no event to await across HTTP
MEMORY_PAGE = 500  # `memory list` shows the first page, the largest the service gives

Local = Callable[[Library], Any]
# A job stopped by Ctrl+C: a sync keeps each note it wrote; a rebuild's new index is dropped unswitched
STOPPED = {
    "index": f"the notes indexed so far are kept: `{PROGRAM} index` goes on from there",
    "sync": f"the notes indexed so far are kept: `{PROGRAM} sync` goes on from there",
    "rebuild": f"the index stays as it was: `{PROGRAM} rebuild` starts again",
}


def answer(
    settings: Settings, args: argparse.Namespace, method: str, path: str, local: Local, **request: Any
) -> Any:
    """The service's answer to `method path`, or the same answer computed in this process."""
    service, lookup = find_service(lookup_settings(settings), getattr(args, "url", None))
    if service is not None:
        try:
            asking(service)
            check_same_vault(service, args.vault)
            return service.request(method, path, **request)
        finally:
            service.close()
    working_here(settings, lookup, "reading")
    library = open_library(settings)
    try:
        result = local(library)
        return result.model_dump(mode="json") if isinstance(result, BaseModel) else result
    finally:
        library.close()


def _read_vault(settings: Settings, args: argparse.Namespace, path: str, local: Local) -> Any:
    """The answer to `GET path` for the vault `--vault NAME` names, from the service or computed here."""
    return answer(settings, args, "GET", path, local, params=vault_param(args))


# -- reading -------------------------------------------------------------------------------------------


def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    import anyio

    from backend.api.input_types import request_from
    from backend.api.schemas import SearchRequest
    from backend.api.vault_search import search_vaults

    body = request_from(
        SearchRequest,
        query=args.query,
        top_k=args.top_k,
        mode=args.mode,
        folders=args.folder or None,
        tags=args.tag or None,
        date_from=args.date_from,
        date_to=args.date_to,
        vaults=args.vaults or ([args.vault_name] if args.vault_name else None),
    )
    found = answer(
        settings,
        args,
        "POST",
        "/search",
        lambda library: anyio.run(search_vaults, library, body)[0],
        body=body.model_dump(mode="json", exclude_unset=True),
    )
    # with several vaults every result names its own, even within one: the lines read the same either way
    named = several(settings) or len(args.vaults or ()) > 1
    print_json(found) if args.json else show_search(found, name_vaults=named)
    return 0


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    import anyio

    from backend.api.vault_answers import status_vaults

    status = _read_vault(
        settings, args, "/index/status", lambda library: anyio.run(status_vaults, library, args.vault_name)
    )
    print_json(status) if args.json else show_status(status)
    return 0


def cmd_verify(settings: Settings, args: argparse.Namespace) -> int:
    """With VAULTS and no `--vault`: every vault's report, each headed by its vault (JSON: a list)."""
    from backend.api.status_answer import verify_answer

    covered = each_vault(settings, args)
    per_vault = args.vault_name is None and len(covered) > 1
    reports = []
    for each in covered:
        report = _read_vault(
            settings,
            each,
            "/index/verify",
            lambda library, e=each: verify_answer(library.get(e.vault_name)[1]),
        )
        reports.append({"vault": each.vault_name, **report} if per_vault else report)
    if args.json:
        print_json(reports if per_vault else reports[0])
    for report in () if args.json else reports:
        if per_vault:
            print(f"vault {report['vault']}:")
        show_verify(report)
    return 0 if all(report["consistent"] for report in reports) else DRIFT_EXIT


def cmd_note(settings: Settings, args: argparse.Namespace) -> int:
    from backend.api.vault_answers import read_note

    args.path = in_vault(settings, args, args.path)
    params = {"start_line": args.start_line, "end_line": args.end_line, **vault_param(args)}

    def local(library: Library) -> Any:
        return read_note(library, args.path, args.vault_name, args.start_line, args.end_line)

    note = answer(
        settings,
        args,
        "GET",
        f"/note/{quote(args.path, safe='/')}",
        local,
        params={k: v for k, v in params.items() if v is not None},
    )
    print_json(note) if args.json else show_note(note, name_vault=labelled(settings, args))
    return 0


def cmd_links(settings: Settings, args: argparse.Namespace) -> int:
    from backend.api.vault_answers import read_links

    args.path = in_vault(settings, args, args.path)

    def local(library: Library) -> Any:
        return read_links(library, args.path, args.vault_name)

    links = _read_vault(settings, args, f"/note/{quote(args.path, safe='/')}/links", local)
    print_json(links) if args.json else show_links(links, name_vault=labelled(settings, args))
    return 0


def cmd_memory(settings: Settings, args: argparse.Namespace) -> int:
    from backend.api.input_types import request_from
    from backend.api.memory_schemas import MemoryIn
    from backend.api.vault_answers import remember_fact

    if args.action == "remember":
        args.source = in_vault(settings, args, args.source)
        body = request_from(
            MemoryIn, key=args.key, value=args.value, source=args.source, vault=args.vault_name
        )

        def keep(library: Library) -> Any:
            return remember_fact(library, body)

        stored = answer(settings, args, "POST", "/memory", keep, body=body.model_dump(exclude_none=True))
        print_json(stored) if args.json else print(
            f"{'remembered' if stored['created'] else 'replaced'} {stored['fact']['key']}"
        )
        return 0
    if args.action == "forget":
        return _forget(settings, args)
    pages = _fact_pages(settings, args)
    # one vault: its page as the service answers it; several: every vault's facts, each naming its vault
    facts = pages[0] if len(pages) == 1 else {"facts": [f for p in pages for f in p["facts"]]}
    print_json(facts) if args.json else show_memories(facts["facts"], name_vault=labelled(settings, args))
    return 0


def _fact_pages(settings: Settings, args: argparse.Namespace) -> list[Any]:
    """The first page of remembered facts of each vault a read covers (`_each_vault`), each fact naming its
    vault."""
    return [_fact_page(settings, each, 0) for each in each_vault(settings, args)]


def _fact_page(settings: Settings, each: argparse.Namespace, offset: int) -> Any:
    """One page of the vault `each` names, from `offset`, each fact naming its vault."""
    from backend.api.answers import memories_answer

    def listed(library: Library) -> Any:
        name, services = library.get(each.vault_name)
        return memories_answer(services, MEMORY_PAGE, offset, name)

    params = {"limit": MEMORY_PAGE, "offset": offset, **vault_param(each)}
    return answer(settings, each, "GET", "/memory", listed, params=params)


def _forget(settings: Settings, args: argparse.Namespace) -> int:
    """Forget the fact of `args.key`: of the vault `--vault` names; with VAULTS and none named, of the one
    vault that holds it (two holding it are two facts: which is meant must be said)."""
    from backend.api.answers import forget_answer

    vault = args.vault_name
    if vault is None and (settings.vaults or len(served(settings, args)) > 1):
        holders = []
        for each in each_vault(settings, args):
            offset: int | None = 0
            while offset is not None:  # every page: a vault may remember more than a page of facts
                page = _fact_page(settings, each, offset)
                holders += [f["vault"] for f in page["facts"] if f["key"] == args.key]
                offset = page.get("next_offset")
        if len(holders) > 1:
            raise NoteAmbiguousError(
                f"the vaults {', '.join(holders)} each remember {args.key!r}",
                suggestion=f"Name the one to forget it in: `{PROGRAM} memory forget {args.key} --vault "
                f"{holders[0]}`.",
            )
        if not holders:
            raise MemoryNotFoundError(f"no vault remembers {args.key!r}")
        vault = holders[0]
    each = of_vault(args, vault)
    gone = answer(
        settings,
        each,
        "DELETE",
        f"/memory/{quote(args.key, safe='')}",
        lambda library: forget_answer(library.get(vault)[1], args.key),
        params=vault_param(each),
    )
    print_json(gone) if args.json else print(f"forgot {gone['key']}")
    return 0


# -- index jobs ----------------------------------------------------------------------------------------


def cmd_job(settings: Settings, args: argparse.Namespace, kind: str) -> int:
    """`index`, `sync`, `rebuild`, `calibrate`: by the running service of the vault when one answers, else
    here; with progress. With VAULTS: of the vault `--vault` names, else of each vault in turn
    (`job_vaults` says why), one failing vault not stopping the others' (exit 1 after, naming it)."""
    names = vault_names(settings, args)
    if names == [None]:
        return _job(settings, args, kind, None)
    worst, failed = 0, []
    for name in names:
        try:
            worst = max(worst, _job(settings, args, kind, name))
        except KnowledgeBridgeError as exc:
            warn(f"the {kind} of the vault {name} failed ({exc.code}): {exc.detail}")
            failed.append(name)
    if failed:
        raise KnowledgeBridgeError(
            f"the {kind} failed in: {', '.join(failed)} (said above)",
            suggestion=f"Run `{PROGRAM} {kind} --vault {failed[0]}` again once the cause is fixed.",
        )
    return worst


def _job(settings: Settings, args: argparse.Namespace, kind: str, vault: str | None) -> int:
    started = time.perf_counter()
    own = own_settings(settings, vault)
    service, lookup = find_service(lookup_settings(settings), getattr(args, "url", None))
    if service is not None:
        remote = kind if kind in ("rebuild", "calibrate") else "sync"
        try:
            asking(service, f" to {remote}" + (f" the vault {vault}" if vault else ""))
            check_same_vault(service, args.vault)
            status = _remote_job(service, remote, vault)
        finally:
            service.close()
        by = f"by the service at {service.url} "
    else:
        working_here(own, lookup, "indexing")
        status, kind = _local_job(own, kind, vault)
        by = ""
    summary = _summary(status, kind, by, time.perf_counter() - started, own, strict=args.strict, vault=vault)
    return summary


def _remote_job(service: RemoteService, kind: str, vault: str | None = None) -> dict[str, Any]:
    params = {"vault": vault} if vault else None
    accepted = service.request("POST", f"/index/{kind}", params=params)
    with Progress(f"{kind} {vault}" if vault else kind) as progress:
        try:
            while True:
                status = service.request("GET", "/index/status", params=params)
                job = status.get("job") or {}
                phase, done, total = (
                    str(job.get("phase", "")),
                    int(job.get("done", 0)),
                    int(job.get("total", 0)),
                )
                progress.update(phase, done, total, vectors_left(job))
                if job.get("id") != accepted["job_id"] or job.get("finished_at") is not None:
                    break
                time.sleep(POLL_SECONDS)
        except KeyboardInterrupt:
            say(f"stopped following; the service goes on with the {kind} (`{PROGRAM} status` shows it)")
            raise
    if job.get("id") != accepted["job_id"]:  # another began the moment ours ended: ours is the one before
        job = status.get("previous_job") or {}
    if job.get("id") == accepted["job_id"] and job.get("phase") == "failed":
        raise KnowledgeBridgeError(f"the {kind} failed in the service: {job.get('error')}")
    if job.get("id") == accepted["job_id"] and job.get("phase") == "cancelled":
        raise KnowledgeBridgeError(f"the {kind} was cancelled in the service before it ended (stopped)")
    return status


def _local_job(settings: Settings, kind: str, vault: str | None = None) -> tuple[dict[str, Any], str]:
    """The job run here and its kind: an `index` of an outdated index is a rebuild (AUTO_REEMBED)."""
    from backend.api.status_answer import status_answer

    services = open_local(settings)
    try:
        if kind == "calibrate":  # on the vault as it is: indexed and embedded first
            run_job(services, services.supervisor.index_job(), vault)
        elif kind == "index" and settings.auto_reembed:
            kind = services.supervisor.index_job()
        run_job(services, kind, vault)
        return status_answer(services).model_dump(mode="json"), kind
    finally:
        services.close()


def run_job(services: Services, kind: str, vault: str | None = None) -> None:
    """Run an index job in this process, with progress (labelled with its vault when several are in
    play); its error, with its own code, when it fails."""
    services.supervisor.start_job(kind)
    with Progress(f"{kind} {vault}" if vault else kind) as progress:
        try:
            while not services.jobs.wait(timeout=POLL_SECONDS):
                _show(progress, services)
            _show(progress, services)
        except KeyboardInterrupt:  # whether the work done is lost, and what to type next
            if kind in STOPPED:
                say(f"{kind}: stopped; {STOPPED[kind]}")
            raise
    job = services.jobs.current
    if job is not None and job.phase == "failed":
        if services.jobs.last_error is not None:
            raise services.jobs.last_error  # with its own code and suggestion
        raise KnowledgeBridgeError(f"{kind} failed: {job.error}")


def _show(progress: Progress, services: Services) -> None:
    job = services.jobs.current
    if job is not None:
        progress.update(job.phase, job.done, job.total, vectors_left(asdict(job)))


def _calibrated(status: dict[str, Any], vault: str | None = None) -> int:
    gate = status.get("recall_calibration") or {}
    source, model = gate.get("source"), gate.get("model")
    if vault:
        print(f"{vault}:", end=" ")
    if source == "fitted":
        print(
            f"recall gate fitted for {model} on {gate.get('chunks')} chunks with {gate.get('probes')} probe "
            f"turns at {gate.get('fitted_at')}"
        )
    elif source == "shipped":
        print(f"{model} has shipped recall weights: nothing to fit")
    else:
        print(f"no recall gate fitted for {model or 'a keyword-only index'}: keyword-only weights in force")
    return 0


def _summary(
    status: dict[str, Any],
    kind: str,
    by: str,
    seconds: float,
    settings: Settings,
    *,
    strict: bool,
    vault: str | None = None,
) -> int:
    if kind == "calibrate":
        return _calibrated(status, vault)
    verb = {"index": "indexed", "sync": "synced", "rebuild": "rebuilt"}[kind]
    failed = status.get("failed_files") or []
    print(
        f"{vault + ': ' if vault else ''}{verb} {status['indexed_notes']} notes, "
        f"{status['indexed_chunks']} chunks {by}in {seconds:.1f}s: "
        f"{status['dense_pending']} waiting for dense vectors, {len(failed)} problems"
    )
    for problem in failed[:LIST_LIMIT]:
        print(f"  {problem['path']}: {problem['reason']}")
    if len(failed) > LIST_LIMIT:
        print(f"  … and {len(failed) - LIST_LIMIT} more (`{PROGRAM} status --json` lists them all)")
    if status["indexed_notes"] == 0:
        folder = status.get("vault_path") or settings.vault_path
        warn(
            f"the vault {folder} gave no note to index: is it the right folder (--vault, VAULT_PATH)? "
            "Notes are .md files; hidden folders and DENY_DIRS are skipped"
        )
        return EMPTY_EXIT if strict else 0
    return 0
