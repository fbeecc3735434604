"""A client finds a service by the record in its vault's data dir only while that very run answers there: a
record left by a killed service, or whose port another run took since, is passed over."""

from __future__ import annotations

from pathlib import Path

from backend.config import load_settings
from backend.entrypoints.app import create_app
from backend.infrastructure.running_service import (
    find_running_service,
    forget_service,
    read_record,
    record_service,
)
from tests import live_server
from tests.ports import refused_port
from tests.vault_files import write_notes


def test_a_record_counts_only_while_its_own_run_answers(tmp_path: Path) -> None:
    vault = write_notes(tmp_path / "vault", {"Note.md": "# Note\n"})
    settings = load_settings(
        vault_path=vault,
        data_dir=tmp_path / "data",
        embedding_provider="none",
        watch=False,
        port=refused_port(),
    )
    with live_server.serving(create_app(settings, instance="run-one")) as base:
        port = int(base.rsplit(":", 1)[1])
        path = record_service(settings, port, "run-one", "0.1.0")
        found = find_running_service(settings).service
        assert found is not None
        assert (found.url, found.vault, found.found) == (base, str(vault), f"recorded in {path}")

        # an earlier run's record, whose port this run took since
        path.write_text(path.read_text().replace('"run-one"', '"run-zero"'), encoding="utf-8")
        assert read_record(path) is not None
        lookup = find_running_service(settings)
        assert lookup.service is None
        assert f"{path}: {base} has stopped" in lookup.looked

        forget_service(path, "run-one")  # not its record any more: left alone
        assert path.exists()
        forget_service(path, "run-zero")
        assert not path.exists()
        assert f"{path}: no service recorded" in find_running_service(settings).looked
