"""Tags as words: what a tag says in plain words, and the acronyms a vault defines for itself.

- **A tag's words.** `#mental-health`, `#mental_health`, `#MentalHealth` and `#health/mental` are split
  where their writer marked a word boundary: `-`, `_`, `/` and a change of case ("MentalHealth" -> Mental
  Health, "GADTherapy" -> GAD Therapy). A run-together lowercase tag (`#mentalhealth`) marks none; no
  dictionary splits it. Instead each tag segment is also one *tag term* (`TAG_TERM` + its words joined and
  stemmed as one word), and a question's adjacent words are joined the same way (`span_terms`),
  so "mental health" meets `#mentalhealth`, `#MentalHealth` and `#mental-health` alike. The `#` keeps tag
  terms apart from body words: "data base" in a question never meets "database" in a note's text.
- **Acronyms defined in the vault.** "GAD (generalised anxiety disorder)" or "generalised anxiety disorder
  (GAD)" in any note defines GAD: the initials of the expansion's words (stop words aside) spell it. A
  question holding the expansion then also asks for the tag `#GAD`.
"""

from __future__ import annotations

import re
from collections.abc import Container, Sequence

from backend.domain.text.text_analysis import STOP_WORDS, TextAnalyzer, strip_marks, words

TAG_TERM = "#"  # prefix of a tag term; no word term holds it (words are letters and digits)
MAX_DEFINITIONS = 32  # acronyms one note may define (a glossary note; beyond that, noise)
SPAN_WORDS = (2, 3)  # adjacent question words joined into a tag term: "state of mind" meets #stateofmind
HEAD_CHARS = 4  # letters of a joined span compared before it is stemmed (`head`)
MAX_SPAN_WORDS = 48  # question words looked at for spans (a long conversation holds earlier turns too)
_HASHTAG = re.compile(r"(?<![^\s(])#([^\W\d][\w/-]*)")  # a tag written in a question, as in a note
_ACRONYM = r"[A-Z][A-Z0-9]{1,7}"
_AFTER = re.compile(rf"\b({_ACRONYM})\s*\(([^()\n]{{3,120}})\)")  # GAD (generalised anxiety disorder)
_BRACKETED = re.compile(rf"\(({_ACRONYM})\)")  # generalised anxiety disorder (GAD)
_BEFORE_CHARS = 160  # of the line before the brackets, at most, read for the expansion
_NOT_BEFORE = "()\n"  # the expansion is text of its own line, outside other brackets


def camel_parts(token: str) -> list[str]:
    """A word cut where its case changes to upper ("MentalHealth" -> Mental, Health; "GADTherapy" -> GAD,
    Therapy); a word in one case is itself."""
    parts: list[str] = []
    start = 0
    for i in range(1, len(token)):
        before, here = token[i - 1], token[i]
        if here.isupper() and (
            before.islower() or (before.isupper() and i + 1 < len(token) and token[i + 1].islower())
        ):
            parts.append(token[start:i])
            start = i
    parts.append(token[start:])
    return parts


def tag_segments(tag: str) -> list[list[str]]:
    """The words of each segment of a nested tag, as written ("health/MentalHealth" -> [health],
    [Mental, Health])."""
    segments = (words(segment) for segment in tag.split("/"))
    return [[part for token in tokens for part in camel_parts(token)] for tokens in segments if tokens]


def tag_text(tags: Sequence[str]) -> str:
    """Tags as words, for the text that is embedded ("mental-health", "health/sleep" -> "mental health,
    health sleep")."""
    phrases = (tag_word_text(tag) for tag in tags)
    return ", ".join(dict.fromkeys(phrase for phrase in phrases if phrase))


def tag_terms(analyzer: TextAnalyzer, tag: str, languages: Sequence[str]) -> set[str]:
    """The tag terms of a tag: one for each segment, its words joined as one word and stemmed."""
    return {
        TAG_TERM + term for segment in tag_segments(tag) for term in analyzer.joined_terms(segment, languages)
    }


def tag_word_text(tag: str) -> str:
    """A tag's words as text ("health/MentalHealth" -> "health Mental Health"), to be analysed as words."""
    return " ".join(word for segment in tag_segments(tag) for word in segment)


