"""Keyword terms in every script (issue 27): bigrams where words are not spaced, stems in each note's own
language, compounds by their parts, queries in their own language and the vault's."""

from __future__ import annotations

import pytest

from backend.domain.text.languages import language_code
from backend.domain.text.sparse import DocumentFields, SparseEncoder
from backend.domain.text.text_analysis import TextAnalyzer, words


def terms(text: str, language: str, **options: object) -> list[str]:
    return [term for term, _ in TextAnalyzer(**options).terms(text, language)]  # type: ignore[arg-type]


def meets(query: str, text: str, language: str, analyzer: TextAnalyzer | None = None) -> set[str]:
    """The terms a query shares with a note's text."""
    analyzer = analyzer or TextAnalyzer()
    return set(analyzer.query_terms(query)) & {term for term, _ in analyzer.terms(text, language)}


@pytest.mark.parametrize(
    ("query", "text", "language"),
    [
        ("迁移", "数据库迁移的计划已经定了", "zh"),  # a word inside a run of Chinese
        ("京都旅行", "京都旅行の計画：東福寺で紅葉を見る", "ja"),
        ("東福寺で紅葉を見る", "十一月、東福寺の紅葉を見に行った", "ja"),  # kanji and kana together
        ("豚骨スープ", "豚骨スープは十二時間煮込む", "ja"),
        ("ราเมน", "สูตรราเมนทงคตสึที่บ้าน", "th"),  # Thai: no spaces between words
        ("학교", "학교에서 공부했다", "ko"),  # a Korean word with its particle attached
    ],
)
def test_unspaced_scripts_are_found_by_any_word_inside_a_run(query: str, text: str, language: str) -> None:
    assert meets(query, text, language)


def test_a_run_of_chinese_becomes_overlapping_bigrams_and_its_characters_at_half_weight() -> None:
    analyzer = TextAnalyzer()
    assert analyzer.terms("数据库迁移", "zh") == [
        *[(gram, 1.0) for gram in ("数据", "据库", "库迁", "迁移")],
        *[(ch, 0.5) for ch in "数据库迁移"],
    ]
    assert terms("茶", "zh") == ["茶"]
    assert meets("茶", "我喜欢绿茶", "zh")  # a one-character word inside a run
    assert terms("2026年", "zh") == ["2026", "年"]  # digits apart from the characters they touch
    assert terms("ราเมน", "th") == ["รา", "าเ", "เม", "มน"]  # Thai letters alone mean nothing: bigrams only


@pytest.mark.parametrize(
    ("query", "text", "language"),
    [
        ("Steuererklärungen", "Die Steuererklärung ist im Juli fällig", "de"),
        ("миграция базы данных", "План миграции базы данных утверждён", "ru"),
        ("montañas", "Una montaña alta", "es"),
        ("नई किताबें", "मेरी किताब", "hi"),  # vowel signs belong to the word (Python's \w leaves them out)
    ],
)
def test_words_are_stemmed_in_their_own_language(query: str, text: str, language: str) -> None:
    analyzer = TextAnalyzer(query_languages=(language,))
    assert meets(query, text, language, analyzer)


def test_stems_are_made_before_accents_are_folded_and_cyrillic_letters_stay_apart() -> None:
    assert terms("nationalité", "fr") == ["national"]  # the French stemmer knows é; folded first it would not
    assert terms("Café", "fr") == terms("cafe", "fr")
    assert terms("ёлка", "ru") == terms("елка", "ru")  # ё is е, as Russian writes it
    assert terms("новый", "ru") != terms("новыи", "ru")  # й is a letter, not и with an accent


def test_compound_parts_are_indexed_at_half_weight() -> None:
    analyzer = TextAnalyzer(
        decompound=lambda language, word: ("steuer", "erklärung") if language == "de" else ()
    )
    got = dict(analyzer.terms("Steuererklärung", "de"))
    assert got["steuererklar"] == 1.0
    assert got["steu"] == 0.5  # stemmed as German words: "Steuer" -> "steu"
    assert got["erklar"] == 0.5
    assert dict(analyzer.terms("Steuererklärung", "en")) == {"steuererklarung": 1.0}


