"""Issue 30, as a new user tried it: `make run` on the example vault, then `make run VAULT=/my/vault`; the CLI
with the service on another port; the CLI with the service stopped and `--data-dir` alone. The same commands
(`python -m backend serve [--vault V]` is what `make run [VAULT=V]` runs), in a checkout of their own (its
./data is a temp folder), each answered about the right vault; and every "what to do" said on the way is run,
and leaves each vault's index as it was.

PORT (the CLI's guess when nothing is recorded) points at a port where nothing answers, or at another vault's
service, never at 8000, where a developer's own service may run on this machine.
"""

from __future__ import annotations

import ast
import io
import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack, chdir, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

import pytest

from backend.config import EXAMPLE_VAULT
from backend.domain import errors as domain_errors
from backend.domain.errors import KnowledgeBridgeError, MigrationTargetNotEmptyError
from backend.entrypoints.cli.main import main as cli_main
from backend.entrypoints.cli.output import CLI_ADVICE, NOTE_ADVICE
from scripts.measure.service import ServiceProcess
from tests.ports import refused_port
from tests.vault_files import write_notes

REPO = Path(__file__).resolve().parent.parent
BACKEND = REPO / "backend"
EXAMPLE = str(EXAMPLE_VAULT.resolve())
SETTINGS_ENV = ("VAULT_PATH", "DATA_DIR", "PORT", "HOST", "API_KEY", "QDRANT_URL", "VAULT_NAME")
ENV = {"EMBEDDING_PROVIDER": "none", "WATCH": "false"}
MINE = {
    "Projects/Database migration.md": "# Database migration\n\nWe move from MySQL to PostgreSQL.\n",
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n",
}


