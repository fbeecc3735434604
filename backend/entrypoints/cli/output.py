"""What the CLI prints: answers for people (or JSON), progress for long work, and errors with CLI advice.

Answers go to stdout; progress, warnings and where the command ran go to stderr, so `search ... | head` and
`status --json | jq` get the answer alone.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Mapping
from types import TracebackType
from typing import Any, TextIO

from tqdm import tqdm

from backend.config import PROGRAM

SNIPPET_CHARS = 200
LIST_LIMIT = 20
PLAIN_LINE_SECONDS = 5.0  # without a terminal: one progress line per phase change, else at most this often


# The service's suggestions speak HTTP (POST /index/rebuild, /docs); at the terminal the CLI says the command.
CLI_ADVICE = {
    "INDEX_NOT_READY": f"Index the vault first (`{PROGRAM} index`), or wait for the running service's first "
    f"index (`{PROGRAM} status`).",
    "EMBEDDING_MODEL_MISMATCH": f"Rebuild the index with the configured model: `{PROGRAM} rebuild`.",
    "INDEX_CORRUPTED": f"Rebuild the index from the vault: `{PROGRAM} rebuild` (the vault is untouched).",
    "REINDEX_IN_PROGRESS": f"Wait for the running job to finish (`{PROGRAM} status`), then try again.",
    "STORAGE_FULL": f"Free disk space where DATA_DIR lives, then `{PROGRAM} sync`.",
    "VALIDATION_ERROR": f"Check the command's options: `{PROGRAM} <command> --help`.",
    "UNAUTHORIZED": "Set API_KEY (environment or .env) to the key the service was started with.",
    "MEMORY_NOT_FOUND": f"List the remembered facts with `{PROGRAM} memory list`.",
    "SERVER_BUSY": "The service is answering as many requests as it may: run the command again in a few "
    "seconds.",
    "EMBEDDER_UNAVAILABLE": f"Check the embedding service (`{PROGRAM} status` says why), or search with "
    "`--mode keyword` meanwhile.",
}
NOTE_ADVICE = f'Check the path, or find the note with `{PROGRAM} search "..."`.'
# The request fields a VALIDATION_ERROR names, as the options a person typed (`--top-k: at least 1`)
OPTIONS = {
    "top_k": "--top-k",
    "date_from": "--from",
    "date_to": "--to",
    "folders": "--folder",
    "tags": "--tag",
    "start_line": "--start-line",
    "end_line": "--end-line",
    "source": "--source",
}


def cli_advice(code: str, suggestion: str) -> str:
    """What to do, said as commands to type rather than requests to send."""
    if code == "NOTE_NOT_FOUND":  # the service's own suggestion names the closest notes: keep it
        return suggestion if suggestion.startswith(("Did you mean", "Use ")) else NOTE_ADVICE
    if code == "INDEX_UNAVAILABLE" and "--url" in suggestion:
        return suggestion
    if code == "NOTE_AMBIGUOUS":  # the vaults to choose from are the service's; the option is ours
        return suggestion.replace("with vault set to", "with --vault set to")
    if code == "UNKNOWN_VAULT":  # at the terminal the vaults are VAULTS', served or not
        return suggestion.replace("the vaults this service serves", "the vaults there are")
    return CLI_ADVICE.get(code, suggestion)


def cli_detail(code: str, detail: str) -> str:
    """An error's detail in the options a person types: a VALIDATION_ERROR names request fields (`top_k`),
    a NOTE_AMBIGUOUS or UNKNOWN_VAULT the route's `vault`."""
    if code in ("NOTE_AMBIGUOUS", "UNKNOWN_VAULT"):
        return detail.replace("`vault`", "`--vault`")
    if code != "VALIDATION_ERROR":
        return detail
    # a field's name standing alone, never a word of a path the person typed ("/notes/source/tags")
    alone = r"(?<![\w/.:-])(" + "|".join(OPTIONS) + r")(?![\w/.-])"
    return re.sub(alone, lambda field: OPTIONS[field.group(1)], detail)


def show_error(code: str, detail: str, suggestion: str, command: str) -> None:
    """`error (CODE): ...` and `what to do: ...` on stderr, in the options and commands a person types."""
    print(f"error ({code}): {cli_detail(code, detail)}", file=sys.stderr)
    advice = cli_advice(code, suggestion).replace("<command>", command)
    if advice:
        print(f"  what to do: {advice}", file=sys.stderr)


def print_json(value: Any) -> None:
    print(json.dumps(value, indent=2, ensure_ascii=False))


def warn(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr, flush=True)


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat[:SNIPPET_CHARS] + ("…" if len(flat) > SNIPPET_CHARS else "")


def _when(moment: str | None) -> str:
    return moment.replace("T", " ").split(".")[0].removesuffix("Z") + " UTC" if moment else "-"


# -- answers -----------------------------------------------------------------------------------------


