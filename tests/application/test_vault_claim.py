"""A data directory belongs to one vault: another vault is refused with both paths and the way out, never
synced over (which would remove every note of the first as deleted) nor handed over."""

from __future__ import annotations

from pathlib import Path

import pytest
from qdrant_client import QdrantClient

from backend.application.serving.vault_claim import claim_index
from backend.bootstrap import Services, build_services
from backend.config import Settings, load_settings
from backend.domain.errors import VaultMismatchError
from backend.infrastructure.index_catalog import ClientIndexCatalog, EdgeIndexCatalog


def _vault(root: Path, *names: str) -> Path:
    root.mkdir(parents=True)
    for name in names:
        (root / f"{name}.md").write_text(f"# {name}\n\nabout {name}\n")
    return root


def _opened(vault: Path, data: Path) -> Services:
    services = build_services(
        load_settings(vault_path=vault, data_dir=data, embedding_provider="none", watch=False)
    )
    try:
        services.supervisor.open()
        services.jobs.wait(timeout=120)
    except BaseException:
        services.close()
        raise
    return services


def test_another_vault_is_refused_and_the_index_stays_whole(tmp_path: Path) -> None:
    first = _vault(tmp_path / "first", "Alpha", "Beta")
    other = _vault(tmp_path / "other", "Gamma")
    data = tmp_path / "data"
    _opened(first, data).close()

    with pytest.raises(VaultMismatchError) as refused:
        _opened(other, data)
    error = refused.value
    assert str(first) in error.detail
    assert str(other) in error.detail
    assert "DATA_DIR" in error.suggestion
    assert "VAULT_NAME" in error.suggestion
    assert f"`--vault {first}` reads it" in error.suggestion  # the index's own vault, never a take-over
    assert "--replace" not in error.suggestion

    again = _opened(first, data)
    try:
        assert again.index.indexed_notes == 2  # nothing was wiped
    finally:
        again.close()


def test_one_vault_spelt_two_ways_is_one_vault(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path / "vault", "Alpha")
    (tmp_path / "link").symlink_to(vault)
    data = tmp_path / "data"
    _opened(vault, data).close()
    monkeypatch.chdir(tmp_path)
    for spelling in (Path("vault"), Path("link"), Path("vault/../vault")):
        settings = Settings(vault_path=spelling, data_dir=data, embedding_provider="none", watch=False)
        services = build_services(settings)  # settings built in code are not resolved as load_settings does
        try:
            services.supervisor.open()
            services.jobs.wait(timeout=120)
            assert services.index.indexed_notes == 1
        finally:
            services.close()


def test_each_vault_name_is_its_own_index_in_one_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = _vault(tmp_path / "first", "Alpha")
    other = _vault(tmp_path / "other", "Gamma")
    _opened(first, data).close()
    services = build_services(
        load_settings(vault_path=other, data_dir=data, embedding_provider="none", watch=False, vault_name="w")
    )
    try:
        services.supervisor.open(start_indexing=False)  # its own collections: no conflict
    finally:
        services.close()


@pytest.mark.parametrize("kind", ["edge", "client"])
def test_both_catalogs_record_the_vault(tmp_path: Path, kind: str) -> None:
    if kind == "edge":
        catalog = EdgeIndexCatalog(tmp_path / "store")
        reopen = lambda: EdgeIndexCatalog(tmp_path / "store")  # noqa: E731
    else:
        client = QdrantClient(":memory:")
        catalog = ClientIndexCatalog(client, base="work")
        reopen = lambda: catalog  # noqa: E731
    assert catalog.vault_owner() is None
    claim_index(catalog, "/vaults/a")
    assert reopen().vault_owner() == "/vaults/a"
    claim_index(reopen(), "/vaults/a")  # its own vault, again
    with pytest.raises(VaultMismatchError):
        claim_index(reopen(), "/vaults/b")
    assert reopen().vault_owner() == "/vaults/a"
