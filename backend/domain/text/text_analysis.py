"""How text in any script becomes keyword terms: words stemmed in their own language, unspaced scripts cut
into character bigrams, compounds found by their parts.

- **Words** (letters, with their combining marks: a Hindi vowel sign or a Thai tone mark is part of its word)
  are split into runs of one script. A run of Chinese/Japanese (Han and kana together), Korean, Thai, Lao,
  Khmer or Myanmar becomes overlapping character bigrams, as Lucene's CJK analyzer does ("数据库迁移" →
  数据 据库 库迁 迁移; a lone character is a unigram): a query for 迁移 meets it without any dictionary.
  Each Han character is also a term of its own at `PART_WEIGHT` (a character is a word in Chinese: 茶
  finds 绿茶; Chinese keyword nDCG@10 on XQuAD dev 0.945 -> 0.950).
- **Every other run** is case-folded and stemmed with the Snowball stemmer of its language: the note's
  language when that language is written in the run's script, else the usual language of the script (Latin
  → English, Cyrillic → Russian, ...). Then accents are folded away (Latin and Greek only: Russian й is a
  letter of its own) so "café" meets "cafe". Stemming comes first because the stemmers know the accents
  ("nationalité" → "national"). A run with a digit is a code or a number and stays as it is.
- **Compounds** (German, Dutch, the Nordic languages, ...): a long word also yields its parts, cut where a
  hyphenation dictionary allows, at `PART_WEIGHT`, so "Steuer" finds "Steuererklärung" and "Erklärung"
  finds it too. The cutting is handed in (`Decompounder`, backend/infrastructure/languages/compounds.py).
- **A query** is stemmed in every language a note of the vault may be in (`query_languages`, from a sample of
  the vault) and in its own detected language: the same word can then meet a German note stemmed as German
  and an English note stemmed as English. With one language, a query's terms are that language's only.

Pure: the language detector and the decompounder are functions handed in by the composition root.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import Stemmer

from backend.domain.text.languages import (
    CYRILLIC,
    GREEK,
    KNOWN_LANGUAGES,
    LANGUAGE_SCRIPTS,
    LATIN,
    STEMMERS,
    UNSPACED,
    language_code,
    script_of,
    stem_language,
)

# (language, confidence 0..1) for a text, or None when the detector cannot tell
Detector = Callable[[str], tuple[str, float] | None]
# the parts of a (case-folded, unstemmed) word of `language` worth indexing on their own, or none
Decompounder = Callable[[str, str], Sequence[str]]

PART_WEIGHT = 0.5  # a compound's part counts half a word: the whole word still ranks first
COMPOUND_MIN = 8  # letters of the shortest word worth offering to the decompounder
MIN_DETECT_CONFIDENCE = 0.5  # below this the detector's guess is not used (short texts, names, codes)
DETECT_CHARS = 500  # a note's language is told from its first characters (0.18 ms; 2,000 took 0.45)


class Undetected:
    """A query's language not told yet (None is a told answer: no language confidently)."""


UNDETECTED = Undetected()