def _in(item: Mapping[str, Any], named: bool) -> str:
    """`[work] ` before a note's path when several vaults are in play, else nothing (as before vaults)."""
    return f"[{item['vault']}] " if named and item.get("vault") else ""


def show_search(answer: dict[str, Any], *, name_vaults: bool = False) -> None:
    """`name_vaults`: several vaults asked; a result list that mixes vaults names them whatever it says
    (a service asked at --url may serve several the command does not know of)."""
    for warning in answer.get("warnings", []):
        warn(warning)
    for missing in answer.get("missing_vaults") or []:
        warn(f"the vault {missing['vault']} did not answer ({missing['error_code']}): {missing['detail']}")
    results = answer.get("results", [])
    named = name_vaults or len({hit.get("vault") for hit in results}) > 1
    if not results:
        print("no results")
    for rank, hit in enumerate(results, 1):
        where = f"{_in(hit, named)}{hit['note_path']}:{hit['start_line']}-{hit['end_line']}"
        print(f"{rank}. {where}  ({hit['score']:.3f})")
        if hit.get("heading_context"):
            print(f"   {hit['heading_context']}")
        print(f"   {_snippet(hit['content'])}")
    related = answer.get("related_notes", [])
    if related:
        names = ", ".join(f"{_in(r, named)}{r['note_path']} ({r['relationship']})" for r in related[:5])
        more = f" and {len(related) - 5} more" if len(related) > 5 else ""
        print(f"related: {names}{more}")


def show_status(status: dict[str, Any]) -> None:
    """One vault's state; with several vaults (the status lists them in `vaults`), each one's in turn."""
    states = status.get("vaults")
    if not states:
        _show_one_status(status)
        return
    for number, state in enumerate(states):
        if number:
            print()
        print(f"== {state['vault']} ==")
        if state.get("available") and state.get("status"):
            _show_one_status(state["status"])
        else:
            print(f"unavailable ({state.get('error_code')}): {state.get('detail')}")
            print(f"path  {state.get('path') or '-'}")


def _show_one_status(status: dict[str, Any]) -> None:
    links = status.get("links") or {}
    embedder = status.get("embedder") or {}
    store = "embedded store" if status.get("store") == "embedded" else f"Qdrant at {status.get('store')}"
    store_state = "healthy" if status.get("store_healthy") else "UNREACHABLE"
    rows = [
        ("vault", status.get("vault_path", "")),
        (
            "index",
            f"{status['indexed_notes']} notes, {status['indexed_chunks']} chunks "
            f"(generation {status.get('generation') or '-'}, {store}, {store_state})",
        ),
        ("dense", f"{status.get('dense_pending', 0)} notes waiting for dense vectors"),
        (
            "links",
            f"{links.get('total', 0)} ({links.get('resolved', 0)} resolved, {links.get('unresolved', 0)} "
            f"to notes not created yet, {links.get('embeds', 0)} embeds)",
        ),
        ("last sync", _when(status.get("last_sync"))),
        ("watcher", _watcher(status)),
        ("embedder", _embedder(embedder)),
        ("languages", _languages(status.get("languages"))),
    ]
    if embedder.get("proposal"):
        rows.append(("proposal", embedder["proposal"]))
    job = status.get("job")
    if job:
        finished = f", finished {_when(job['finished_at'])}" if job.get("finished_at") else ""
        error = f": {job['error']}" if job.get("error") else ""
        left = f", {vectors_left(job)}" if vectors_left(job) and not job.get("finished_at") else ""
        rows.append(
            ("job", f"{job['kind']} {job['phase']} {job['done']}/{job['total']}{left}{finished}{error}")
        )
    failed = status.get("failed_files") or []
    files = len({problem["path"] for problem in failed})  # one file may have several problems
    rows.append(
        ("problems", f"{len(failed)} in {files} file{'s' if files > 1 else ''}" if failed else "none")
    )
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name:<{width}}  {value}")
    for problem in failed[:LIST_LIMIT]:
        print(f"  {problem['path']}: {problem['reason']}")
    if len(failed) > LIST_LIMIT:
        print(f"  … and {len(failed) - LIST_LIMIT} more (--json lists them all)")


def _watcher(status: dict[str, Any]) -> str:
    if not status.get("watcher_running"):
        error = status.get("watcher_error")
        return f"not running{f' ({error})' if error else ' (no service, or WATCH=false)'}"
    restarts, pending = status.get("watcher_restarts", 0), status.get("pending_changes", 0)
    return f"running ({restarts} restarts), {pending} changes pending"


def _embedder(embedder: dict[str, Any]) -> str:
    state = embedder.get("state") or ("ready" if embedder.get("healthy") else "not answering")
    line = f"{embedder.get('provider')} {embedder.get('model')}: {state}"
    error = embedder.get("error")
    if error:
        line += f" ({error['error_code']}: {error['detail']}; {error['suggestion']})"
    if embedder.get("reason"):
        line += f"; chosen: {embedder['reason']}"
    return line


