"""VAULTS (issue 46): how it is read, what it refuses, and each vault's own settings and data dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.config import Settings, SettingsError, load_settings
from backend.data_dirs import records_suffix, vault_data_dir
from backend.entrypoints.cli.commands import run_job
from backend.entrypoints.cli.target import open_local
from backend.infrastructure.index_catalog.last_job_file import LastJobFile
from backend.vault_set import vault_settings


@pytest.fixture
def two(tmp_path: Path) -> tuple[Path, Path]:
    work, personal = tmp_path / "Work", tmp_path / "Notes"
    work.mkdir()
    personal.mkdir()
    return work, personal


def test_pairs_are_read_in_order(two: tuple[Path, Path]) -> None:
    work, personal = two
    settings = load_settings(vaults=f"work={work}, personal={personal}")
    assert settings.vaults == {"work": work, "personal": personal}


def test_unset_is_the_one_vault_as_before(tmp_path: Path) -> None:
    settings = load_settings(vault_path=tmp_path, data_dir=tmp_path / "data")
    assert settings.vaults == {}
    assert vault_settings(settings) == {settings.vault_name: settings}  # the very same settings


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("Work={a}", "lowercase"),
        ("work space={a}", "lowercase"),
        ("work={a},work={b}", "twice"),
        ("work=relative/notes", "absolute"),
        ("work={a},personal={a}", "same folder"),
        ("work={a},inner={a}/sub", "inside"),
        ("work", "name=path"),
    ],
)
def test_bad_values_are_refused_naming_the_setting(two: tuple[Path, Path], value: str, says: str) -> None:
    work, personal = two
    (work / "sub").mkdir()
    with pytest.raises(SettingsError) as refused:
        load_settings(vaults=value.format(a=work, b=personal))
    assert "VAULTS" in str(refused.value)
    assert says in str(refused.value)


def test_each_vault_gets_its_own_settings_and_data_dir(two: tuple[Path, Path]) -> None:
    work, personal = two
    each = vault_settings(load_settings(vaults=f"work={work},personal={personal}"))
    assert list(each) == ["work", "personal"]
    assert each["work"].vault_path == work
    assert each["work"].vault_name == "work"
    assert each["work"].data_dir == vault_data_dir(work)
    assert each["personal"].data_dir == vault_data_dir(personal)
    assert each["work"].store_dir != each["personal"].store_dir
    assert not each["work"].data_dir_named  # derived, as the one vault's is
    assert each["work"].vaults == {}


def test_a_named_data_dir_holds_a_folder_per_vault(two: tuple[Path, Path], tmp_path: Path) -> None:
    work, personal = two
    each = vault_settings(load_settings(vaults=f"work={work},personal={personal}", data_dir=tmp_path / "d"))
    assert each["work"].data_dir == tmp_path / "d" / "work"
    assert each["personal"].data_dir == tmp_path / "d" / "personal"


def _indexed_alone(work: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """`work` with a note, indexed as the one vault of a service (its data dir derived, under ./data)."""
    (work / "Plan.md").write_text("# Plan\n\nThe launch plan.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the derived data dirs live under ./data
    alone = load_settings(vault_path=work, embedding_provider="none", watch=False)
    services = open_local(alone)
    try:
        run_job(services, "index")
    finally:
        services.close()
    return alone


def test_a_vault_keeps_the_index_it_had_alone_when_a_second_vault_joins_it_and_back(
    two: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, personal = two
    alone = _indexed_alone(work, tmp_path, monkeypatch)
    assert alone.store_dir.is_dir()

    each = vault_settings(load_settings(vaults=f"work={work},personal={personal}", embedding_provider="none"))
    assert each["work"].store_dir == alone.store_dir  # not a new, empty qdrant-work to index again
    assert each["personal"].store_dir.name == "qdrant-personal"  # nothing of work's for it
    # and back: a vault indexed beside another keeps that index when it is served alone again
    (personal / "Seeds.md").write_text("# Seeds\n\nBuy seeds.\n", encoding="utf-8")
    services = open_local(each["personal"])
    try:
        run_job(services, "index")
    finally:
        services.close()
    again = load_settings(vault_path=personal, embedding_provider="none", watch=False)
    assert again.store_dir == each["personal"].store_dir
    assert not (again.data_dir / "qdrant").exists()


def test_a_vault_joining_vaults_keeps_its_last_job_and_fitted_gate_with_its_index(
    two: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The records kept beside an index (its last job, its fitted recall gate) follow it: a vault indexed
    alone, then named in VAULTS, keeps the index it had and the records of it ("last sync" as before), and
    the vault beside it has none of them."""
    work, personal = two
    alone = _indexed_alone(work, tmp_path, monkeypatch)
    recorded = LastJobFile(alone.data_dir, records_suffix(alone.store_dir)).load()
    assert recorded is not None
    assert recorded.job.phase == "done"

    each = vault_settings(load_settings(vaults=f"work={work},personal={personal}", embedding_provider="none"))
    kept = each["work"]
    assert LastJobFile(kept.data_dir, records_suffix(kept.store_dir)).load() == recorded
    other = each["personal"]
    assert LastJobFile(other.data_dir, records_suffix(other.store_dir)).load() is None


def test_on_a_qdrant_server_the_records_follow_the_vault_name_not_a_store_left_in_the_data_dir(
    two: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vault indexed alone in the embedded store, then served from a Qdrant server under its name: its last
    job and gate are the server's index's (`last_job-work.json`), not the embedded store's left behind."""
    from backend.bootstrap import _records_suffix

    work, _ = two
    alone = _indexed_alone(work, tmp_path, monkeypatch)
    embedded = alone.model_copy(update={"vault_name": "work"})
    assert _records_suffix(embedded) == ""  # the store it had alone, kept under its new name
    served = embedded.model_copy(update={"qdrant_url": "http://127.0.0.1:6333"})
    assert _records_suffix(served) == "-work"
