"""Where the index's dimension comes from when Ollama is down at start: EMBEDDING_DIMENSION, the table of
well-known models, or the index already built with the model; a start that cannot know it says so in one
line naming EMBEDDING_DIMENSION. Ollama is a real closed loopback port; the store is the embedded one."""

from __future__ import annotations

import pytest

from backend.bootstrap import build_services
from backend.config import SettingsError, load_settings
from tests.ports import refused_url
from tests.vault_files import tiny_vault


def ollama_settings(tmp_path, **overrides: object):
    values: dict[str, object] = {
        "vault_path": tmp_path / "vault",
        "data_dir": tmp_path / "data",
        "embedding_provider": "ollama",
        "ollama_url": refused_url(),
        "ollama_max_retries": 0,
        "watch": False,
    }
    values.update(overrides)
    return load_settings(**values)


@pytest.fixture(autouse=True)
def _vault(tmp_path) -> None:
    tiny_vault(tmp_path)


def dimension_at_start(settings) -> int | None:
    services = build_services(settings)
    try:
        services.supervisor.open(start_indexing=False)
        return services.index.identity.dimension
    finally:
        services.close()


def test_a_well_known_model_starts_with_its_size_while_ollama_is_down(tmp_path) -> None:
    assert dimension_at_start(ollama_settings(tmp_path, embedding_model="nomic-embed-text")) == 768


def test_an_unknown_model_needs_embedding_dimension_when_ollama_is_down_and_no_index_exists(tmp_path) -> None:
    with pytest.raises(SettingsError) as raised:
        build_services(ollama_settings(tmp_path, embedding_model="house-embed"))
    assert "EMBEDDING_DIMENSION" in str(raised.value)
    assert "house-embed" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_an_unknown_model_starts_from_the_setting_and_later_from_its_index(tmp_path) -> None:
    first = ollama_settings(tmp_path, embedding_model="house-embed", embedding_dimension=512)
    assert dimension_at_start(first) == 512  # creates the index, recording 512
    # restarted without the setting, Ollama still down: the index tells the size
    assert dimension_at_start(ollama_settings(tmp_path, embedding_model="house-embed")) == 512


def test_an_index_of_another_model_does_not_lend_its_size(tmp_path) -> None:
    assert dimension_at_start(
        ollama_settings(tmp_path, embedding_model="house-embed", embedding_dimension=512)
    )
    with pytest.raises(SettingsError):
        build_services(ollama_settings(tmp_path, embedding_model="other-embed"))


def test_a_dimension_the_model_does_not_have_is_refused(tmp_path) -> None:
    with pytest.raises(SettingsError) as raised:
        build_services(
            load_settings(vault_path=tmp_path / "vault", data_dir=tmp_path / "d", embedding_dimension=100)
        )
    assert "EMBEDDING_DIMENSION" in str(raised.value)
    assert "384" in str(raised.value)