def test_steuer_finds_steuererklaerung_through_the_encoder() -> None:
    from backend.infrastructure.languages.compounds import compound_parts

    encoder = SparseEncoder(analyzer=TextAnalyzer(decompound=compound_parts, query_languages=("de",)))
    note = DocumentFields(body="Die Steuererklärung für 2025 ist bis Ende Juli fällig.", language="de")
    other = DocumentFields(body="Der Zug nach Hamburg fährt um acht.", language="de")
    query = set(encoder.encode_query("Steuer").indices)
    assert query & set(encoder.encode_document(note).indices)
    assert not query & set(encoder.encode_document(other).indices)


def test_a_query_is_stemmed_in_the_vaults_languages_and_its_own() -> None:
    detect = {"wann ist die frist": ("de", 0.99)}
    analyzer = TextAnalyzer(
        query_languages=("en",), detect=lambda text: detect.get(text.lower(), ("en", 0.2))
    )
    assert analyzer.query_languages_for("Wann ist die Frist") == ("en", "de")
    assert analyzer.query_languages_for("running shoes") == ("en",)  # a guess below confidence is not used
    both = TextAnalyzer(query_languages=("en", "de"))
    assert {"run", "running"} <= set(both.query_terms("running"))  # as an English and as a German note


def test_a_notes_language_comes_from_frontmatter_then_detection_then_the_default() -> None:
    sure = TextAnalyzer(default_language="fr", detect=lambda text: ("de", 0.97))
    unsure = TextAnalyzer(default_language="fr", detect=lambda text: ("de", 0.3))
    assert sure.note_language("ru", "Die Katze") == "ru"
    assert sure.note_language(None, "Die Katze") == "de"
    assert unsure.note_language(None, "Die Katze") == "fr"
    assert TextAnalyzer().note_language(None, "anything") == "en"  # no detector


@pytest.mark.parametrize(
    ("value", "code"),
    [
        ("de", "de"),
        ("de-AT", "de"),
        ("pt_BR", "pt"),
        ("German", "de"),
        ("日本語", "ja"),
        ("", None),
        (3, None),
    ],
)
def test_frontmatter_language_values(value: object, code: str | None) -> None:
    assert language_code(value) == code


def test_a_question_in_another_language_than_the_vault_is_foreign() -> None:
    english = TextAnalyzer(query_languages=("de",), detect=lambda text: ("en", 0.99))
    assert english.foreign("How many points did the defense give up?")
    assert not TextAnalyzer(query_languages=("en",), detect=lambda text: ("en", 0.99)).foreign("tax return")
    # no detector needed when the script differs: English words about Chinese notes
    assert TextAnalyzer(query_languages=("zh",)).foreign("tax return deadline")
    assert not TextAnalyzer(query_languages=("zh",)).foreign("Kyoto 旅行")
    assert not TextAnalyzer().foreign("anything")  # the vault's languages are not known


def test_words_keep_their_marks() -> None:
    assert words("पढ़ना और लिखना") == ["पढ़ना", "और", "लिखना"]
    assert words("น้ำซุป ราเมน") == ["น้ำซุป", "ราเมน"]


def test_english_terms_are_what_they_were() -> None:
    # English indexes must not move: ASCII words are lower-cased, stop words dropped, Snowball English
    assert terms("How much do I owe Sreenivas? Deciding on x86_64 in 2026", "en") == [
        "owe",
        "sreeniva",
        "decid",
        "x86",
        "64",
        "2026",
    ]


def test_everything_that_shapes_stored_terms_is_in_the_fingerprint() -> None:
    # a different analysis must never write into (or be read from) an index built with another
    base = SparseEncoder(analyzer=TextAnalyzer(tools="py3langid-0.4.0 pyphen-0.18.1"))
    others = [
        SparseEncoder(analyzer=TextAnalyzer(default_language="de", tools="py3langid-0.4.0 pyphen-0.18.1")),
        SparseEncoder(analyzer=TextAnalyzer(tools="py3langid-0.4.0 compounds=off")),
        SparseEncoder(analyzer=TextAnalyzer(tools="py3langid-0.5.0 pyphen-0.18.1")),
        SparseEncoder(analyzer=TextAnalyzer(stemming=False, tools="py3langid-0.4.0 pyphen-0.18.1")),
    ]
    assert len({base.fingerprint, *(other.fingerprint for other in others)}) == 5
    assert base.fingerprint.startswith("bm25f-2 ")  # indexes of the English-only analysis are rebuilt
    # the vault's query languages only shape queries: not part of it
    queries = SparseEncoder(
        analyzer=TextAnalyzer(query_languages=("de",), tools="py3langid-0.4.0 pyphen-0.18.1")
    )
    assert queries.fingerprint == base.fingerprint
