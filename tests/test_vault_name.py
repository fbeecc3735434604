"""VAULT_NAME: one index per vault. The default keeps the names indexes had before it existed."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.bootstrap import build_services
from backend.config import SettingsError, load_settings
from backend.domain.models import SearchMode
from tests.vault_files import write


def test_the_default_keeps_the_existing_store_folder(tmp_path: Path) -> None:
    settings = load_settings(vault_path=tmp_path, data_dir=tmp_path / "data")
    assert settings.vault_name == "obsidian"
    assert settings.store_dir == tmp_path / "data" / "qdrant"
    assert (
        load_settings(vault_path=tmp_path, data_dir=tmp_path, vault_name="work").store_dir
        == tmp_path / "qdrant-work"
    )


@pytest.mark.parametrize("name", ["", "work vault", "../etc", "-dash-first", "a" * 49, "tags:x", "ö"])
def test_a_name_that_cannot_name_collections_and_folders_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(SettingsError) as raised:
        load_settings(vault_path=tmp_path, vault_name=name)
    assert "VAULT_NAME" in str(raised.value)


def test_two_vaults_share_a_data_dir_without_meeting(tmp_path: Path) -> None:
    write(tmp_path / "work", "Roadmap.md", "# Roadmap\n\nShip the PostgreSQL migration in April.\n")
    write(tmp_path / "home", "Garden.md", "# Garden\n\nWater the tomatoes every morning.\n")
    services = [
        build_services(
            load_settings(
                vault_path=tmp_path / name,
                data_dir=tmp_path / "data",
                vault_name=name,
                embedding_provider="none",
                watch=False,
            )
        )
        for name in ("work", "home")
    ]
    try:
        for service in services:  # both open at once: separate stores, no lock taken twice
            service.supervisor.open(start_indexing=False)
            service.indexer.sync()
        work, home = (
            service.search.search("PostgreSQL tomatoes", mode=SearchMode.KEYWORD) for service in services
        )
        assert [hit.payload["note_path"] for hit in work.hits] == ["Roadmap.md"]
        assert [hit.payload["note_path"] for hit in home.hits] == ["Garden.md"]
    finally:
        for service in services:
            service.close()
    assert sorted(p.name for p in (tmp_path / "data").iterdir() if p.name.startswith("qdrant")) == [
        "qdrant-home",
        "qdrant-work",
    ]
