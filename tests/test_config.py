import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from backend.config import EXAMPLE_VAULT, SettingsError, load_settings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name in {"VAULT_PATH", "DATA_DIR", "QDRANT_URL", "EMBEDDING_PROVIDER", "PORT", "HOST", "API_KEY"}:
            monkeypatch.delenv(name)


def test_safe_defaults() -> None:
    settings = load_settings()
    assert settings.host == "127.0.0.1"
    assert settings.port == 8000
    assert settings.qdrant_url is None  # embedded store
    assert settings.embedding_provider == "onnx"
    assert settings.model_name == "all-MiniLM-L6-v2"
    assert settings.vault_path == EXAMPLE_VAULT.resolve()
    assert settings.api_key is None
    assert settings.debounce_seconds == 2.0


def test_environment_and_dotenv_are_read(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"VAULT_PATH={tmp_path}\nDENY_DIRS=Archive, Private/old\n")
    monkeypatch.setenv("EMBEDDING_PROVIDER", "ollama")
    settings = load_settings()
    assert settings.vault_path == tmp_path.resolve()
    assert settings.deny_dirs == ["Archive", "Private/old"]
    assert settings.model_name == "mxbai-embed-large"


@pytest.mark.parametrize(
    ("name", "value", "mentions"),
    [
        ("PORT", "eighty", "PORT"),
        ("PORT", "70000", "PORT"),
        ("EMBEDDING_PROVIDER", "cohere", "EMBEDDING_PROVIDER"),
        ("DEBOUNCE_SECONDS", "-1", "DEBOUNCE_SECONDS"),
        ("VAULT_PATH", "/no/such/vault", "VAULT_PATH"),
        # blank, each would be the working folder: a vault indexed, an index written, wherever it started
        ("VAULT_PATH", "", "VAULT_PATH"),
        ("DATA_DIR", " ", "DATA_DIR"),
    ],
)
def test_invalid_settings_fail_with_one_line_naming_the_variable(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str, mentions: str
) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as info:
        load_settings()
    message = str(info.value)
    assert mentions in message
    assert "\n" not in message


@pytest.mark.slow  # a child process, as tests/conftest.py counts whole-service tests
def test_cli_reports_a_bad_setting_in_one_line_without_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PORT": "not-a-port"}
    result = subprocess.run(
        [sys.executable, "-m", "backend", "serve"], env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "PORT" in result.stderr
    assert "Traceback" not in result.stderr


def test_sensitive_categories_come_from_json(monkeypatch: pytest.MonkeyPatch) -> None:
    assert set(load_settings().sensitive_categories) == {"health", "finance", "relationships"}
    monkeypatch.setenv(
        "SENSITIVE_CATEGORIES", '{"legal": {"words": ["lawsuit"], "headings": ["Case notes"]}}'
    )
    categories = load_settings().sensitive_categories
    assert list(categories) == ["legal"]
    assert categories["legal"].words == ["lawsuit"]
    assert categories["legal"].tags == []
    monkeypatch.setenv("SENSITIVE_CATEGORIES", "{}")
    assert load_settings().sensitive_categories == {}


@pytest.mark.parametrize(
    "value", ["{not json", '{"x": {"tags": "not a list"}}', '{"x": {"colour": ["red"]}}']
)
def test_bad_sensitive_categories_name_the_variable(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("SENSITIVE_CATEGORIES", value)
    with pytest.raises(SettingsError, match="SENSITIVE_CATEGORIES"):
        load_settings()


def test_each_vault_gets_a_data_dir_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    first, second = tmp_path / "a" / "notes", tmp_path / "b" / "notes"
    first.mkdir(parents=True)
    second.mkdir(parents=True)
    one, other = load_settings(vault_path=first), load_settings(vault_path=second)
    assert one.data_dir.parent == other.data_dir.parent == Path("data")
    assert one.data_dir.name.startswith("notes-")  # a person tells which vault it is...
    assert one.data_dir != other.data_dir  # ...and two vaults of one name are two folders
    assert load_settings(vault_path=tmp_path / "a" / ".." / "a" / "notes").data_dir == one.data_dir
    assert one.models_dir == other.models_dir == (tmp_path / "data" / "models")  # one model build for all
    named = load_settings(vault_path=first, data_dir=tmp_path / "mine")
    assert (named.data_dir, named.models_dir) == (tmp_path / "mine", tmp_path / "mine" / "models")


def test_an_index_from_before_per_vault_folders_stays_where_it_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data" / "qdrant").mkdir(parents=True)
    (tmp_path / "data" / "qdrant" / "vault.json").write_text(
        json.dumps({"vault": str(EXAMPLE_VAULT.resolve())})
    )
    assert load_settings().data_dir == Path("data")  # its vault keeps its index
    other = tmp_path / "other"
    other.mkdir()
    assert load_settings(vault_path=other).data_dir.name.startswith("other-")  # never another vault's