@dataclass
class Checkout:
    """A user's clone: the working directory of every command, so ./data is its own."""

    home: Path
    mine: Path
    advice: list[tuple[tuple[str, ...], str]] = field(default_factory=list)  # (command, its "what to do")

    def cli(self, *args: str, port: int | None = None) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
        env |= {**ENV, "PYTHONPATH": str(REPO), "PORT": str(port or refused_port())}
        ran = subprocess.run(
            [sys.executable, "-m", "backend", *args],
            cwd=self.home,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        said = [line.split("what to do:", 1)[1] for line in ran.stderr.splitlines() if "what to do:" in line]
        self.advice += [(args, text.strip()) for text in said]
        return ran

    def make_run(self, vault: Path | None = None) -> ServiceProcess:
        """`make run` (vault None) or `make run VAULT=...`: `python -m backend serve [--vault V]`, here."""
        return ServiceProcess(vault, None, env=ENV, cwd=self.home, unset=SETTINGS_ENV)

    def data_dirs(self) -> dict[str, Path]:
        """Each data dir under ./data by the vault its index records."""
        found = {}
        for owner in (self.home / "data").glob("*/qdrant/vault.json"):
            found[json.loads(owner.read_text())["vault"]] = owner.parent.parent
        return found


@pytest.fixture
def checkout(tmp_path: Path) -> Checkout:
    mine = write_notes(tmp_path / "my vault", MINE)
    home = tmp_path / "checkout"
    home.mkdir()
    return Checkout(home, mine.resolve())


def status_of(ran: subprocess.CompletedProcess[str]) -> dict:
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


def test_switching_vaults_and_the_cli_finding_the_service_of_each(checkout: Checkout) -> None:
    mine = str(checkout.mine)
    # 1. `make run`, then `make run VAULT=/my/vault`: a new index of its own, not VAULT_MISMATCH
    with checkout.make_run() as example:
        first = example.wait_idle()
    assert first["vault_path"] == EXAMPLE
    with checkout.make_run(checkout.mine) as service:
        assert service.wait_idle()["indexed_notes"] == 2
        dirs = checkout.data_dirs()
        assert set(dirs) == {EXAMPLE, mine}  # one folder per vault, named so a person tells which is which
        assert dirs[mine].name.startswith("my-vault-")
        assert dirs[EXAMPLE].name.startswith("example-vault-")
        record = json.loads((dirs[mine] / "service.json").read_text())
        assert (record["url"], record["vault_path"]) == (service.url, mine)

        # 2. the service on another port, `python -m backend status` (no --url): this vault, not the example
        asked = checkout.cli("status", "--json")
        assert status_of(asked)["vault_path"] == mine
        assert f"asking the service at {service.url} (vault {mine}; recorded in data/" in asked.stderr
        plain = checkout.cli("status")
        assert plain.stdout.splitlines()[0].split(maxsplit=1) == ["vault", mine]

    assert not (dirs[mine] / "service.json").exists()  # a stopped service takes its record away

    # 3. the service stopped, `status --data-dir MYDATA`: the data dir knows its vault; even with another
    # vault's service answering at PORT, that one is not asked
    with checkout.make_run() as example:
        example.wait_idle()
        offline = checkout.cli("status", "--json", "--data-dir", str(dirs[mine]), port=example.port)
        assert status_of(offline)["vault_path"] == mine
        assert status_of(offline)["indexed_notes"] == 2
        assert (
            f"no running service for the vault {mine}: reading {dirs[mine]} in this process" in offline.stderr
        )
        assert f"{example.url}: serves {EXAMPLE}" in offline.stderr

        # two services, no vault named: the CLI names both instead of guessing
        with checkout.make_run(checkout.mine) as service:
            service.wait_idle()
            both = checkout.cli("status")
            assert both.returncode == 1
            assert "error (SERVICE_AMBIGUOUS): 2 services run and no vault is named" in both.stderr
            named = checkout.cli("status", "--json", "--vault", mine)
            assert status_of(named)["vault_path"] == mine
            assert f"asking the service at {service.url}" in named.stderr

        # going back to the example vault found its old index: the first generation, caught up, not rebuilt
        back = checkout.cli("status", "--json")
        assert status_of(back)["vault_path"] == EXAMPLE
        assert status_of(back)["generation"] == first["generation"]
        assert status_of(back)["job"]["kind"] == "sync"

    # a data dir is never used for another vault: refused, with advice that is then walked below
    refused = checkout.cli("status", "--vault", mine, "--data-dir", str(dirs[EXAMPLE]))
    assert refused.returncode == 1
    assert "error (VAULT_MISMATCH)" in refused.stderr
    walk_every_suggestion(checkout, dirs)


def walk_every_suggestion(checkout: Checkout, dirs: dict[str, Path]) -> None:
    """Run each command the CLI suggested on the way (an option: added to the command that got the advice);
    after each, every data dir still belongs to its vault, with its notes."""
    before = {vault: _notes(checkout, data) for vault, data in dirs.items()}
    walked = []
    for failed, advice in checkout.advice:
        for command in re.findall(r"`([^`]+)`", advice):
            if command.startswith("python -m backend "):
                walked.append(shlex.split(command)[3:])
            elif command.startswith("--"):
                option = shlex.split(command)
                walked.append([*_without(failed, option[0]), *option])
    assert walked, checkout.advice  # VAULT_MISMATCH names the index's own vault: `--vault ...`
    for words in walked:
        checkout.cli(*words)
        assert checkout.data_dirs() == dirs, words
        assert {vault: _notes(checkout, data) for vault, data in dirs.items()} == before, words


def _without(args: tuple[str, ...], option: str) -> list[str]:
    """`args` without `option` and its value."""
    kept: list[str] = []
    skip = False
    for word in args:
        if skip:
            skip = False
        elif word == option:
            skip = True
        else:
            kept.append(word)
    return kept


def _notes(checkout: Checkout, data: Path) -> int:
    """The notes of the index in `data`, as `status --json --data-dir DATA` reads them with no service up:
    the CLI's own main, in this process, in the checkout with the commands' environment (a CLI process costs
    ~3 s of CPU, and the walk reads both data dirs after every command it runs)."""
    out, err = io.StringIO(), io.StringIO()
    env = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV} | ENV | {"PORT": str(refused_port())}
    with ExitStack() as stack:
        stack.enter_context(mock.patch.dict(os.environ, env, clear=True))
        stack.enter_context(chdir(checkout.home))
        stack.enter_context(redirect_stdout(out))
        stack.enter_context(redirect_stderr(err))
        code = cli_main(["status", "--json", "--data-dir", str(data)])
    assert code == 0, err.getvalue()
    return int(json.loads(out.getvalue())["indexed_notes"])


def test_no_suggestion_replaces_the_index_of_another_vault() -> None:
    """Every suggestion the code can give, static or built at run time (f-strings, read as written): none
    asks for --replace but `migrate`'s, which overwrites the same vault's copy on a server (another vault's is
    refused there: tests/application/test_migration.py), and none deletes a data dir."""
    texts = {cls.suggestion for cls in _errors()} | set(CLI_ADVICE.values()) | {NOTE_ADVICE}
    texts |= set(_suggestions_in_source())
    replacing = {text for text in texts if "--replace" in text}
    assert replacing == {MigrationTargetNotEmptyError.suggestion}
    for text in texts:
        assert not re.search(r"\brm\b|delete the (data|index)|wipe", text, re.IGNORECASE), text


def _errors() -> Iterator[type[KnowledgeBridgeError]]:
    for value in vars(domain_errors).values():
        if isinstance(value, type) and issubclass(value, KnowledgeBridgeError):
            yield value


def _suggestions_in_source() -> Iterator[str]:
    for path in BACKEND.rglob("*.py"):
        source = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.keyword) and node.arg == "suggestion":
                yield _text(source, node.value)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and "SUGGESTION" in t.id.upper() for t in node.targets
            ):
                yield _text(source, node.value)


def _text(source: str, node: ast.expr) -> str:
    """A literal's value; an f-string or an expression as written."""
    try:
        return str(ast.literal_eval(node))
    except ValueError:
        return ast.get_source_segment(source, node) or ""
