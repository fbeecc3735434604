"""Where the in-process model's graph is built and found: once per machine and user (a cache outside the data
dir, shared by services), quietly, and still when that cache cannot be written. Real weights, real builds."""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import pytest

from backend.infrastructure.embedders import onnx_variant_build
from backend.infrastructure.embedders.onnx_minilm import OnnxMiniLMEmbedder
from backend.infrastructure.embedders.onnx_sources import ModelSource

pytestmark = pytest.mark.slow


def test_building_the_graph_is_one_line_with_its_duration(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # the quantiser logged ~40 INFO lines about tensors and the optimiser warnings about shape inference
    caplog.set_level(logging.INFO)
    embedder = OnnxMiniLMEmbedder(cache_dir=tmp_path / "cache", variant="int8")
    embedder.load()
    embedder.close()
    lines = [(r.name, r.getMessage()) for r in caplog.records]
    assert [name for name, _ in lines] == ["backend.infrastructure.embedders.onnx_variant_build"], lines
    assert lines[0][1].startswith("built the int8 ONNX graph of all-MiniLM-L6-v2 in ")


def test_two_services_starting_at_once_build_the_graph_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds: list[Path] = []
    real_build = onnx_variant_build.build_variant

    def counted(source: ModelSource, variant: str, target: Path) -> None:
        builds.append(target)
        real_build(source, variant, target)

    monkeypatch.setattr(onnx_variant_build, "build_variant", counted)
    shared = tmp_path / "cache"
    first, second = (OnnxMiniLMEmbedder(cache_dir=shared, variant="fp32") for _ in range(2))
    start = threading.Barrier(2)
    vectors: list[list[float]] = []

    def start_service(embedder: OnnxMiniLMEmbedder) -> None:
        start.wait()
        vectors.append(embedder.embed_query("the same model for both"))

    threads = [threading.Thread(target=start_service, args=(e,)) for e in (first, second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert len(vectors) == 2
    assert vectors[0] == vectors[1]
    assert builds == [first.onnx_path]  # the second waited for the first build and loaded it
    assert first.loaded_from == second.loaded_from == first.onnx_path


def test_a_cache_that_cannot_be_written_falls_back_to_the_data_dir_and_a_graph_there_is_used(
    tmp_path: Path,
) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")  # no folder can be made under it
    data_models = tmp_path / "data" / "models"
    embedder = OnnxMiniLMEmbedder(cache_dir=blocked / "models", fallback_dir=data_models, variant="fp32")
    assert len(embedder.embed_query("built where it can be")) == 384
    assert embedder.loaded_from == data_models / embedder.onnx_path.name
    embedder.close()
    # a graph a data dir holds from before the shared cache existed is loaded as it is, never built again
    later = OnnxMiniLMEmbedder(cache_dir=tmp_path / "cache", fallback_dir=data_models, variant="fp32")
    mtime = (data_models / later.onnx_path.name).stat().st_mtime_ns
    later.load()
    assert later.loaded_from == data_models / later.onnx_path.name
    assert (data_models / later.onnx_path.name).stat().st_mtime_ns == mtime
    assert not (tmp_path / "cache").exists()
    later.close()
