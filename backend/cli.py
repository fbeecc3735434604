"""`python -m backend serve|index|sync|search|status|verify|eval|migrate|prepare-model`, reading the
settings of the service."""

from __future__ import annotations

import argparse
import ipaddress
import json
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import httpx
from tqdm import tqdm

from backend.bootstrap import Services, build_services
from backend.config import Settings, SettingsError, load_settings
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.models import SearchMode

log = logging.getLogger("backend")

DRIFT_EXIT = 3  # `verify` found drift (1 is "could not check": an error)


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--vault", type=Path, help="vault folder (overrides VAULT_PATH)")
    common.add_argument("--data-dir", type=Path, help="index folder (overrides DATA_DIR)")

    parser = argparse.ArgumentParser(prog="python -m backend", description="Knowledge Bridge")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", parents=[common], help="run the HTTP service")
    serve.add_argument("--port", type=int, help="overrides PORT")
    serve.add_argument("--host", help="overrides HOST")

    index = sub.add_parser("index", parents=[common], help="index the vault and exit")
    index.add_argument("--rebuild", action="store_true", help="drop the index and build it anew")

    search = sub.add_parser("search", parents=[common], help="search the index")
    search.add_argument("query")
    search.add_argument("--top-k", type=int, default=5)
    search.add_argument("--mode", choices=[m.value for m in SearchMode], default="hybrid")

    sub.add_parser(
        "sync",
        parents=[common],
        help="compare the vault with the index and apply what changed (asks the "
        "running service when there is one)",
    )
    sub.add_parser("status", parents=[common], help="show what is indexed")
    verify = sub.add_parser(
        "verify",
        parents=[common],
        help="check the index against the vault and report drift (exit code 3 when there is some)",
    )
    verify.add_argument("--json", action="store_true", help="print the report as JSON")

    ev = sub.add_parser("eval", parents=[common], help="score search against judged queries")
    ev.add_argument("--queries", type=Path, required=True, help="JSON lines: id, text")
    ev.add_argument("--qrels", type=Path, required=True, help="TSV: query_id, note, relevance")
    ev.add_argument(
        "--mode", action="append", choices=[m.value for m in SearchMode], help="repeatable; default all three"
    )
    ev.add_argument("--limit", type=int, help="only the first N queries")
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

    prep = sub.add_parser("prepare-model", help="build the ONNX model ahead of time (the Docker image does)")
    prep.add_argument("--into", type=Path, required=True, help="folder for ONNX_MODEL_DIR")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    overrides: dict[str, object] = {"vault_path": args.vault, "data_dir": args.data_dir}
    if args.command == "serve":
        overrides |= {"port": args.port, "host": args.host}
    if args.command == "eval" and args.data_dir is None and args.vault is not None:
        # an evaluation vault gets its own index, never mixed into the service's
        overrides["data_dir"] = Path("data") / "eval" / args.vault.resolve().name
    return load_settings(**overrides)


def _open_services(settings: Settings) -> Services:
    services = build_services(settings)
    try:
        services.open(start_indexing=False)  # the command says what runs; `status` and `verify` only read
    except Exception:
        services.close()
        raise
    return services


def _run_job_with_progress(services: Services, kind: str) -> None:
    if kind != "rebuild":
        services.index.check_writable()  # a damaged or mismatched index says so, with what to do, at once
    body = services.index.rebuild if kind == "rebuild" else services.index.sync
    services.jobs.start(kind, body)
    with tqdm(total=0, unit="note", desc=kind, disable=None) as bar:
        while not services.jobs.wait(timeout=0.2):
            _show(bar, services)
        _show(bar, services)
    job = services.jobs.current
    if job is not None and job.phase == "failed":
        if services.jobs.last_error is not None:
            raise services.jobs.last_error  # with its own code and suggestion
        raise KnowledgeBridgeError(f"{kind} failed: {job.error}")


def _show(bar: tqdm, services: Services) -> None:
    job = services.jobs.current
    if job is None:
        return
    if bar.total != job.total:
        bar.reset(total=job.total)
    bar.set_postfix_str(job.phase, refresh=False)
    bar.n = job.done
    bar.refresh()


