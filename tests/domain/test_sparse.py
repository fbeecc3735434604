import os
import subprocess
import sys

import pytest

from backend.domain.sparse import SparseEncoder, term_index, tokenize


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Database migration: MySQL -> PostgreSQL!", ["database", "migration", "mysql", "postgresql"]),
        ("I owe Sreenivas 1,250 rupees", ["owe", "sreenivas", "1", "250", "rupees"]),
        ("Café crème brûlée", ["cafe", "creme", "brulee"]),
        ("Привет, мир", ["привет", "мир"]),
        ("snake_case and kebab-case", ["snake", "case", "kebab", "case"]),
        ("the of and", []),
    ],
)
def test_tokenize_handles_punctuation_numbers_accents_and_other_scripts(text: str, tokens: list[str]) -> None:
    assert tokenize(text) == tokens


def test_accented_and_plain_spellings_share_a_term() -> None:
    encoder = SparseEncoder()
    assert encoder.encode_query("café").indices == encoder.encode_query("cafe").indices


def test_term_indices_are_stable_across_processes() -> None:
    # a per-process hash() would silently break every stored index on restart
    code = "from backend.domain.sparse import term_index; print(term_index('migration'))"
    seen = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    assert seen == {str(term_index("migration"))}


def test_repeated_terms_saturate_and_long_documents_weigh_less() -> None:
    encoder = SparseEncoder(avg_doc_len=10)
    once = dict(zip(*_vector(encoder, "budget plan"), strict=True))
    many = dict(zip(*_vector(encoder, "budget budget budget budget plan"), strict=True))
    long = dict(zip(*_vector(encoder, "budget " + "filler " * 40), strict=True))
    idx = term_index("budget")
    assert once[idx] < many[idx] < 2.2  # grows with tf but never past k1 + 1
    assert long[idx] < once[idx]


def test_query_vector_has_one_unit_weight_per_distinct_term() -> None:
    vector = SparseEncoder().encode_query("budget budget plan")
    assert sorted(vector.values) == [1.0, 1.0]


def test_text_without_words_gives_an_empty_vector() -> None:
    assert SparseEncoder().encode_document("--- !!! ---").is_empty


def _vector(encoder: SparseEncoder, text: str) -> tuple[tuple[int, ...], tuple[float, ...]]:
    v = encoder.encode_document(text)
    return v.indices, v.values
