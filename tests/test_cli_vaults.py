"""`python -m backend ...` with several vaults (VAULTS, issue 46): two small vaults of their own, the same
path in both with different text; once with no service running (the CLI opens every vault's index itself)
and once against the running service of both (`--url`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from backend.config import load_settings
from backend.entrypoints.app import create_app
from backend.entrypoints.cli import commands
from backend.entrypoints.cli.main import main
from scripts.measure.service import ServiceProcess
from tests import live_server
from tests.backend_cli import REPO
from tests.test_cli import Ran
from tests.vault_files import write_notes

WORK = {
    "Inbox.md": "# Inbox\n\nQuarterly budget review with the finance team on Monday.\n",
    "Projects/Apollo.md": "# Apollo\n\nThe Apollo launch plan and its budget. See [[Inbox]].\n",
}
PERSONAL = {
    "Inbox.md": "# Inbox\n\nBuy seeds for the garden and water the tomatoes.\n",
    "Garden.md": "# Garden\n\nTomatoes, basil and a small budget for seeds. Back to [[Inbox]].\n",
}


@pytest.fixture
def vaults(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """VAULTS and DATA_DIR set as a person sets them (environment), both vaults written."""
    work, personal = write_notes(tmp_path / "Work", WORK), write_notes(tmp_path / "Personal", PERSONAL)
    value = f"work={work},personal={personal}"
    monkeypatch.setenv("VAULTS", value)
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "data"))
    return value


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """The CLI's `main` in this process, as test_cli.py's fixture runs it: keyword-only, PORT 1 (nothing
    answers there)."""
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    monkeypatch.setenv("WATCH", "false")
    monkeypatch.setenv("PORT", "1")

    def call(*args: str) -> Ran:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return call


def _hits(ran: Ran) -> list[str]:
    """The `N. [vault] path:lines` lines of a printed search."""
    return [line.split("  (")[0].split(". ", 1)[1] for line in ran.stdout.splitlines() if line[:1].isdigit()]


def test_without_a_service_every_command_takes_its_vault(vaults: str, cli: Callable[..., Ran]) -> None:
    indexed = cli("index")  # no --vault: every vault in turn, each with its own progress and summary
    assert indexed.returncode == 0, indexed.stderr
    assert indexed.stdout.splitlines()[0].startswith("work: indexed 2 notes, ")
    assert indexed.stdout.splitlines()[1].startswith("personal: indexed 2 notes, ")
    assert "index work: done 2/2 notes" in indexed.stderr
    assert "index personal: done 2/2 notes" in indexed.stderr

    across = cli("search", "budget", "--top-k", "10")
    assert across.returncode == 0, across.stderr
    assert "no running service for the vaults work, personal" in across.stderr
    hits = _hits(across)
    assert {hit.split("]")[0] for hit in hits} == {"[work", "[personal"}  # each result names its vault
    assert all(hit.startswith("[work]") for hit in _hits(cli("search", "budget", "--vaults", "work")))
    assert all(hit.startswith("[personal]") for hit in _hits(cli("search", "budget", "--vault", "personal")))

    work_inbox = cli("note", "Inbox.md", "--vault", "work")
    assert work_inbox.stdout.startswith("[work] Inbox.md (lines")
    assert "Quarterly budget" in work_inbox.stdout
    personal_inbox = cli("note", "Inbox.md", "--vault", "personal")
    assert "tomatoes" in personal_inbox.stdout
    assert cli("note", "Garden.md").stdout.startswith("[personal] Garden.md")  # only one vault holds it
    ambiguous = cli("note", "Inbox.md")
    assert ambiguous.returncode == 1
    assert "error (NOTE_AMBIGUOUS)" in ambiguous.stderr
    assert "work, personal" in ambiguous.stderr

    links = cli("links", "Inbox.md", "--vault", "personal")
    assert links.stdout.startswith("[personal] Inbox.md")
    assert "Garden.md" in links.stdout
    assert "Apollo" not in links.stdout  # work's link to its own Inbox stays in work

    status = cli("status")
    assert status.returncode == 0, status.stderr
    assert "== work ==" in status.stdout
    assert "== personal ==" in status.stdout
    assert cli("status", "--vault", "work").stdout.startswith("vault ")  # one vault: as ever

    remembered = cli("memory", "remember", "seeds", "buy basil seeds", "--source", "Garden.md")
    assert remembered.stdout.strip() == "remembered seeds", remembered.stderr
    assert "(from [personal] Garden.md)" in cli("memory", "--vault", "personal").stdout
    assert cli("verify", "--vault", "work").stdout.strip().endswith("consistent")


def test_an_unknown_vault_names_the_vaults_there_are(vaults: str, cli: Callable[..., Ran]) -> None:
    assert cli("index", "--vault", "work").returncode == 0
    unknown = cli("note", "Inbox.md", "--vault", "holiday")
    assert unknown.returncode == 2
    assert "holiday is not a directory nor a vault of VAULTS (work, personal)" in unknown.stderr
    searched = cli("search", "budget", "--vaults", "work,holiday")
    assert searched.returncode == 2  # a bad option value, as `--vault holiday` is
    assert "error (UNKNOWN_VAULT)" in searched.stderr
    assert "the vaults there are: work, personal" in searched.stderr
    both = cli("search", "budget", "--vault", "work", "--vaults", "work")
    assert both.returncode == 2


def test_verify_and_memory_without_a_vault_cover_every_vault(vaults: str, cli: Callable[..., Ran]) -> None:
    assert cli("index").returncode == 0
    checked = cli("verify")  # as `index` without --vault indexes every vault, each checked in turn
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.count("consistent") == 2
    assert checked.stdout.index("vault work:") < checked.stdout.index("vault personal:")

    assert (
        cli("memory", "remember", "day", "budget on Monday", "--source", "Projects/Apollo.md").returncode == 0
    )
    assert cli("memory", "remember", "day", "water on Sunday", "--source", "Garden.md").returncode == 0
    assert cli("memory", "remember", "seeds", "basil", "--source", "Garden.md").returncode == 0
    listed = cli("memory", "list").stdout
    assert "day: budget on Monday  (from [work] Projects/Apollo.md)" in listed
    assert "day: water on Sunday  (from [personal] Garden.md)" in listed

    # one vault holds it, on its second page (personal's facts by key: day, seeds)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(commands, "MEMORY_PAGE", 1)
        assert cli("memory", "forget", "seeds").stdout.strip() == "forgot seeds"
    twice = cli("memory", "forget", "day")  # two facts: which is meant must be said
    assert twice.returncode == 1
    assert "error (NOTE_AMBIGUOUS)" in twice.stderr
    assert "--vault work" in twice.stderr
    assert cli("memory", "forget", "day", "--vault", "work").returncode == 0
    assert "day: water on Sunday" in cli("memory", "list").stdout
    gone = cli("memory", "forget", "seeds")
    assert gone.returncode == 1
    assert "error (MEMORY_NOT_FOUND)" in gone.stderr


def test_a_note_named_loosely_is_looked_up_in_every_vault(vaults: str, cli: Callable[..., Ran]) -> None:
    assert cli("index").returncode == 0
    # personal alone has a note named Garden: found there, not missed in work (the first vault)
    garden = cli("note", "garden")
    assert garden.stdout.startswith("[personal] Garden.md"), garden.stderr
    assert cli("links", "Garden").stdout.startswith("[personal] Garden.md")
    # a fact's source as `note` takes it: personal's Garden.md, kept by its path (it was refused: 'Garden.md')
    kept = cli("memory", "remember", "basil", "in pots", "--source", "GARDEN")
    assert kept.stdout.strip() == "remembered basil", kept.stderr
    assert "basil: in pots  (from [personal] Garden.md)" in cli("memory").stdout
    both = cli("note", "inbox")  # both vaults have Inbox.md: which is meant must be said
    assert both.returncode == 1
    assert "error (NOTE_AMBIGUOUS)" in both.stderr
    assert "work (Inbox.md), personal (Inbox.md)" in both.stderr
    # said as the option to type, not as the route's field (it said "Ask again with vault set to one of")
    assert "name one with `--vault`" in both.stderr
    assert "what to do: Ask again with --vault set to one of: work (Inbox.md)" in both.stderr
    either = cli("memory", "remember", "tray", "seedlings", "--source", "inbox")  # and a source alike
    assert either.returncode == 1
    assert errors(either) == errors(both)


def errors(ran: Ran) -> list[str]:
    """The error and its advice, without the lines saying where the command ran."""
    return [line for line in ran.stderr.splitlines() if line.startswith(("error", "  what to do"))]


@pytest.fixture
def service(vaults: str, tmp_path: Path) -> Iterator[str]:
    settings = load_settings(
        vaults=vaults, data_dir=tmp_path / "data", embedding_provider="none", watch=False
    )
    with live_server.serving_vaults(create_app(settings)) as base:
        yield base


def test_against_the_service_of_both_vaults(service: str, cli: Callable[..., Ran]) -> None:
    url = ["--url", service]
    across = cli("search", "budget", "--top-k", "10", *url)
    assert across.returncode == 0, across.stderr
    assert f"asking the service at {service}" in across.stderr
    assert {hit.split("]")[0] for hit in _hits(across)} == {"[work", "[personal"}
    assert "tomatoes" in cli("note", "Inbox.md", "--vault", "personal", *url).stdout
    assert "Quarterly budget" in cli("note", "Inbox.md", "--vault", "work", *url).stdout
    status = cli("status", *url)
    assert "== work ==" in status.stdout
    assert "== personal ==" in status.stdout

    synced = cli("sync", *url)  # every vault in turn, by the service
    assert synced.returncode == 0, synced.stderr
    lines = synced.stdout.splitlines()
    assert lines[0].startswith("work: synced 2 notes, ")
    assert f"by the service at {service}" in lines[0]
    assert lines[1].startswith("personal: synced 2 notes, ")
    one = cli("sync", "--vault", "personal", *url)
    assert one.stdout.startswith("personal: synced 2 notes, ")


def test_from_another_shell_without_vaults_set_the_service_names_its_vaults(
    service: str, cli: Callable[..., Ran], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # a person at another terminal than the service's: no VAULTS there, only the service's address
    monkeypatch.delenv("VAULTS")
    monkeypatch.setenv("DATA_DIR", str(tmp_path / "elsewhere"))
    url = ["--url", service]

    synced = cli("sync", *url)  # every vault of the service, in turn
    assert synced.returncode == 0, synced.stderr
    assert [line.split(":")[0] for line in synced.stdout.splitlines()] == ["work", "personal"]
    verified = cli("verify", *url)
    assert verified.returncode == 0, verified.stderr
    assert "vault work:" in verified.stdout
    assert "vault personal:" in verified.stdout
    assert cli("memory", "list", *url).returncode == 0
    note = cli("note", "Garden.md", "--vault", "personal", *url)
    assert note.returncode == 0, note.stderr
    assert "personal" in note.stdout.splitlines()[0]  # the note names its vault


def test_the_service_of_several_vaults_is_found_as_one_service(tmp_path: Path) -> None:
    # `make run VAULTS=...` records the one service in each vault's data dir under ./data: the CLI run in
    # that folder with no vault named finds one service there, not two to choose between
    work, personal = write_notes(tmp_path / "Work", WORK), write_notes(tmp_path / "Personal", PERSONAL)
    env = {"VAULTS": f"work={work},personal={personal}", "EMBEDDING_PROVIDER": "none", "WATCH": "false"}
    with ServiceProcess(None, None, env=env, cwd=tmp_path, unset=("DATA_DIR", "VAULT_PATH")) as service:
        service.wait_idle()
        records = sorted((tmp_path / "data").glob("*/service*.json"))
        assert len(records) == 2  # one per vault's data dir
        asked = subprocess.run(
            [sys.executable, "-m", "backend", "status"],
            cwd=tmp_path,
            env={k: v for k, v in os.environ.items() if k not in ("VAULTS", "DATA_DIR", "VAULT_PATH", "PORT")}
            | {"PYTHONPATH": str(REPO), "PORT": "1", "EMBEDDING_PROVIDER": "none"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert asked.returncode == 0, asked.stderr
        assert f"asking the service at {service.url}" in asked.stderr
        assert "== work ==" in asked.stdout
        assert "== personal ==" in asked.stdout