# The usual English list (as in NLTK/Lucene) plus a few question words: an agent asks full questions
# ("how much do I owe ..."), and without these the question words outrank the note's own words. Applied to
# Latin-script words whatever the language (as before languages were told apart).
STOP_WORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
    nor not now of off on once only or other our ours ourselves out over own same she should so some such
    than that the their theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your yours yourself
    yourselves s t d ll m re ve much many also""".split()
)


def _marks() -> str:
    """A character class body of every combining mark of the first two planes (Mn, Mc, Me)."""
    ranges: list[list[int]] = []
    for cp in range(0x20000):
        if unicodedata.category(chr(cp)) in ("Mn", "Mc", "Me"):
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    return "".join(re.escape(chr(a)) + ("-" + re.escape(chr(b)) if b > a else "") for a, b in ranges)


# A word: letters and digits with the marks inside and after them (Python's \w leaves marks out, which cut
# Hindi and Thai words at every vowel sign). Written as a run of letters, then marks and letters again, so
# text without marks is matched at the speed of a plain letter run.
_MARKS = _marks()
_TOKEN = re.compile(rf"[^\W_]+(?:[{_MARKS}]+[^\W_]*)*")
# the same words in a text without marks (every mark is beyond ASCII): half the time of _TOKEN on a 1 KB text
_PLAIN_TOKEN = re.compile(r"[^\W_]+")


def runs(token: str) -> list[tuple[str, str]]:
    """`token` cut into runs of one script class; a combining mark stays with the run it follows."""
    out: list[tuple[str, str]] = []
    current, start = "", 0
    for i, ch in enumerate(token):
        script = current if (i and unicodedata.combining(ch)) else script_of(ch)
        if script != current and i:
            out.append((current, token[start:i]))
            start = i
        current = script
    out.append((current, token[start:]))
    return out


def words(text: str) -> list[str]:
    """The words of `text` as written (letters and digits with their marks)."""
    return (_PLAIN_TOKEN if text.isascii() else _TOKEN).findall(text)


def _is_han(ch: str) -> bool:
    cp = ord(ch)
    return 0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0xF900 <= cp <= 0xFAFF or cp >= 0x20000


def bigrams(run: str) -> list[str]:
    """Overlapping character pairs of an unspaced run; a single character is its own term."""
    if len(run) < 2:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=64)
def _stemmer(name: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(name)


def strip_marks(text: str) -> str:
    """`text` in compatibility forms ("１１Ｃ３" as "11C3", "m²" as "m2") without its accents, case kept."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@lru_cache(maxsize=1 << 16)
def _fold_stem(stem: str, script: str) -> str:
    """A stem as the index compares it: accents gone in Latin and Greek, ё as е in Cyrillic."""
    if script in (LATIN, GREEK):
        return stem if stem.isascii() else strip_marks(stem)
    if script == CYRILLIC:
        return stem.replace("ё", "е")
    return stem


