"""BM25F-style sparse vectors. Qdrant's IDF modifier supplies the IDF half at query time.

A chunk is encoded from fields (file name, title, aliases, tags, heading path, body). Each field's term
frequencies are weighted and, for the body, length-normalised, then summed and saturated once (BM25F):
    tf~ = sum_f w_f * tf_f / (1 - b_f + b_f * len_f / avg_len_f)
    value = tf~ * (k1 + 1) / (tf~ + k1)
Saturating the sum, not each field, is why a name match lifts a note without letting a term repeated in
every field run away. A query's value is 1 per distinct term, so Qdrant's dot product with IDF is the score.
Terms map to indices by CRC32, which is stable across processes and machines (Python's hash() is not).
"""

from __future__ import annotations

import re
import unicodedata
import zlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import Stemmer

from backend.domain.models import SparseVector

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STEMMABLE = re.compile(r"[a-z]+")  # English stemming must not touch other scripts, numbers or codes

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


def _fold_char(ch: str) -> str:
    decomposed = unicodedata.normalize("NFKD", ch.casefold())
    return "".join(part for part in decomposed if not unicodedata.combining(part))


_FOLD_TABLE_LIMIT = 1 << 16


class _FoldTable(dict[int, str]):
    """Each character's folded form, worked out once: `str.translate` then folds at C speed. Folding a
    character at a time is folding the text (case folding maps single characters; NFKD decomposes them one by
    one and only reorders combining marks, which are all dropped)."""

    def __missing__(self, codepoint: int) -> str:
        if len(self) >= _FOLD_TABLE_LIMIT:  # a note holding every code point must not pin ~100 MB for good
            self.clear()
        folded = self[codepoint] = _fold_char(chr(codepoint))
        return folded


_FOLDED = _FoldTable()


def fold(text: str) -> str:
    """Lower case without accents, as the keyword side compares words ("Café" -> "cafe").

    Strips accents so "café" and "cafe" meet, and keeps every other letter (Cyrillic, CJK...) as it is."""
    if text.isascii():  # the common case
        return text.lower()
    return text.translate(_FOLDED)


def tokenize(text: str) -> list[str]:
    """Lower-cased, accent-folded word tokens without stop words. Numbers are kept ("2026", "42")."""
    return [tok for tok in _WORD.findall(fold(text)) if tok not in STOP_WORDS]


@lru_cache(maxsize=1)
def _english() -> Stemmer.Stemmer:
    return Stemmer.Stemmer("english")


def stem(token: str) -> str:
    """Snowball English stem of a Latin-letter token; anything else (digits, other scripts) as it is."""
    return _english().stemWord(token) if _STEMMABLE.fullmatch(token) else token


def _tokenize_word(word: str) -> list[str]:
    if word.isascii() and word.isalnum():  # one plain word, the common case: no regex needed
        lowered = word.lower()
        return [] if lowered in STOP_WORDS else [lowered]
    return tokenize(word)


def _stem_all(tokens: list[str]) -> list[str]:
    positions = [i for i, tok in enumerate(tokens) if _STEMMABLE.fullmatch(tok)]
    out = list(tokens)
    for i, stemmed in zip(positions, _english().stemWords([tokens[i] for i in positions]), strict=True):
        out[i] = stemmed
    return out


def analyze_words(words: Sequence[str], *, stemming: bool = True) -> list[list[str]]:
    """`analyze` of many short texts at once: the same terms, with one stemmer call for all of them."""
    tokenized = [_tokenize_word(word) for word in words]
    if not stemming:
        return tokenized
    flat = [tok for tokens in tokenized for tok in tokens]
    stemmed = iter(_stem_all(flat))
    return [[next(stemmed) for _ in tokens] for tokens in tokenized]


def analyze(text: str, *, stemming: bool = True) -> list[str]:
    """The index terms of a text: `tokenize`, then stemmed, so "deciding" meets "decides"."""
    tokens = tokenize(text)
    return [stem(tok) for tok in tokens] if stemming else tokens


def term_index(term: str) -> int:
    return zlib.crc32(term.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class FieldWeights:
    """How much one occurrence of a term counts in each field, relative to the body text."""

    file_name: float = 3.0
    title: float = 3.0
    aliases: float = 3.0
    tags: float = 2.0
    headings: float = 1.5
    body: float = 1.0


@dataclass(frozen=True, slots=True)
class DocumentFields:
    """The text of one chunk, split by where it comes from in the note."""

    body: str = ""
    file_name: str = ""  # file stem, without folders or extension
    title: str = ""
    aliases: Sequence[str] = ()
    tags: Sequence[str] = ()
    headings: Sequence[str] = ()  # the chunk's heading path


@dataclass(frozen=True, slots=True)
class SparseEncoder:
    k1: float = 1.2
    b: float = 0.5
    avg_doc_len: float = 120.0  # body terms per chunk that count as "average length"
    weights: FieldWeights = field(default_factory=FieldWeights)
    stemming: bool = True

    @property
    def fingerprint(self) -> str:
        """Everything that shapes stored keyword vectors: a change means the index must be rebuilt."""
        w = self.weights
        names = f"{w.file_name:g}/{w.title:g}/{w.aliases:g}/{w.tags:g}/{w.headings:g}/{w.body:g}"
        stem = "english" if self.stemming else "off"
        return f"bm25f-1 k1={self.k1:g} b={self.b:g} avgdl={self.avg_doc_len:g} w={names} stem={stem}"

    def encode_document(self, document: DocumentFields | str) -> SparseVector:
        fields = DocumentFields(body=document) if isinstance(document, str) else document
        tf: defaultdict[str, float] = defaultdict(float)
        body = self._terms(fields.body)
        if body:
            norm = 1 - self.b + self.b * len(body) / self.avg_doc_len
            _add(tf, body, self.weights.body / norm)
        w = self.weights
        for names, weight in self._names(fields):
            _add(tf, names, weight)
        _add(tf, self._terms_of(fields.tags), w.tags)
        _add(tf, self._terms_of(fields.headings), w.headings)
        return _to_vector({term: t * (self.k1 + 1) / (t + self.k1) for term, t in tf.items() if t > 0})

    def encode_query(self, text: str) -> SparseVector:
        return _to_vector(dict.fromkeys(self._terms(text), 1.0))

    def _terms(self, text: str) -> list[str]:
        return analyze(text, stemming=self.stemming)

    def _terms_of(self, texts: Iterable[str]) -> list[str]:
        return [term for text in texts for term in self._terms(text)]

    def _names(self, fields: DocumentFields) -> list[tuple[list[str], float]]:
        # A title is usually the file name (Obsidian shows the file name when there is no other title):
        # the same name given twice is one name, at the higher weight, not a doubled one.
        best: dict[str, float] = {}
        candidates = [(fields.file_name, self.weights.file_name), (fields.title, self.weights.title)]
        candidates += [(alias, self.weights.aliases) for alias in fields.aliases]
        for name, weight in candidates:
            key = " ".join(self._terms(name))
            if key and weight > best.get(key, 0.0):
                best[key] = weight
        return [(key.split(" "), weight) for key, weight in best.items()]


def _add(tf: defaultdict[str, float], terms: Iterable[str], weight: float) -> None:
    if weight <= 0:
        return
    for term in terms:
        tf[term] += weight


def _to_vector(weights: dict[str, float]) -> SparseVector:
    merged: dict[int, float] = {}
    for term, weight in weights.items():
        idx = term_index(term)
        merged[idx] = merged.get(idx, 0.0) + weight  # a CRC collision adds up instead of overwriting
    ordered = sorted(merged.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(round(v, 6) for _, v in ordered))
