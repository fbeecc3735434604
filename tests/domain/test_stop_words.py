"""Stop words at a low weight (KEYWORD_STOP_WEIGHT, issue 27 point 5): indexed, weighed lightly in a
question, never counted in a chunk's length."""

from __future__ import annotations

from backend.domain.models import SparseVector
from backend.domain.text.sparse import SparseEncoder, term_index
from backend.domain.text.text_analysis import TextAnalyzer


def encoder(stop_weight: float) -> SparseEncoder:
    return SparseEncoder(analyzer=TextAnalyzer(stop_weight=stop_weight))


def dot(query: SparseVector, doc: SparseVector) -> float:
    values = dict(zip(doc.indices, doc.values, strict=True))
    pairs = zip(query.indices, query.values, strict=True)
    return sum(weight * values.get(index, 0.0) for index, weight in pairs)


def value(vector: SparseVector, term: str) -> float:
    return dict(zip(vector.indices, vector.values, strict=True))[term_index(term)]


NOT_AGREE = "Anarchists do not agree with any government."
AGREE = "Anarchists agree with any government."
QUESTION = "What is the group called that does not agree with government at all?"


def test_a_stop_word_the_question_shares_breaks_a_tie_only_when_weighed() -> None:
    for weight, breaks in ((0.5, True), (0.0, False)):
        enc = encoder(weight)
        query = enc.encode_query(QUESTION)
        with_not, without = (dot(query, enc.encode_document(text)) for text in (NOT_AGREE, AGREE))
        assert (with_not > without) is breaks, weight


def test_stop_words_weigh_less_than_the_questions_own_words() -> None:
    terms = TextAnalyzer(stop_weight=0.5).query_terms("how many points did the defense surrender")
    assert terms["defens"] == terms["point"] == 1.0
    assert terms["mani"] == terms["the"] == 0.5
    assert "the" not in TextAnalyzer().query_terms("how many points did the defense surrender")


def test_indexed_stop_words_do_not_make_a_chunk_longer() -> None:
    # BM25 divides by a chunk's length: "the"s must not make its real words count less
    text = "The plan of the migration is the plan of the team."
    plain, with_stops = encoder(0.0).encode_document(text), encoder(0.5).encode_document(text)
    assert value(with_stops, "plan") == value(plain, "plan")
    assert value(with_stops, "the") > 0
    assert term_index("the") not in plain.indices


def test_indexing_stop_words_is_part_of_the_index_identity_but_their_query_weight_is_not() -> None:
    off, low, high = (TextAnalyzer(stop_weight=w).fingerprint for w in (0.0, 0.3, 0.5))
    assert off != low
    assert low == high


def test_stop_words_still_never_highlight() -> None:
    assert TextAnalyzer(stop_weight=0.5).word_terms("the", ("en",)) == set()


def test_a_hit_is_judged_by_the_questions_own_words_only() -> None:
    # confidence counts how many of the question's words a hit holds: "what is the" must not count
    judged = encoder(0.5).content_only().encode_query("what is the plan")
    assert judged == encoder(0.0).encode_query("what is the plan")
    assert judged.indices == (term_index("plan"),)