@dataclass(frozen=True, slots=True)
class TextAnalyzer:
    """Turns note text and queries into index terms (see the module docstring).

    `default_language`: a note's language when its frontmatter names none and the detector cannot tell.
    `query_languages`: languages every query is also stemmed in (the vault's own). `tools` names the
    detector and decompounder (with versions): what they decide shapes stored terms, so it is part of the
    fingerprint."""

    stemming: bool = True
    default_language: str = "en"
    query_languages: tuple[str, ...] = ()
    detect: Detector | None = field(default=None, compare=False)
    decompound: Decompounder | None = field(default=None, compare=False)
    tools: str = ""
    # A stop word's weight in a query. Above 0 the notes' stop words are indexed too (but add nothing to a
    # text's length), so a question's "not", "all" or "many" can break a tie its other words leave.
    stop_weight: float = 0.0

    @property
    def fingerprint(self) -> str:
        stem = "snowball" if self.stemming else "off"
        stops = " stops=indexed" if self.stop_weight > 0 else ""  # the query's weight shapes no stored term
        return (
            f"text-2 stem={stem} default={self.default_language} bigrams=unspaced unigrams=han "
            f"part={PART_WEIGHT:g} detect={DETECT_CHARS}@{MIN_DETECT_CONFIDENCE:g}{stops} {self.tools}"
        ).strip()

    def stop_terms(self, language: str) -> frozenset[str]:
        """The index terms the stop words of a `language` text become (what a text's length leaves out)."""
        return _stop_terms(stem_language(language, LATIN) if self.stemming else None)

    def detected(self, text: str) -> str | None:
        """The language of `text` when the detector is confident enough, else None."""
        if self.detect is None or not text.strip():
            return None
        guess = self.detect(text[:DETECT_CHARS])
        if guess is None or guess[1] < MIN_DETECT_CONFIDENCE:
            return None
        return guess[0]

    def note_language(self, declared: object, text: str) -> str:
        """A note's language: its frontmatter's, else detected from its text, else the default."""
        return language_code(declared) or self.detected(text) or self.default_language

    def terms(self, text: str, language: str) -> list[tuple[str, float]]:
        """The index terms of a note's text (or one of its fields) with their weights, in order."""
        out: list[tuple[str, float]] = []
        append = out.append
        latin = stem_language(language, LATIN) if self.stemming else None
        stems = _stem_table(latin)
        stops = self.stop_weight > 0  # indexed at full weight; the query weighs them
        for token in words(text):
            if not token.isascii():
                out.extend(self._token_terms(token, (language,), 1.0 if stops else 0.0))
                continue
            # the common case, one plain word: a table lookup instead of the general path
            word = token.lower()
            if word in STOP_WORDS and not stops:
                continue
            if stems is None or not word.isalpha():  # no stemming, or a number or a code ("x86")
                append((word, 1.0))
                continue
            stem = stems.get(word)
            if stem is None:
                stem = stems[word] = _stem(latin, word, LATIN)
            append((stem, 1.0))
            if self.decompound is not None and len(word) >= COMPOUND_MIN and latin is not None:
                if self.decompound(latin, word):  # cached: only compounding languages have parts
                    out.extend(self._parts(latin, word, LATIN, {stem}))
        return out

    def query_terms(self, text: str, languages: Sequence[str] | None = None) -> dict[str, float]:
        """A query's terms, each with its weight: stemmed in its own language and the vault's (`languages`:
        those, already told by `query_languages_for`)."""
        if languages is None:
            languages = self.query_languages_for(text)
        terms: dict[str, float] = {}
        for token in words(text):
            for term, weight in self._token_terms(token, languages, self.stop_weight):
                if weight > terms.get(term, 0.0):
                    terms[term] = weight
        return terms

    def foreign(self, text: str, own: str | None | Undetected = UNDETECTED) -> bool:
        """Whether a query is in a language none of the vault's main languages is: confidently detected as
        another language we know, or written in a script none of them uses (English about Chinese notes).
        False when the vault's languages are not known. `own`: its language, already `detected`."""
        if not self.query_languages:
            return False
        if isinstance(own, Undetected):
            own = self.detected(text)
        if own is not None and own in KNOWN_LANGUAGES and own not in self.query_languages:
            return True
        scripts = {script_of(ch) for ch in text if ch.isalpha()}
        vault_scripts = {LANGUAGE_SCRIPTS.get(lang) for lang in self.query_languages}
        return bool(scripts) and None not in vault_scripts and not scripts & vault_scripts

    def query_languages_for(self, text: str, own: str | None | Undetected = UNDETECTED) -> tuple[str, ...]:
        """What a query is stemmed in: the vault's languages and its own (`own`: already `detected`)."""
        if isinstance(own, Undetected):
            own = self.detected(text)
        languages = (*self.query_languages, own) if own else self.query_languages
        return tuple(dict.fromkeys(languages or (self.default_language,)))

    def word_terms(self, word: str, languages: Sequence[str]) -> set[str]:
        """Every term one written word yields in any of `languages` (what highlights compare)."""
        if word.isascii() and word.isalpha() and self.stemming:  # most words of most notes: table lookups
            lowered = word.lower()
            if lowered in STOP_WORDS:
                return set()
            found = set()
            for language in languages:
                chosen = stem_language(language, LATIN)
                stems = _stem_table(chosen)
                stem = stems.get(lowered) if stems is not None else lowered
                if stem is None:
                    stem = stems[lowered] = _stem(chosen, lowered, LATIN)  # type: ignore[index]
                found.add(stem)
                if chosen and self.decompound is not None and len(lowered) >= COMPOUND_MIN:
                    if self.decompound(chosen, lowered):
                        found.update(term for term, _ in self._parts(chosen, lowered, LATIN, {stem}))
            return found
        tokens = _TOKEN.findall(word)
        return {term for token in tokens for term, _ in self._token_terms(token, languages, 0.0)}

    def joined_terms(self, parts: Sequence[str], languages: Sequence[str]) -> set[str]:
        """The terms of `parts` written together as one word ("mental", "health" -> the stem of
        "mentalhealth"), one a language; none when the joined word is a stop word, or is cut into several
        terms (an unspaced script)."""
        tokens = _TOKEN.findall("".join(parts))
        if len(tokens) != 1:
            return set()
        found: set[str] = set()
        for language in languages:
            whole = [term for term, weight in self._token_terms(tokens[0], (language,), 0.0) if weight >= 1.0]
            if len(whole) == 1:
                found.add(whole[0])
        return found

    def _token_terms(self, token: str, languages: Sequence[str], stop: float) -> Iterable[tuple[str, float]]:
        """`stop`: a stop word's weight (0: left out)."""
        if token.isascii():
            yield from self._word_terms(token.lower(), LATIN, languages, stop)
            return
        token = unicodedata.normalize("NFKC", token)
        for script, run in runs(token):
            if script in UNSPACED:
                run = run.casefold()
                yield from ((gram, 1.0) for gram in bigrams(run))
                if script == "cjk" and len(run) > 1:
                    yield from ((ch, PART_WEIGHT) for ch in run if _is_han(ch))
            else:
                yield from self._word_terms(run.casefold(), script, languages, stop)

    def _word_terms(
        self, word: str, script: str, languages: Sequence[str], stop: float
    ) -> Iterable[tuple[str, float]]:
        if script == LATIN and word in STOP_WORDS:
            if stop > 0:  # a stop word is one term a language, never split into parts
                yield from ((term, stop) for term in dict.fromkeys(self._stop_stems(word, languages)))
            return
        if not self.stemming or any(ch.isdigit() for ch in word):
            yield _fold_stem(word, script), 1.0
            return
        seen: set[str] = set()
        for language in languages:
            chosen = stem_language(language, script)
            whole = _stem(chosen, word, script)
            if whole not in seen:
                seen.add(whole)
                yield whole, 1.0
            if chosen is None or self.decompound is None:
                continue
            yield from self._parts(chosen, word, script, seen)

    def _stop_stems(self, word: str, languages: Sequence[str]) -> Iterable[str]:
        if not self.stemming:
            yield word
            return
        for language in languages:
            yield _stem(stem_language(language, LATIN), word, LATIN)

    def _parts(self, language: str, word: str, script: str, seen: set[str]) -> Iterable[tuple[str, float]]:
        """The stems of a compound's parts not already in `seen` (which they join)."""
        assert self.decompound is not None
        for part in self.decompound(language, word):
            stemmed = _stem(language, part, script)
            if stemmed not in seen and part not in STOP_WORDS:
                seen.add(stemmed)
                yield stemmed, PART_WEIGHT


@lru_cache(maxsize=64)
def _stop_terms(language: str | None) -> frozenset[str]:
    """The index terms the stop words become in `language` (None: not stemmed)."""
    if language is None:
        return STOP_WORDS
    return frozenset(_stem(language, word, LATIN) for word in STOP_WORDS)


_STEM_TABLES: dict[str, dict[str, str]] = {}
_STEM_TABLE_LIMIT = 200_000  # words remembered per language before the table starts over


def _stem_table(language: str | None) -> dict[str, str] | None:
    """Each plain word's stem in `language`, worked out once (None: no stemming)."""
    if language is None:
        return None
    table = _STEM_TABLES.setdefault(language, {})
    if len(table) > _STEM_TABLE_LIMIT:
        table.clear()
    return table


def _stem(language: str | None, word: str, script: str) -> str:
    if language is None:
        return _fold_stem(word, script)
    return _fold_stem(_stemmer(STEMMERS[language][0]).stemWord(word), script)