def span_terms(
    analyzer: TextAnalyzer,
    text: str,
    languages: Sequence[str],
    heads: Container[str] | None = None,
    sizes: Sequence[int] = SPAN_WORDS,
) -> dict[str, str]:
    """The tag terms a question may mean, each with the words of the question it stands for: its adjacent
    words joined (`SPAN_WORDS`), and the tags it writes with a `#`. Most are no tag of the vault; the caller
    keeps those that are. `heads`: the `head`s of the vault's tag segments; a span with another head is no
    tag of the vault and is not stemmed at all. `sizes`: the spans' lengths in words."""
    tokens = words(text)[:MAX_SPAN_WORDS]
    found: dict[str, str] = {}
    for size in sizes:
        for start in range(len(tokens) - size + 1):
            span = tokens[start : start + size]
            if heads is not None and head(span) not in heads:
                continue
            if all(word.lower() in STOP_WORDS for word in span):
                continue
            for term in analyzer.joined_terms(span, languages):
                found.setdefault(TAG_TERM + term, " ".join(span))
    for tag in _HASHTAG.findall(text):
        for term in tag_terms(analyzer, tag, languages):
            found.setdefault(term, tag_word_text(tag))
    return found


def head(words_of_segment: Sequence[str]) -> str:
    """The first letters of words joined, case and accents folded: stemming cuts a word's end, so a span and
    a tag segment with different heads never have the same tag term (a cheap test before stemming)."""
    start = "".join(words_of_segment)[:HEAD_CHARS].casefold()
    return start if start.isascii() else strip_marks(start)


def acronym_definitions(text: str) -> tuple[tuple[str, str], ...]:
    """The acronyms `text` defines, each with its expansion as written, in order of first definition."""
    if "(" not in text:  # most notes: no regex pass at all
        return ()
    found: dict[str, str] = {}
    for match in _AFTER.finditer(text):
        expansion = _leading_expansion(match.group(1), words(match.group(2)))
        if expansion and match.group(1) not in found:
            found[match.group(1)] = expansion
    for acronym, before in _bracketed(text):
        expansion = _trailing_expansion(acronym, words(before))
        if expansion and acronym not in found:
            found[acronym] = expansion
    return tuple(list(found.items())[:MAX_DEFINITIONS])


def _bracketed(text: str) -> list[tuple[str, str]]:
    """Each acronym written alone in brackets, with the text before it on its line (outside other brackets,
    so never before the previous acronym's; at most _BEFORE_CHARS). Read back from each bracket: a pattern
    scanning forward for the text, then the brackets, tried 160 lengths at every character of a note, and
    took half of the keyword indexing of a vault of long web clippings (docs/measurements.md)."""
    found: list[tuple[str, str]] = []
    for match in _BRACKETED.finditer(text):
        stop = match.start()
        while stop > 0 and text[stop - 1].isspace():
            stop -= 1
        start, limit = stop, max(0, stop - _BEFORE_CHARS)
        while start > limit and text[start - 1] not in _NOT_BEFORE:
            start -= 1
        if stop - start >= 3:
            found.append((match.group(1), text[start:stop]))
    return found


def _spells(acronym: str, phrase: list[str]) -> bool:
    content = [word for word in phrase if word.lower() not in STOP_WORDS]
    initials = "".join(word[0] for word in content).lower()
    return len(content) >= 2 and initials == acronym.lower() and not all(w.isupper() for w in content)


def _leading_expansion(acronym: str, inside: list[str]) -> str | None:
    """The first words inside the brackets that spell `acronym` ("GAD (generalised anxiety disorder,
    diagnosed in May)")."""
    for end in range(2, min(len(inside), 2 * len(acronym) + 2) + 1):
        if _spells(acronym, inside[:end]):
            return " ".join(inside[:end])
    return None


def _trailing_expansion(acronym: str, before: list[str]) -> str | None:
    """The last words before the brackets that spell `acronym` ("I was told it is generalised anxiety
    disorder (GAD)")."""
    for start in range(len(before) - 2, max(len(before) - 2 * len(acronym) - 2, 0) - 1, -1):
        if _spells(acronym, before[start:]):
            return " ".join(before[start:])
    return None
