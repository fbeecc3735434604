import os
import subprocess
import sys
import unicodedata

import pytest

from backend.domain.text import sparse
from backend.domain.text.sparse import (
    DocumentFields,
    FieldWeights,
    SparseEncoder,
    fold,
    term_index,
    tokenize,
)
from backend.domain.text.text_analysis import TextAnalyzer


def analyze(text: str, *, stemming: bool = True) -> list[str]:
    """The terms of an English note's text."""
    return [term for term, _ in TextAnalyzer(stemming=stemming).terms(text, "en")]


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
    code = "from backend.domain.text.sparse import term_index; print(term_index('migration'))"
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


def _vector(encoder: SparseEncoder, text: str | DocumentFields) -> tuple[tuple[int, ...], tuple[float, ...]]:
    v = encoder.encode_document(text)
    return v.indices, v.values


def test_stemming_joins_the_forms_of_a_word() -> None:
    assert analyze("decide decides deciding decided") == ["decid"] * 4
    assert analyze("studies studying") == ["studi", "studi"]
    encoder = SparseEncoder()
    assert encoder.encode_query("deciding").indices == encoder.encode_query("decides").indices


def test_stemming_leaves_numbers_and_codes_alone_and_stems_other_scripts_in_their_language() -> None:
    # a Russian word in an English note is stemmed as Russian: its script says which stemmer can
    assert analyze("Встречи 2026 x86_64 café") == ["встреч", "2026", "x86", "64", "cafe"]


def test_stemming_can_be_switched_off() -> None:
    assert analyze("deciding", stemming=False) == ["deciding"]
    plain = SparseEncoder(analyzer=TextAnalyzer(stemming=False))
    assert plain.encode_query("decides").indices == (term_index("decides"),)


def _score(encoder: SparseEncoder, query: str, document: DocumentFields) -> float:
    q = encoder.encode_query(query)
    d = dict(zip(*_vector(encoder, document), strict=True))
    return sum(d.get(i, 0.0) for i in q.indices)


def test_a_title_match_outranks_a_body_match() -> None:
    encoder = SparseEncoder()
    named = DocumentFields(title="Sourdough", file_name="Sourdough", body="Feed it flour and water daily.")
    mentions = DocumentFields(title="Groceries", file_name="Groceries", body="flour, sourdough bread, eggs")
    assert _score(encoder, "sourdough", named) > _score(encoder, "sourdough", mentions)


@pytest.mark.parametrize("field", ["aliases", "tags", "headings"])
def test_aliases_tags_and_headings_weigh_more_than_text(field: str) -> None:
    # chunks of typical length: a very short chunk's text weighs up to 1 / (1 - b) times more
    encoder = SparseEncoder()
    text = "Notes about flour and water. " * 30
    in_field = DocumentFields(body=text, **{field: ("sourdough",)})
    in_body = DocumentFields(body=text + "sourdough")
    assert _score(encoder, "sourdough", in_field) > _score(encoder, "sourdough", in_body)


def test_names_outrank_tags_which_outrank_headings() -> None:
    encoder = SparseEncoder()
    scores = [
        _score(encoder, "sourdough", DocumentFields(body="text", **{field: value}))
        for field, value in (("title", "Sourdough"), ("tags", ("sourdough",)), ("headings", ("Sourdough",)))
    ]
    assert scores == sorted(scores, reverse=True)
    assert len(set(scores)) == 3


def test_a_title_that_is_the_file_name_counts_once() -> None:
    # Obsidian titles are usually the file name; giving the same name twice must not double its weight
    encoder = SparseEncoder()
    both = DocumentFields(title="Sourdough", file_name="sourdough", body="text")
    one = DocumentFields(title="Sourdough", body="text")
    assert _score(encoder, "sourdough", both) == _score(encoder, "sourdough", one)


def test_field_weights_are_settings_not_constants() -> None:
    document = DocumentFields(title="Sourdough", body="sourdough")
    plain = SparseEncoder(weights=FieldWeights(file_name=1, title=1, aliases=1, tags=1, headings=1, body=1))
    assert _score(SparseEncoder(), "sourdough", document) > _score(plain, "sourdough", document)
    no_title = SparseEncoder(weights=FieldWeights(title=0, file_name=0))
    assert _score(no_title, "sourdough", DocumentFields(title="Sourdough", body="bread")) == 0.0


def _fold_whole(text: str) -> str:
    """The definition: case-fold, decompose (NFKD), drop combining marks, on the whole text at once."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@pytest.mark.parametrize(
    "text",
    [
        "Café crème brûlée, naïve façade, Ångström, Œuvre, Straße, İstanbul, ǅemal",
        "Ελληνικά: Ἀθῆναι, ΣΊΣΥΦΟΣ; Русский: Ёлка, й; Українська: ї",
        "עִבְרִית עם ניקוד; العَرَبِيَّة مع التشكيل; हिन्दी क़िला; 한국어 한글; 日本語のテキスト",
        "fullwidth ＡＢＣ１２３, ligatures ﬁ ﬂ, superscripts x² ³, fractions ½, roman Ⅻ, ㎏ ℃ № ™",
        "combining: e\u0301 a\u0308\u0323 o\u0328\u0301 q\u0307\u0323; emoji 👩🏽‍🔬 🇵🇹; math 𝐀𝐛𝐜 α-β μm",
    ],
)
def test_fold_a_character_at_a_time_equals_folding_the_whole_text(text: str) -> None:
    # the keyword index stores terms made with `fold`: a change here would change every index's terms
    assert fold(text) == _fold_whole(text)


def test_fold_agrees_with_the_definition_on_every_letter_of_the_basic_planes() -> None:
    letters = "".join(chr(cp) for cp in range(0x80, 0x3000) if not 0xD800 <= cp <= 0xDFFF)
    assert fold(letters) == _fold_whole(letters)


def test_fold_stays_right_past_the_size_of_its_character_table() -> None:
    # more distinct characters than the table keeps: it starts over instead of growing for good
    points = (cp for cp in range(0x80, 0x110000) if not 0xD800 <= cp <= 0xDFFF)
    letters = "".join(chr(cp) for _, cp in zip(range(sparse._FOLD_TABLE_LIMIT + 1000), points, strict=False))
    assert fold(letters) == _fold_whole(letters)
    assert fold("Ångström") == "angstrom"
    assert len(sparse._FOLDED) <= sparse._FOLD_TABLE_LIMIT
