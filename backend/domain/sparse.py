"""BM25-style sparse vectors. Qdrant's IDF modifier supplies the IDF half at query time.

A document's value for a term is BM25's saturated term frequency
    tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avg_len))
and a query's is 1 per distinct term, so Qdrant's dot product with IDF is the BM25 score.
Terms map to indices by CRC32, which is stable across processes and machines (Python's hash() is not).
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import Counter
from dataclasses import dataclass

from backend.domain.models import SparseVector

_WORD = re.compile(r"[^\W_]+", re.UNICODE)

# The usual English list (as in NLTK/Lucene) plus a few question words: an agent asks full questions
# ("how much do I owe ..."), and without these the question words outrank the note's own words.
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve much many also""".split()
)


def _fold(text: str) -> str:
    # Strip accents so "café" and "cafe" meet; keep every other letter (Cyrillic, CJK...) as is.
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokenize(text: str) -> list[str]:
    """Lower-cased, accent-folded word tokens without stop words. Numbers are kept ("2026", "42")."""
    return [tok for tok in _WORD.findall(_fold(text)) if tok not in STOP_WORDS]


def term_index(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class SparseEncoder:
    k1: float = 1.2
    b: float = 0.75
    avg_doc_len: float = 120.0

    def encode_document(self, text: str) -> SparseVector:
        tokens = tokenize(text)
        if not tokens:
            return SparseVector((), ())
        counts = Counter(tokens)
        norm = self.k1 * (1 - self.b + self.b * len(tokens) / self.avg_doc_len)
        return _to_vector({term: tf * (self.k1 + 1) / (tf + norm) for term, tf in counts.items()})

    def encode_query(self, text: str) -> SparseVector:
        return _to_vector(dict.fromkeys(tokenize(text), 1.0))


def _to_vector(weights: dict[str, float]) -> SparseVector:
    merged: dict[int, float] = {}
    for term, weight in weights.items():
        idx = term_index(term)
        merged[idx] = merged.get(idx, 0.0) + weight  # a CRC collision adds up instead of overwriting
    ordered = sorted(merged.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(round(v, 6) for _, v in ordered))
