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
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from backend.domain.models import SparseVector
from backend.domain.text.tag_words import tag_terms, tag_word_text
from backend.domain.text.text_analysis import STOP_WORDS, TextAnalyzer

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


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
    """Lower case without accents, as sensitive words are compared ("Café" -> "cafe")."""
    if text.isascii():  # the common case
        return text.lower()
    return text.translate(_FOLDED)


def tokenize(text: str) -> list[str]:
    """Lower-cased, accent-folded word tokens without English stop words (sensitive-word matching)."""
    return [tok for tok in _WORD.findall(fold(text)) if tok not in STOP_WORDS]


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
    properties: float = 1.0  # a note's properties as written ("author Oliver Burkeman"): note_properties.py


@dataclass(frozen=True, slots=True)
class DocumentFields:
    """The text of one chunk, split by where it comes from in the note."""

    body: str = ""
    file_name: str = ""  # file stem, without folders or extension
    title: str = ""
    aliases: Sequence[str] = ()
    tags: Sequence[str] = ()
    headings: Sequence[str] = ()  # the chunk's heading path
    properties: Sequence[str] = ()  # the note's properties as "name value" (note_properties.property_texts)
    language: str | None = None  # the note's (TextAnalyzer.note_language); None: told from `body`


Terms = list[tuple[str, float]]


@dataclass(frozen=True, slots=True)
class SparseEncoder:
    k1: float = 1.2
    b: float = 0.5
    avg_doc_len: float = 120.0  # body terms per chunk that count as "average length"
    weights: FieldWeights = field(default_factory=FieldWeights)
    analyzer: TextAnalyzer = field(default_factory=TextAnalyzer)

    @property
    def fingerprint(self) -> str:
        """Everything that shapes stored keyword vectors: a change means the index must be rebuilt."""
        w = self.weights
        names = f"{w.file_name:g}/{w.title:g}/{w.aliases:g}/{w.tags:g}/{w.headings:g}/{w.body:g}"
        if w.properties:
            names += f"/properties={w.properties:g}"
        return (
            f"bm25f-2 k1={self.k1:g} b={self.b:g} avgdl={self.avg_doc_len:g} w={names} tags=words+joined "
            f"{self.analyzer.fingerprint}"
        )

    def encode_document(self, document: DocumentFields | str) -> SparseVector:
        fields = DocumentFields(body=document) if isinstance(document, str) else document
        language = fields.language or self.analyzer.note_language(None, fields.body or fields.title)
        tf: defaultdict[str, float] = defaultdict(float)
        body = self.analyzer.terms(fields.body, language)
        if body:
            # a compound's parts add no length, nor do stop words (when the analyzer indexes them)
            stops = self.analyzer.stop_terms(language) if self.analyzer.stop_weight > 0 else frozenset()
            length = sum(1 for term, weight in body if weight >= 1.0 and term not in stops)
            norm = 1 - self.b + self.b * length / self.avg_doc_len
            _add(tf, body, self.weights.body / norm)
        w = self.weights
        for names, weight in self._names(fields, language):
            _add(tf, names, weight)
        _add(tf, self._tag_terms(fields.tags, language), w.tags)
        _add(tf, self._terms_of(fields.headings, language), w.headings)
        _add(tf, self._terms_of(fields.properties, language), w.properties)
        return _to_vector({term: t * (self.k1 + 1) / (t + self.k1) for term, t in tf.items() if t > 0})

    def encode_query(self, text: str) -> SparseVector:
        return _to_vector(self.analyzer.query_terms(text))

    def encode_terms(self, terms: Mapping[str, float]) -> SparseVector:
        """A query's vector from its terms: `analyzer.query_terms`, with any others it means (its tags)."""
        return _to_vector(dict(terms))

    def content_only(self) -> SparseEncoder:
        """This encoder with stop words left out: what a hit's confidence is judged by (how many of the
        question's own words it holds), the same as before stop words were indexed, and as fast."""
        if self.analyzer.stop_weight <= 0:
            return self
        return replace(self, analyzer=replace(self.analyzer, stop_weight=0.0))

    def _terms_of(self, texts: Iterable[str], language: str) -> Terms:
        return [term for text in texts for term in self.analyzer.terms(text, language)]

    def _tag_terms(self, tags: Iterable[str], language: str) -> Terms:
        """A tag's words (as written, and cut at `-`, `_`, `/` and case changes: #MentalHealth is "mental"
        and "health" too) once each, and its tag terms (see backend/domain/text/tag_words.py)."""
        out: Terms = []
        for tag in tags:
            whole = self.analyzer.terms(tag, language)
            split = self.analyzer.terms(tag_word_text(tag), language) if not tag.islower() else []
            out.extend(dict.fromkeys([*whole, *split]))
            out.extend((term, 1.0) for term in sorted(tag_terms(self.analyzer, tag, (language,))))
        return out

    def _names(self, fields: DocumentFields, language: str) -> list[tuple[Terms, float]]:
        # A title is usually the file name (Obsidian shows the file name when there is no other title):
        # the same name given twice is one name, at the higher weight, not a doubled one.
        best: dict[tuple[tuple[str, float], ...], float] = {}
        candidates = [(fields.file_name, self.weights.file_name), (fields.title, self.weights.title)]
        candidates += [(alias, self.weights.aliases) for alias in fields.aliases]
        for name, weight in candidates:
            key = tuple(self.analyzer.terms(name, language))
            if key and weight > best.get(key, 0.0):
                best[key] = weight
        return [(list(key), weight) for key, weight in best.items()]


def _add(tf: defaultdict[str, float], terms: Iterable[tuple[str, float]], weight: float) -> None:
    if weight <= 0:
        return
    for term, share in terms:
        tf[term] += weight * share


def _to_vector(weights: dict[str, float]) -> SparseVector:
    merged: dict[int, float] = {}
    for term, weight in weights.items():
        idx = term_index(term)
        merged[idx] = merged.get(idx, 0.0) + weight  # a CRC collision adds up instead of overwriting
    ordered = sorted(merged.items())
    return SparseVector(tuple(i for i, _ in ordered), tuple(round(v, 6) for _, v in ordered))