def _cmd_serve(settings: Settings) -> None:
    import uvicorn

    from backend.api.http_protocol import protocol_with_head_deadline
    from backend.main import create_app, open_services

    if not settings.api_key and not _is_loopback(settings.host):
        log.warning(
            "HOST=%s without API_KEY: anyone who can reach port %d can read the vault; set API_KEY "
            "(fine behind a loopback-only port mapping, as in docker-compose.yml)",
            settings.host,
            settings.port,
        )
    services = open_services(settings)  # fails here, in one line, if the index is locked or unusable
    uvicorn.run(
        create_app(settings, services=services),
        host=settings.host,
        port=settings.port,
        log_level=settings.log_level.lower(),
        timeout_keep_alive=settings.keep_alive_seconds,  # an idle connection is not kept for ever
        http=protocol_with_head_deadline(settings.request_body_timeout_seconds),  # nor a slow request head
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def _cmd_index(settings: Settings, rebuild: bool) -> None:
    services = _open_services(settings)
    try:
        started = time.perf_counter()
        _run_job_with_progress(services, "rebuild" if rebuild else "index")
        elapsed = time.perf_counter() - started
        print(
            f"indexed {services.index.indexed_notes} notes, {services.store.count()} chunks "
            f"in {elapsed:.1f}s ({len(services.index.failed_files)} problems)"
        )
        for problem in services.index.failed_files[:20]:
            print(f"  {problem.rel_path}: {problem.reason}")
    finally:
        services.close()


def _server_url(settings: Settings) -> str:
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::") else settings.host
    return f"http://{host}:{settings.port}"


def _headers(settings: Settings) -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {}


def _ask_server(settings: Settings, method: str, path: str, body: dict | None = None) -> dict | None:
    """The running service owns the embedded store (it is locked): ask it when it answers."""
    try:
        response = httpx.request(
            method, _server_url(settings) + path, json=body, headers=_headers(settings), timeout=60
        )
    except httpx.HTTPError:
        return None
    return response.json()  # type: ignore[no-any-return]


class ServerError(KnowledgeBridgeError):
    """An error envelope the running service answered with, raised as it came."""

    def __init__(self, answer: dict) -> None:
        super().__init__(str(answer.get("detail", "")), suggestion=str(answer.get("suggestion", "")))
        self.code = str(answer.get("error_code", "ERROR"))


def _checked(answer: dict) -> dict:
    if "error_code" in answer:
        raise ServerError(answer)
    return answer


def _cmd_search(settings: Settings, query: str, top_k: int, mode: str) -> None:
    answer = _ask_server(settings, "POST", "/search", {"query": query, "top_k": top_k, "mode": mode})
    if answer is None:
        services = _open_services(settings)
        try:
            outcome = services.search.search(query, top_k=top_k, mode=SearchMode(mode))
            answer = {
                "status": "degraded" if outcome.degraded else "healthy",
                "warnings": outcome.warnings,
                "results": [
                    {"score": h.score, "note_path": h.payload["note_path"], **h.payload} for h in outcome.hits
                ],
            }
        finally:
            services.close()
    _checked(answer)
    for warning in answer.get("warnings", []):
        print(f"warning: {warning}")
    for rank, hit in enumerate(answer["results"], 1):
        where = f"{hit['note_path']}:{hit['start_line']}-{hit['end_line']}"
        heading = f"  [{hit['heading_context']}]" if hit.get("heading_context") else ""
        print(f"{rank}. {hit['score']:.4f}  {where}{heading}")
        snippet = " ".join(hit["content"].split())
        print(f"   {snippet[:200]}{'…' if len(snippet) > 200 else ''}")


def _cmd_sync(settings: Settings) -> None:
    started = time.perf_counter()
    accepted = _ask_server(settings, "POST", "/index/sync")
    if accepted is not None:
        _checked(accepted)
        status = _wait_for_server_job(settings, accepted["job_id"])
        job = status.get("job") or {}
        if job.get("phase") == "failed":
            raise KnowledgeBridgeError(f"sync failed: {job.get('error')}")
        print(
            f"synced by the running service in {time.perf_counter() - started:.1f}s: "
            f"{status['indexed_notes']} notes, {status['indexed_chunks']} chunks, "
            f"{status['dense_pending']} waiting for dense vectors, {len(status['failed_files'])} problems"
        )
        return
    services = _open_services(settings)
    try:
        _run_job_with_progress(services, "sync")
        print(
            f"synced in {time.perf_counter() - started:.1f}s: {services.index.indexed_notes} notes, "
            f"{services.store.count()} chunks, {services.index.dense_pending} waiting for dense vectors, "
            f"{len(services.index.failed_files)} problems"
        )
    finally:
        services.close()


def _wait_for_server_job(settings: Settings, job_id: str) -> dict:
    with tqdm(total=0, unit="note", desc="sync", disable=None) as bar:
        while True:
            status = _ask_server(settings, "GET", "/index/status")
            if status is None:
                raise KnowledgeBridgeError("the service stopped answering during the sync")
            job = status.get("job") or {}
            if bar.total != job.get("total", 0):
                bar.reset(total=job.get("total", 0))
            bar.n = job.get("done", 0)
            bar.set_postfix_str(str(job.get("phase", "")), refresh=True)
            if job.get("id") != job_id or job.get("finished_at") is not None:
                return status
            time.sleep(0.2)  # polling a remote job: there is no event to await across HTTP


def _cmd_status(settings: Settings) -> None:
    answer = _ask_server(settings, "GET", "/index/status")
    if answer is None:
        services = _open_services(settings)
        try:
            from backend.api.routes.index import status_response

            answer = status_response(services).model_dump(mode="json")
        finally:
            services.close()
    print(json.dumps(_checked(answer), indent=2))


def _cmd_verify(settings: Settings, as_json: bool) -> int:
    answer = _ask_server(settings, "GET", "/index/verify")
    if answer is None:
        services = _open_services(settings)
        try:
            from backend.api.routes.index import verify_response

            answer = verify_response(services).model_dump(mode="json")
        finally:
            services.close()
    report = _checked(answer)
    if as_json:
        print(json.dumps(report, indent=2))
    else:
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
        print("consistent" if report["consistent"] else "DRIFT: `python -m backend sync` repairs it")
    return 0 if report["consistent"] else DRIFT_EXIT


def _cmd_eval(settings: Settings, args: argparse.Namespace) -> None:
    from backend.application.evaluation import evaluate
    from backend.infrastructure.eval_files import read_qrels, read_queries

    queries = read_queries(args.queries)[: args.limit]
    qrels = read_qrels(args.qrels)
    modes = [SearchMode(m) for m in (args.mode or ["hybrid", "dense", "keyword"])]
    services = _open_services(settings)
    try:
        _run_job_with_progress(services, "index")
        rows = []
        for mode in modes:
            started = time.perf_counter()
            with tqdm(total=len(queries), unit="query", desc=f"eval {mode.value}", disable=None) as bar:
                scores = evaluate(services.search, queries, qrels, mode, on_query=bar.update)
            rows.append((scores, time.perf_counter() - started))
    finally:
        services.close()
    if args.json:
        print(json.dumps([{**asdict(s), "mode": s.mode.value, "seconds": t} for s, t in rows], indent=2))
        return
    print(f"{'mode':<8} {'queries':>7} {'nDCG@10':>8} {'recall@10':>9} {'hit@3':>6} {'MRR@10':>7} {'q/s':>6}")
    for s, seconds in rows:
        qps = s.queries / seconds if seconds else 0.0
        print(
            f"{s.mode.value:<8} {s.queries:>7} {s.ndcg_10:>8.3f} {s.recall_10:>9.3f} "
            f"{s.hit_3:>6.3f} {s.mrr_10:>7.3f} {qps:>6.1f}"
        )
        if s.degraded:
            print(f"  warning: {s.degraded} {s.mode.value} queries fell back to keyword search")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "prepare-model":  # at image build time: no vault, no settings
        logging.basicConfig(
            level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
        )
        from backend.admin_cli import cmd_prepare_model

        try:
            cmd_prepare_model(args.into)
        except KnowledgeBridgeError as exc:
            print(f"error: {exc.detail}\n  suggestion: {exc.suggestion}", file=sys.stderr)
            return 1
        return 0
    try:
        settings = _settings(args)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per CLI request is noise
    try:
        if args.command == "serve":
            _cmd_serve(settings)
        elif args.command == "index":
            _cmd_index(settings, args.rebuild)
        elif args.command == "search":
            _cmd_search(settings, args.query, args.top_k, args.mode)
        elif args.command == "sync":
            _cmd_sync(settings)
        elif args.command == "status":
            _cmd_status(settings)
        elif args.command == "verify":
            return _cmd_verify(settings, args.json)
        elif args.command == "eval":
            _cmd_eval(settings, args)
        elif args.command == "migrate":
            from backend.admin_cli import cmd_migrate

            cmd_migrate(settings, args.to, args.api_key, args.replace)
    except SettingsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KnowledgeBridgeError as exc:
        print(f"error ({exc.code}): {exc.detail}\n  suggestion: {exc.suggestion}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