def _languages(languages: dict[str, Any] | None) -> str:
    if not languages or not languages.get("sampled_notes"):
        return "not told (no note long enough in the sample)"
    shares = ", ".join(f"{lang} {share:.0%}" for lang, share in list(languages["shares"].items())[:5])
    return f"{shares} of {languages['sampled_notes']} sampled notes"


def show_verify(report: dict[str, Any]) -> None:
    print(
        f"{report['notes_on_disk']} notes on disk, {report['notes_indexed']} indexed "
        f"({report['indexed_chunks']} chunks, {report['dense_pending']} waiting for dense vectors)"
    )
    for finding in report["drift"]:
        print(f"drift: {finding['count']} {finding['kind']}")
        for path in finding["paths"]:
            print(f"  {path}")
    if report["pending_changes"]:
        print(f"note: the watcher has {report['pending_changes']} changes still to apply")
    print("consistent" if report["consistent"] else f"DRIFT: `{PROGRAM} sync` repairs it")


def show_note(note: dict[str, Any], *, name_vault: bool = False) -> None:
    for warning in note.get("warnings", []):
        warn(warning)
    span = f"lines {note['start_line']}-{note['end_line']} of {note['total_lines']}"
    print(f"{_in(note, name_vault)}{note['note_path']} ({span})")
    if note.get("obsidian_uri"):
        print(note["obsidian_uri"])
    print()
    print(note["content"])


def show_links(links: dict[str, Any], *, name_vault: bool = False) -> None:
    print(f"{_in(links, name_vault)}{links['note_path']}")  # its links never leave its vault
    for kind in ("outlinks", "backlinks"):
        print(f"{kind}: {len(links[kind])}")
        for linked in links[kind]:
            print(f"  {linked['note_path']}  (line {linked['line']})")
    for kind, label in (("unresolved", "not created yet"), ("attachments", "attachments")):
        if links.get(kind):
            print(f"{label}: {len(links[kind])}")
            for raw in links[kind]:
                print(f"  {raw['target']}  (line {raw['line']})")


def show_memories(facts: list[dict[str, Any]], *, name_vault: bool = False) -> None:
    if not facts:
        print("no remembered facts")
    for fact in facts:
        print(f"{fact['key']}: {fact['value']}  (from {_in(fact, name_vault)}{fact['source']})")


# -- progress ----------------------------------------------------------------------------------------


def vectors_left(job: Mapping[str, Any]) -> str:
    """'40,112 vectors left, about 9 min' while a job embeds (its `vectors_left`, `eta_seconds`); else ''."""
    vectors, seconds = job.get("vectors_left"), job.get("eta_seconds")
    if job.get("phase") != "embedding" or vectors is None:
        return ""
    return f"{vectors:,} vectors left" + (f", about {duration(seconds)}" if seconds is not None else "")


def duration(seconds: float) -> str:
    """A time left in words: seconds under 90 s, minutes under 90 min, else hours."""
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    if seconds < 5400:
        return f"{round(seconds / 60)} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """A bar on a terminal; plain lines otherwise (a log or CI gets one per phase, and at most one per
    PLAIN_LINE_SECONDS), both on stderr."""

    def __init__(self, label: str, unit: str = "note", stream: TextIO | None = None) -> None:
        self._label = label
        self._unit = unit
        self._stream = stream or sys.stderr
        self._bar = tqdm(total=0, unit=unit, desc=label, file=self._stream) if self._stream.isatty() else None
        self._said: tuple[str, int, int, str] | None = None
        self._said_at = 0.0
        self._state = ("", 0, 0, "")

    def update(self, phase: str, done: int, total: int, left: str = "") -> None:
        """`left`: what is left beyond the count (`vectors_left`'s words), shown after it."""
        self._state = (phase, done, total, left)
        if self._bar is not None:
            if self._bar.total != total:
                self._bar.reset(total=total)
            self._bar.n = done
            self._bar.set_postfix_str(f"{phase}, {left}" if left else phase, refresh=False)
            self._bar.refresh()
            return
        now = time.monotonic()
        if self._said is None or phase != self._said[0] or now - self._said_at >= PLAIN_LINE_SECONDS:
            self._line()
            self._said_at = now

    def advance(self) -> None:
        phase, done, total, left = self._state
        self.update(phase, done + 1, total, left)

    def _line(self) -> None:
        phase, done, total, left = self._state
        units = f"{self._unit[:-1]}ies" if self._unit.endswith("y") else f"{self._unit}s"  # queries, notes
        more = f", {left}" if left else ""
        print(f"{self._label}: {phase} {done}/{total} {units}{more}", file=self._stream, flush=True)
        self._said = self._state

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, trace: TracebackType | None
    ) -> None:
        if self._bar is not None:
            self._bar.close()
        elif self._said != self._state and kind is None:
            self._line()  # the last state, whatever the pace
