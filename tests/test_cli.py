"""`python -m backend ...` as a user runs it: a real process, a real temp vault, the embedded store; once with
no service running (the CLI opens the index itself) and once against a running service (it asks over HTTP:
the embedded store is locked by the service)."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from backend.config import load_settings
from backend.domain import errors as domain_errors
from backend.domain.errors import KnowledgeBridgeError
from backend.entrypoints.app import create_app
from backend.entrypoints.cli import commands
from backend.entrypoints.cli import main as backend_cli_module
from backend.entrypoints.cli.main import main
from backend.entrypoints.cli.output import Progress, cli_advice, cli_detail, vectors_left
from backend.infrastructure.qdrant.edge_engine import IDENTITY_FILE
from scripts.measure.service import ServiceProcess
from tests.api.conftest import wait_for_job
from tests.backend_cli import REPO
from tests.fake_ollama import FakeOllama
from tests.ports import refused_url
from tests.secret_vault import QUERIES, leaks, write_secret_vault
from tests.vault_files import write_notes

NOTES = {
    "Projects/Database migration.md": "---\ntags: [work]\ndate: 2026-03-01\n---\n# Database migration\n\n"
    "## Decision\n\nWe move from MySQL to PostgreSQL. See [[Shopping list]].\n",
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n- PostgreSQL book\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """The CLI's `main` in this process (a child process per command costs seconds), as a user's shell
    would run it: keyword-only, and PORT 1 where no service answers unless a test says otherwise."""
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    monkeypatch.setenv("WATCH", "false")

    def call(*args: str, port: int = 1) -> Ran:
        monkeypatch.setenv("PORT", str(port))
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return call


def run(*args: str, tmp_path: Path, cli: Callable[..., Ran]) -> Ran:
    return cli(*args, "--data-dir", str(tmp_path / "data"))


# -- no service running: in this process --------------------------------------------------------------


def test_index_search_status_note_links_without_a_service(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    v = ["--vault", str(vault)]
    indexed = run("index", *v, tmp_path=tmp_path, cli=cli)
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.startswith("indexed 2 notes, ")
    # it says where it ran, and where it looked for the service of the vault
    assert f"no running service for the vault {vault}: indexing {tmp_path / 'data'} in" in indexed.stderr
    assert "http://127.0.0.1:1: nothing answers" in indexed.stderr
    assert "index: done 2/2 notes" in indexed.stderr  # plain progress lines: stderr is no terminal here

    found = run(
        "search", "PostgreSQL", "--folder", "Projects", "--tag", "work", *v, tmp_path=tmp_path, cli=cli
    )
    assert found.returncode == 0, found.stderr
    lines = found.stdout.splitlines()
    assert lines[0].startswith("1. Projects/Database migration.md:")  # path:start-end
    assert lines[1].strip() == "Database migration > Decision"  # the heading path
    assert "We move from MySQL to PostgreSQL" in lines[2]  # a snippet
    assert not any(line.startswith("2. ") for line in lines)  # the folder filter kept the list out
    dated = run(
        "search",
        "PostgreSQL",
        "--from",
        "2026-02-01",
        "--to",
        "2026-03-31",
        "--json",
        *v,
        tmp_path=tmp_path,
        cli=cli,
    )
    assert [r["note_path"] for r in json.loads(dated.stdout)["results"]] == ["Projects/Database migration.md"]

    status = run("status", *v, tmp_path=tmp_path, cli=cli)
    assert status.returncode == 0, status.stderr
    assert "2 notes" in status.stdout.splitlines()[1]
    assert "embedder" in status.stdout
    assert json.loads(run("status", "--json", *v, tmp_path=tmp_path, cli=cli).stdout)["indexed_notes"] == 2

    note = run("note", "Database migration", *v, tmp_path=tmp_path, cli=cli)  # by title: forgiving paths
    assert note.returncode == 0, note.stderr
    assert note.stdout.startswith("Projects/Database migration.md (lines 1-9 of 9)")
    assert "obsidian://open?vault=vault&file=Projects%2FDatabase%20migration.md" in note.stdout
    links = run("links", "Projects/Database migration", *v, tmp_path=tmp_path, cli=cli)
    assert "  Shopping list.md  (line 9)" in links.stdout


def test_a_note_is_read_by_the_files_own_path_as_a_shell_completes_it(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    v = ["--vault", str(vault)]
    (vault / "~scratch.md").write_text("# Scratch\n\nsorted last\n")  # a name with a tilde: no one's home
    assert run("index", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    scratch = run("note", "~scratch.md", *v, tmp_path=tmp_path, cli=cli)
    assert scratch.returncode == 0, scratch.stderr
    assert scratch.stdout.startswith("~scratch.md")
    own = vault / "Projects" / "Database migration.md"  # `note ~/Vault/Projects/<Tab>`: an absolute path
    note = run("note", str(own), *v, tmp_path=tmp_path, cli=cli)
    assert note.returncode == 0, note.stderr
    assert note.stdout.startswith("Projects/Database migration.md (lines 1-9 of 9)")
    links = run("links", str(own), *v, tmp_path=tmp_path, cli=cli)
    assert "  Shopping list.md  (line 9)" in links.stdout
    # a file outside the vault is no note of it, however it is named, nor is a link out of the vault
    outside = write_notes(tmp_path / "elsewhere", {"Shopping list.md": "# Not the vault's\n"})
    (vault / "Out.md").symlink_to(outside / "Shopping list.md")
    for path in (outside / "Shopping list.md", vault / "Out.md"):
        refused = run("note", str(path), *v, tmp_path=tmp_path, cli=cli)
        assert refused.returncode != 0, path
        assert "Not the vault's" not in refused.stdout


def test_index_rebuilds_an_index_cut_by_older_chunk_rules(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """After an upgrade that cuts chunks otherwise, `index` builds the index again, as a service starting
    on it would (AUTO_REEMBED); the next `index` only catches up."""
    v = ["--vault", str(vault)]
    assert run("index", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    for record in (tmp_path / "data").rglob(IDENTITY_FILE):  # as code before the rules were recorded wrote it
        stored = json.loads(record.read_text(encoding="utf-8"))
        del stored["chunk_rules"]
        record.write_text(json.dumps(stored), encoding="utf-8")

    again = run("index", *v, tmp_path=tmp_path, cli=cli)

    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith("rebuilt 2 notes, ")
    assert run("index", *v, tmp_path=tmp_path, cli=cli).stdout.startswith("indexed 2 notes, ")


def test_a_search_in_this_process_follows_a_map_line_as_the_service_does(
    tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    # `search` beside no service opens the index without syncing it: the map's link must still lead to
    # the note its line describes, as in the service, where a catch-up scan has listed the vault's files
    from tests.application.use_cases.test_pointer_rules import MAP, NOTES, QUESTION

    v = ["--vault", str(write_notes(tmp_path / "vault", NOTES))]
    assert run("index", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    found = run("search", QUESTION, "--json", *v, tmp_path=tmp_path, cli=cli)
    assert found.returncode == 0, found.stderr
    first = json.loads(found.stdout)["results"][0]
    assert first["note_path"] == "House/Boiler service.md"
    assert first["pointed_from"]["note_path"] == MAP


def test_a_filter_that_matches_nothing_says_so(vault: Path, tmp_path: Path, cli: Callable[..., Ran]) -> None:
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    nothing = run(
        "search", "PostgreSQL", "--folder", "Nonexistent", "--vault", str(vault), tmp_path=tmp_path, cli=cli
    )
    assert nothing.returncode == 0
    assert nothing.stdout == "no results\n"
    assert "warning: no indexed note is under the folder 'Nonexistent'" in nothing.stderr
    typo = run("search", "PostgreSQL", "--tag", "wrok", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    assert "warning: no indexed note has the tag 'wrok' (did you mean 'work'?)" in typo.stderr


def test_status_lists_the_problems_with_their_reasons(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    (vault / "Broken.md").write_bytes(b"# Broken\n\n\xff\xfe\x00 half a file\n")  # two problems, one file
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    status = run("status", "--vault", str(vault), tmp_path=tmp_path, cli=cli).stdout.splitlines()
    problems = next(i for i, line in enumerate(status) if line.startswith("problems "))
    assert status[problems].split(maxsplit=1)[1] == "2 in 1 file"
    assert status[problems + 1 :] == [
        "  Broken.md: invalid UTF-8: undecodable bytes replaced",
        "  Broken.md: binary NUL bytes removed",
    ]


def test_search_redacts_and_flags_exactly_as_the_service(tmp_path: Path, cli: Callable[..., Ran]) -> None:
    """The in-process search is the use case /search runs: the same redacted chunks, highlights and
    sensitivity flags, and no secret in either the JSON or the text a person reads."""
    vault = write_secret_vault(tmp_path / "vault")
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    printed = {}
    for query in QUERIES:
        shown = run("search", query, "--mode", "keyword", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
        as_json = run(
            "search", query, "--mode", "keyword", "--json", "--vault", str(vault), tmp_path=tmp_path, cli=cli
        )
        assert leaks(shown.stdout + as_json.stdout) == []
        printed[query] = json.loads(as_json.stdout)
    assert any(answer["sensitive_detected"] for answer in printed.values())
    assert any(r["redactions"] for answer in printed.values() for r in answer["results"])

    settings = load_settings(
        vault_path=vault, data_dir=tmp_path / "data", embedding_provider="none", watch=False
    )
    with TestClient(create_app(settings)) as client:
        wait_for_job(client)
        for query, answer in printed.items():
            served = client.post("/search", json={"query": query, "mode": "keyword"}).json()
            assert served["results"] == answer["results"], query
            assert served["sensitive_detected"] == answer["sensitive_detected"], query


def test_memory_without_a_service_answers_as_the_service(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """The in-process memory commands are the use cases /memory runs: the same page of facts (as JSON, the
    very body GET /memory answers) and the same answer to forgetting."""
    v = ["--vault", str(vault)]
    assert run("index", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    source = ["--source", "Projects/Database migration.md"]
    remembered = run(
        "memory", "remember", "db", "we chose PostgreSQL", *source, *v, tmp_path=tmp_path, cli=cli
    )
    assert remembered.stdout.strip() == "remembered db", remembered.stderr
    listed = json.loads(run("memory", "--json", *v, tmp_path=tmp_path, cli=cli).stdout)

    settings = load_settings(
        vault_path=vault, data_dir=tmp_path / "data", embedding_provider="none", watch=False
    )
    with TestClient(create_app(settings)) as client:
        assert client.get("/memory", params={"limit": 500}).json() == listed
    assert [f["key"] for f in listed["facts"]] == ["db"]
    # the source by the file's own path, as a shell completes it: kept as the vault's path
    own = ["--source", str(vault / "Shopping list.md")]
    assert run("memory", "remember", "milk", "oat", *own, *v, tmp_path=tmp_path, cli=cli).returncode == 0
    kept = json.loads(run("memory", "--json", *v, tmp_path=tmp_path, cli=cli).stdout)["facts"]
    assert {f["key"]: f["source"] for f in kept}["milk"] == "Shopping list.md"
    assert run("memory", "forget", "milk", *v, tmp_path=tmp_path, cli=cli).returncode == 0

    forgotten = run("memory", "forget", " db ", "--json", *v, tmp_path=tmp_path, cli=cli)
    assert json.loads(forgotten.stdout) == {"key": "db", "deleted": True}
    assert json.loads(run("memory", "--json", *v, tmp_path=tmp_path, cli=cli).stdout)["facts"] == []
    again = run("memory", "forget", "db", *v, tmp_path=tmp_path, cli=cli)
    assert again.returncode == 1
    assert "error (MEMORY_NOT_FOUND)" in again.stderr


def test_memory_remember_takes_its_source_as_note_takes_a_note(
    tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """`--source` took a path only, where `note` takes the path without .md, the title or an alias: now the
    same lookup (NoteReader.find), with the same errors, and the fact keeps the note's path."""
    vault = write_notes(
        tmp_path / "vault",
        {
            **NOTES,
            "Recipes/Tomato rasam.md": "---\naliases: [Rasam]\n---\n# Tomato rasam\n\nTamarind, late.\n",
            "Inbox.md": "---\naliases: [Errands]\n---\n# Inbox\n\nCall the plumber.\n",
            "Archive/Inbox.md": "---\naliases: [Errands]\n---\n# Inbox\n\nOld errands.\n",
        },
    )
    v = ["--vault", str(vault)]
    assert run("index", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    for key, source, path in [
        ("db", "Database migration", "Projects/Database migration.md"),  # its title
        ("rasam", "rasam", "Recipes/Tomato rasam.md"),  # its alias, in another letter case
        ("milk", "Shopping list", "Shopping list.md"),  # its path without .md
        ("rasam-file", str(vault / "Recipes" / "Tomato rasam.md"), "Recipes/Tomato rasam.md"),  # the file
    ]:
        kept = run("memory", "remember", key, "a fact", "--source", source, *v, tmp_path=tmp_path, cli=cli)
        assert kept.stdout.strip() == f"remembered {key}", kept.stderr
        facts = json.loads(run("memory", "--json", *v, tmp_path=tmp_path, cli=cli).stdout)["facts"]
        assert {f["key"]: f["source"] for f in facts}[key] == path

    def errors(ran: Ran) -> list[str]:
        return [line for line in ran.stderr.splitlines() if line.startswith(("error", "  what to do"))]

    for name in ("Errands", "Tomato rasm"):  # two notes answer to it; none does
        read = run("note", name, *v, tmp_path=tmp_path, cli=cli)
        kept = run("memory", "remember", "k", "v", "--source", name, *v, tmp_path=tmp_path, cli=cli)
        assert (read.returncode, kept.returncode) == (1, 1)
        assert errors(kept) == errors(read)
        assert errors(kept)[0].startswith("error (NOTE_NOT_FOUND)")
    ambiguous = run("memory", "remember", "k", "v", "--source", "Errands", *v, tmp_path=tmp_path, cli=cli)
    assert "Archive/Inbox.md, Inbox.md" in errors(ambiguous)[1]


def test_rebuild_starts_over_and_keeps_no_removed_note(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    (vault / "Shopping list.md").unlink()
    rebuilt = run("rebuild", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert rebuilt.stdout.startswith("rebuilt 1 notes, ")


def test_status_says_when_an_index_in_this_process_last_met_the_vault_and_how_it_ended(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """The job ended with the process that ran it: status, in another, said 'last sync  -' and no job, where
    after a sync by the service it said both. The data dir keeps the last job's end (last_job.json)."""
    v = ["--vault", str(vault)]
    assert run("index", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    rows = run("status", *v, tmp_path=tmp_path, cli=cli).stdout.splitlines()
    synced = next(row for row in rows if row.startswith("last sync"))
    assert synced != "last sync  -"
    assert synced.endswith(" UTC")
    job = next(row for row in rows if row.startswith("job"))
    assert job.startswith("job        index done 2/2, finished ")

    (vault / "Shopping list.md").unlink()  # a later job is the one shown, with its own end
    assert run("sync", *v, tmp_path=tmp_path, cli=cli).returncode == 0
    status = json.loads(run("status", "--json", *v, tmp_path=tmp_path, cli=cli).stdout)
    assert (status["job"]["kind"], status["job"]["phase"], status["indexed_notes"]) == ("sync", "done", 1)
    assert status["last_sync"] >= synced.removeprefix("last sync  ").removesuffix(" UTC").replace(" ", "T")
    assert status["last_indexed"] is not None


def test_status_without_the_service_says_what_its_last_sync_was(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """A sync by the service, then status once the service has stopped: what /index/status said of it."""
    settings = load_settings(
        vault_path=vault, data_dir=tmp_path / "data", embedding_provider="none", watch=False
    )
    with TestClient(create_app(settings)) as client:
        wait_for_job(client)
        assert client.post("/index/sync").status_code == 202
        served = wait_for_job(client)
    assert served["job"]["kind"] == "sync"
    status = json.loads(run("status", "--json", "--vault", str(vault), tmp_path=tmp_path, cli=cli).stdout)
    seen = ("job", "last_sync", "last_indexed")
    assert {k: status[k] for k in seen} == {k: served[k] for k in seen}


def test_eval_prints_the_metrics_for_each_mode_asked(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"id": "1", "text": "MySQL migration"}\n{"id": "2", "text": "basmati rice"}\n')
    qrels = tmp_path / "qrels.tsv"
    qrels.write_text(
        "query_id\tnote\trelevance\n1\tProjects/Database migration.md\t1\n2\tShopping list.md\t1\n"
    )
    result = run(
        "eval", "--vault", str(vault), "--queries", str(queries), "--qrels", str(qrels),
        "--mode", "keyword", "--json", tmp_path=tmp_path, cli=cli,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (scores,) = json.loads(result.stdout)
    assert scores["mode"] == "keyword"
    assert scores["queries"] == 2
    assert scores["ndcg_10"] == pytest.approx(1.0)
    assert scores["hit_3"] == pytest.approx(1.0)
    assert "searching 2/2 queries" in result.stderr  # plain progress lines: stderr is no terminal here


def test_a_missing_vault_names_the_flag(tmp_path: Path, cli: Callable[..., Ran]) -> None:
    result = run("index", "--vault", str(tmp_path / "nope"), tmp_path=tmp_path, cli=cli)
    assert result.returncode == 2
    assert "--vault" in result.stderr
    assert "VAULT_PATH" not in result.stderr
    assert "Traceback" not in result.stderr


def test_an_empty_vault_warns_and_fails_under_strict(tmp_path: Path, cli: Callable[..., Ran]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    lenient = run("index", "--vault", str(empty), tmp_path=tmp_path, cli=cli)
    assert lenient.returncode == 0
    assert "warning: the vault" in lenient.stderr
    assert "gave no note to index" in lenient.stderr
    strict = run("sync", "--strict", "--vault", str(empty), tmp_path=tmp_path, cli=cli)
    assert strict.returncode == 4, strict.stderr


def test_a_read_of_a_data_dir_never_indexed_says_so_and_makes_none(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """`status --data-dir` with a mistyped folder made it, with an empty index bound to the example vault:
    0 notes, exit 0, and the vault's own `index --data-dir` there refused later (VAULT_MISMATCH)."""
    typo = tmp_path / "typo"
    reads = (["status"], ["search", "milk"], ["note", "Shopping list"], ["memory", "list"], ["verify"])
    for command in reads:
        read = cli(*command, "--data-dir", str(typo))
        assert read.returncode == 1, (command, read.stdout)
        assert "error (INDEX_NOT_READY)" in read.stderr
        assert "python -m backend index" in read.stderr
        assert not typo.exists(), command
    indexed = cli("index", "--vault", str(vault), "--data-dir", str(typo))
    assert indexed.returncode == 0, indexed.stderr
    assert cli("status", "--data-dir", str(typo)).returncode == 0


@pytest.mark.parametrize("option", ["--vault", "--data-dir"])
def test_an_empty_folder_option_is_refused_not_read_as_the_working_folder(
    option: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # where an index would have been written, a vault read
    with pytest.raises(SystemExit) as stopped:
        main(["index", option, ""])
    assert stopped.value.code == 2
    assert f"argument {option}: empty: name a folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_errors_give_cli_advice_not_http_advice(vault: Path, tmp_path: Path, cli: Callable[..., Ran]) -> None:
    nothing = run("search", "milk", "--vault", str(vault), tmp_path=tmp_path, cli=cli)  # never indexed
    assert nothing.returncode == 1
    assert "error (INDEX_NOT_READY)" in nothing.stderr
    assert "python -m backend index" in nothing.stderr
    assert "POST /" not in nothing.stderr
    too_long = run("search", "x" * 2001, "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    assert "query: at most 2000 characters" in too_long.stderr
    assert "/docs" not in too_long.stderr
    assert "--help" in too_long.stderr
    gone = run("status", "--url", refused_url(), tmp_path=tmp_path, cli=cli)
    assert gone.returncode == 1
    assert "error (SERVICE_UNREACHABLE): no Knowledge Bridge service answers at" in gone.stderr


def test_a_bad_option_value_exits_2_naming_the_option(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    """As documented (exit 2: a bad setting or option), where these exited 1 naming the route's fields
    (`top_k: at least 1`) and pointed at `<command> --help`."""
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    for command, said in (
        (["search", "milk", "--top-k", "0"], "--top-k: at least 1"),
        (["search", "milk", "--from", "2026-13-01"], "--from: "),
        (["search", "milk", "--from", "2026-03-01", "--to", "2026-01-01"], "--from must not be after --to"),
        (["note", "Shopping list", "--start-line", "99"], "--start-line (99) is past the end"),
    ):
        bad = run(*command, "--vault", str(vault), tmp_path=tmp_path, cli=cli)
        assert bad.returncode == 2, (command, bad.stderr)
        assert said in bad.stderr, command
        assert f"`python -m backend {command[0]} --help`" in bad.stderr


@pytest.mark.parametrize(
    ("detail", "said"),
    [
        ("top_k: at least 1", "--top-k: at least 1"),
        ("date_from must not be after date_to", "--from must not be after --to"),
        # a word of a path the person typed is theirs: the path named must be the one typed
        ("/tmp/kb/source/tags: no vault/ folder", "/tmp/kb/source/tags: no vault/ folder"),
        ("vault:work/tags.md: not a note", "vault:work/tags.md: not a note"),
    ],
)
def test_a_bad_value_is_named_by_its_option_and_paths_are_left_as_typed(detail: str, said: str) -> None:
    assert cli_detail("VALIDATION_ERROR", detail) == said


@pytest.mark.parametrize(
    "error",
    [e for e in vars(domain_errors).values() if isinstance(e, type) and issubclass(e, KnowledgeBridgeError)],
)
def test_no_error_gives_http_advice_at_the_terminal(error: type[KnowledgeBridgeError]) -> None:
    """Whatever code the service answers with, the CLI's advice names commands and options, not requests."""
    advice = cli_advice(error.code, error.suggestion)
    for http in ("POST ", "GET ", "DELETE ", "/docs", "header", "Authorization", "mode="):
        assert http not in advice, (error.code, advice)


def test_a_closed_pipe_prints_no_traceback(vault: Path, tmp_path: Path, cli: Callable[..., Ran]) -> None:
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    command = [sys.executable, "-m", "backend", "status", "--json", "--vault", str(vault)]
    command += ["--data-dir", str(tmp_path / "data")]
    env = {**os.environ, "EMBEDDING_PROVIDER": "none", "PORT": "1"}
    reader_gone = subprocess.Popen(
        command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert reader_gone.stdout is not None
    assert reader_gone.stderr is not None
    reader_gone.stdout.close()  # `| head` that has read enough
    stderr = reader_gone.stderr.read()
    assert reader_gone.wait(timeout=120) == 141
    assert "Traceback" not in stderr
    assert "BrokenPipeError" not in stderr


def test_ctrl_c_prints_no_traceback(
    vault: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Ran]
) -> None:
    def interrupted(*_: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(backend_cli_module, "_run", interrupted)
    stopped = cli("status", "--vault", str(vault))
    assert stopped.returncode == 130
    assert stopped.stderr.strip() == "interrupted"


def test_ctrl_c_during_an_index_in_this_process_says_what_is_kept(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Ran]
) -> None:
    """It said "interrupted" alone: whether the work done was lost, and what to type next, went unsaid."""

    def ctrl_c(*_: object) -> None:  # as a Ctrl+C lands while the command follows the job
        raise KeyboardInterrupt

    monkeypatch.setattr(commands, "_show", ctrl_c)
    stopped = run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    assert stopped.returncode == 130
    assert "the notes indexed so far are kept: `python -m backend index` goes on from there" in stopped.stderr
    assert stopped.stderr.rstrip().endswith("interrupted")
    rebuilt = run("rebuild", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    assert "the index stays as it was: `python -m backend rebuild` starts again" in rebuilt.stderr


def test_ctrl_c_while_the_cli_still_loads_prints_no_traceback() -> None:
    """Ctrl+C in the first second or two, before `main` runs: `python -m backend` is still importing. The
    interrupt arrives at one import, made certain here instead of left to the timing of a signal."""
    ctrl_c_at_import = (
        "import runpy, sys\n"
        "class CtrlC:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'backend.entrypoints.cli.commands':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, CtrlC())\n"
        "sys.argv = ['backend', 'status']\n"
        "runpy.run_module('backend', run_name='__main__', alter_sys=True)\n"
    )
    stopped = subprocess.run(
        [sys.executable, "-c", ctrl_c_at_import], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert stopped.returncode == 130
    assert stopped.stderr.strip() == "interrupted"


def test_long_work_shows_a_bar_on_a_terminal(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Ran]
) -> None:
    main_side, terminal_side = pty.openpty()
    fcntl.ioctl(terminal_side, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))  # 100 columns
    drawn: list[bytes] = []

    def read_the_screen() -> None:
        while chunk := _read_or_end(main_side):
            drawn.append(chunk)

    reader = threading.Thread(target=read_the_screen)
    reader.start()
    with open(terminal_side, "w", encoding="utf-8") as terminal, monkeypatch.context() as patch:
        patch.setattr(sys, "stderr", terminal)
        indexed = run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    reader.join(timeout=60)
    os.close(main_side)
    screen = b"".join(drawn).decode("utf-8", "replace")
    assert indexed.returncode == 0
    assert "index: 100%|" in screen  # tqdm's bar, redrawn in place
    assert "2/2" in screen
    assert "index: done 2/2 notes" not in screen  # not the plain lines a log gets


def test_the_progress_of_an_embedding_pass_says_the_vectors_left_and_how_long() -> None:
    job = {"phase": "embedding", "vectors_left": 40112, "eta_seconds": 530.0}
    said = io.StringIO()
    with Progress("index", stream=said) as progress:
        progress.update("indexing", 10, 10, vectors_left({**job, "phase": "indexing"}))
        progress.update("embedding", 3, 10, vectors_left(job))
        progress.update("embedding", 4, 10, vectors_left({**job, "eta_seconds": None}))
    lines = said.getvalue().splitlines()
    assert lines[0] == "index: indexing 10/10 notes"
    assert lines[1] == "index: embedding 3/10 notes, 40,112 vectors left, about 9 min"
    assert lines[-1] == "index: embedding 4/10 notes, 40,112 vectors left"  # no time until the pace is known


def _read_or_end(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # the terminal side closed (EIO on Linux)
        return b""


def test_another_vault_in_the_same_data_dir_is_refused_and_the_data_dir_names_its_own(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran]
) -> None:
    assert run("index", "--vault", str(vault), tmp_path=tmp_path, cli=cli).returncode == 0
    other = tmp_path / "other"
    other.mkdir()
    (other / "Solo.md").write_text("# Solo\n\nthe only note\n")
    for command in ("index", "rebuild", "status"):
        refused = run(command, "--vault", str(other), tmp_path=tmp_path, cli=cli)
        assert refused.returncode == 1
        assert "error (VAULT_MISMATCH)" in refused.stderr
        assert str(vault) in refused.stderr
        assert str(other) in refused.stderr
        assert "--replace" not in refused.stderr  # nothing hands one vault's index to another
        assert f"`--vault {vault}` reads it" in refused.stderr
    alone = run("status", "--json", tmp_path=tmp_path, cli=cli)  # --data-dir alone: its own vault
    assert alone.returncode == 0, alone.stderr
    assert json.loads(alone.stdout)["vault_path"] == str(vault)
    assert json.loads(alone.stdout)["indexed_notes"] == 2  # not a note was removed


# -- a service running: over HTTP ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServiceProcess, Path, Path]]:
    root = tmp_path_factory.mktemp("served")
    vault = root / "vault"
    (vault / "Projects").mkdir(parents=True)
    (vault / "Projects" / "Database migration.md").write_text(
        "# Database migration\n\n## Decision\n\nWe move from MySQL to PostgreSQL. See [[Shopping list]].\n"
    )
    (vault / "Shopping list.md").write_text("# Shopping list\n\n- oat milk\n- basmati rice\n")
    data = root / "data"
    with ServiceProcess(vault, data, env={"EMBEDDING_PROVIDER": "none", "WATCH": "false"}) as service:
        service.wait_idle()
        yield service, vault, data


Served = tuple[ServiceProcess, Path, Path]


@pytest.fixture
def ask(served: Served, cli: Callable[..., Ran]) -> Callable[..., Ran]:
    service, _, data = served

    def call(*args: str, port: bool = True) -> Ran:
        return cli(*args, "--data-dir", str(data), port=service.port if port else 1)

    return call


def test_every_command_asks_the_running_service(served: Served, ask: Callable[..., Ran]) -> None:
    service = served[0]
    asking = f"asking the service at http://127.0.0.1:{service.port}"
    status = ask("status")
    assert status.returncode == 0, status.stderr  # the store is the service's: only HTTP can answer
    assert asking in status.stderr
    assert "2 notes, " in status.stdout
    assert "watcher" in status.stdout
    found = ask("search", "PostgreSQL", "--json")
    assert json.loads(found.stdout)["results"][0]["note_path"] == "Projects/Database migration.md"
    note = ask("note", "Shopping list")
    assert note.stdout.startswith("Shopping list.md (lines 1-4 of 4)")
    links = ask("links", "Shopping list.md")
    assert "  Projects/Database migration.md  (line 5)" in links.stdout
    synced = ask("sync")
    assert synced.returncode == 0, synced.stderr
    assert f"chunks by the service at http://127.0.0.1:{service.port} in" in synced.stdout
    assert synced.stdout.startswith("synced 2 notes, ")
    rebuilt = ask("rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert f"asking the service at http://127.0.0.1:{service.port} to rebuild" in rebuilt.stderr
    assert rebuilt.stdout.startswith("rebuilt 2 notes, ")
    remembered = ask(
        "memory",
        "remember",
        "db",
        "we chose PostgreSQL",
        "--source",
        "Projects/Database migration.md",
    )
    assert remembered.returncode == 0, remembered.stderr
    assert "db: we chose PostgreSQL" in ask("memory").stdout
    assert ask("memory", "forget", "db").stdout.strip() == "forgot db"
    verify = ask("verify")
    assert verify.returncode == 0, verify.stderr
    assert "consistent" in verify.stdout


def test_the_service_is_found_by_its_record_on_any_port(served: Served, ask: Callable[..., Ran]) -> None:
    service, vault, data = served
    # PORT (1) says nothing runs there: the record the service wrote in its data dir says where it does
    found = ask("status", "--vault", str(vault), port=False)
    assert found.returncode == 0, found.stderr
    assert (
        f"asking the service at http://127.0.0.1:{service.port} (vault {vault}; recorded in "
        f"{data / 'service.json'})" in found.stderr
    )
    assert "2 notes, " in found.stdout


def test_url_reaches_a_service_that_left_no_record(served: Served, ask: Callable[..., Ran]) -> None:
    service, vault, data = served
    record = data / "service.json"
    kept = record.read_bytes()
    record.unlink()  # as a service of an older version: nothing says where it listens
    try:
        locked = ask("status", "--vault", str(vault), port=False)
        assert locked.returncode == 1
        assert "error (INDEX_UNAVAILABLE)" in locked.stderr
        assert "--url" in locked.stderr  # and says how to reach the service that holds it
        reached = ask("status", "--json", "--url", f"http://127.0.0.1:{service.port}", port=False)
        assert reached.returncode == 0, reached.stderr
        assert json.loads(reached.stdout)["indexed_notes"] == 2
        # host:port, as people write it: it said "no Knowledge Bridge service answers" of a running one
        bare = ask("status", "--url", f"127.0.0.1:{service.port}", port=False)
        assert bare.returncode == 0, bare.stderr
        assert f"asking the service at http://127.0.0.1:{service.port}" in bare.stderr
    finally:
        record.write_bytes(kept)


def test_another_vault_than_the_service_serves_is_refused(
    served: Served, ask: Callable[..., Ran], tmp_path: Path
) -> None:
    """`--vault` naming another vault than the running service's: its answers (and its sync) would be about
    the service's vault, so the CLI stops and names both."""
    other = tmp_path / "other"
    other.mkdir()
    for command in ("sync", "status"):
        refused = ask(command, "--vault", str(other))
        assert refused.returncode == 1, command
        assert "error (VAULT_MISMATCH)" in refused.stderr
        assert f"serves the vault {served[1]}, not --vault {other}" in refused.stderr
        assert refused.stdout == ""


def test_verify_reports_drift_from_the_service(served: Served, ask: Callable[..., Ran]) -> None:
    _, vault, _ = served
    (vault / "Shopping list.md").unlink()  # the watcher is off: the index keeps the note
    drift = ask("verify", "--vault", str(vault))
    assert drift.returncode == 3, drift.stderr
    assert "1 indexed notes no longer on disk" in drift.stdout
    assert "Shopping list.md" in drift.stdout


def test_the_key_of_the_settings_is_sent_and_a_wrong_one_gets_cli_advice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Ran]
) -> None:
    from backend.config import load_settings
    from backend.entrypoints.app import create_app
    from tests import live_server

    settings = load_settings(
        data_dir=tmp_path / "data", embedding_provider="none", watch=False, api_key="s3cret-key"
    )
    with live_server.serving(create_app(settings)) as base:
        monkeypatch.setenv("API_KEY", "s3cret-key")
        allowed = cli("status", "--json", "--url", base)
        assert allowed.returncode == 0, allowed.stderr
        assert json.loads(allowed.stdout)["vault_path"] == str(settings.vault_path)
        monkeypatch.setenv("API_KEY", "wrong-key")
        refused = cli("status", "--url", base)
        assert refused.returncode == 1
        assert "error (UNAUTHORIZED)" in refused.stderr
        assert "Set API_KEY" in refused.stderr


def test_calibrate_fits_the_gate_of_a_model_without_shipped_weights_and_says_so(
    vault: Path, tmp_path: Path, cli: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch
) -> None:
    keyword = run("calibrate", "--vault", str(vault), tmp_path=tmp_path, cli=cli)
    assert keyword.returncode == 0, keyword.stderr
    assert "keyword-only weights in force" in keyword.stdout
    with FakeOllama() as ollama:  # a real HTTP server; its model has no shipped weights
        for name, value in ollama.env().items():
            monkeypatch.setenv(name, value)
        fitted = cli("calibrate", "--vault", str(vault), "--data-dir", str(tmp_path / "ollama"))
    assert fitted.returncode == 0, fitted.stderr
    assert fitted.stdout.startswith("recall gate fitted for fake-embed on ")
    assert (tmp_path / "ollama" / "recall_gate.json").exists()


class _StandInService:
    """A service's answers, in turn, to a job's start and its status polls (no HTTP: `_remote_job` reads
    only what `request` answers)."""

    def __init__(self, *statuses: dict) -> None:
        self._statuses = list(statuses)

    def request(self, method: str, path: str, **_: object) -> dict:
        if method == "POST":
            return {"job_id": "a", "status": "started"}
        return self._statuses.pop(0) if len(self._statuses) > 1 else self._statuses[0]


def _job(job_id: str, phase: str, **fields: object) -> dict:
    ended = phase in ("done", "failed", "cancelled")
    return {"id": job_id, "kind": "sync", "phase": phase, "done": 4, "total": 4,
            "finished_at": "2026-12-01T00:00:05Z" if ended else None, "error": None, **fields}  # fmt: skip


@pytest.mark.parametrize(
    ("ended", "failure"),
    [
        (_job("a", "done"), None),
        (_job("a", "failed", error="disk full"), "the sync failed in the service: disk full"),
        (_job("a", "cancelled"), "the sync was cancelled in the service"),
    ],
    ids=["done", "failed", "cancelled"],
)
def test_a_followed_job_ends_as_the_service_says_though_another_began_at_once(
    ended: dict, failure: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A queued sync starts the moment the followed job ends: how ours ended is `previous_job`'s (a cancelled
    job was taken for done; one followed at once by another, for done whatever it was)."""
    monkeypatch.setattr(commands, "POLL_SECONDS", 0.0)
    service = _StandInService(
        {"job": _job("a", "indexing")}, {"job": _job("b", "queued"), "previous_job": ended}
    )
    if failure is None:
        assert commands._remote_job(service, "sync")["previous_job"]["phase"] == "done"  # type: ignore[arg-type]
        return
    with pytest.raises(KnowledgeBridgeError, match=failure):
        commands._remote_job(service, "sync")  # type: ignore[arg-type]
