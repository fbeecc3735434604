"""Rules applied to a ranked result list before it is cut to `top_k`: dedupe, threshold, highlights.

Pure functions over small values, so the search use case stays a pipeline of named steps.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from backend.domain.languages import UNSPACED
from backend.domain.text_analysis import TextAnalyzer, runs, words

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class LineSpan:
    """Where a chunk sits in its note: 1-based inclusive file lines."""

    note_path: str
    start_line: int
    end_line: int

    def overlaps(self, other: LineSpan) -> bool:
        return (
            self.note_path == other.note_path
            and self.start_line <= other.end_line
            and other.start_line <= self.end_line
        )


class Scored(Protocol):
    @property
    def score(self) -> float: ...


S = TypeVar("S", bound=Scored)


def dedupe_overlapping(hits: Sequence[T], span: Callable[[T], LineSpan]) -> list[T]:
    """Drop each hit whose line range overlaps a better-ranked hit of the same note.

    Chunks of one section share their overlap lines, so neighbours repeat each other's text; keeping the
    first (best-ranked) frees the slot for other material. Chunks of one note that share no line all stay.
    `hits` must be best first; the order of the kept hits is unchanged.
    """
    kept: list[T] = []
    kept_spans: dict[str, list[LineSpan]] = {}
    for hit in hits:
        where = span(hit)
        taken = kept_spans.setdefault(where.note_path, [])
        if any(where.overlaps(other) for other in taken):
            continue
        taken.append(where)
        kept.append(hit)
    return kept


def apply_threshold(hits: Sequence[S], threshold: float | None) -> list[S]:
    """Hits scoring at least `threshold` (all of them when it is None), order unchanged."""
    if threshold is None:
        return list(hits)
    return [hit for hit in hits if hit.score >= threshold]


def highlights(query: str, text: str, *, analyzer: TextAnalyzer | None = None) -> list[str]:
    """The query's terms as they are written in `text`: each once, in order of first appearance.

    Matching uses the keyword side's analysis (case and accent folding, stop words, stemming in the query's
    languages, compound parts, bigrams), so "Cafe" in a query highlights "café" in the text, "deciding"
    highlights "decides", "Steuer" highlights "Steuererklärung", and stop words are never highlights. In
    a script written without spaces the highlight is the matched stretch ("迁移" in "数据库迁移计划").
    """
    analyzer = analyzer or TextAnalyzer()
    wanted = set(analyzer.query_terms(query))
    if not wanted:
        return []
    languages = analyzer.query_languages_for(query)
    found: list[str] = []
    seen: set[str] = set()
    matched: dict[str, list[tuple[str, set[str]]]] = {}
    for word in words(text):
        if word not in matched:  # words repeat: analyse each distinct one once
            matched[word] = _matches(analyzer, word, languages, wanted)
        for shown, terms in matched[word]:
            if terms - seen:
                seen |= terms
                found.append(shown)
    return found


def _matches(
    analyzer: TextAnalyzer, word: str, languages: Sequence[str], wanted: set[str]
) -> list[tuple[str, set[str]]]:
    """What of `word` to show as highlights, each with the query terms it matched."""
    if word.isascii():
        terms = analyzer.word_terms(word, languages) & wanted
        return [(word, terms)] if terms else []
    out: list[tuple[str, set[str]]] = []
    for script, run in runs(word):
        if script not in UNSPACED:
            terms = analyzer.word_terms(run, languages) & wanted
            out += [(run, terms)] if terms else []
            continue
        folded = run.casefold()
        spans: list[list[int]] = []  # stretches covered by matched bigrams (or a matched lone character)
        for i in range(len(folded)):
            gram = folded[i : i + 2]
            if gram in wanted and (len(gram) == 2 or len(folded) == 1):
                if spans and i <= spans[-1][1]:
                    spans[-1][1] = i + len(gram)
                else:
                    spans.append([i, i + len(gram)])
        out += [(run[a:b], {folded[a:b]}) for a, b in spans]
    return out


# -- hubs: chunks that are mostly links (index and map-of-content notes) ---------------------------------

_WIKILINK = re.compile(r"!?\[\[([^\[\]]*)\]\]")
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\(([^()\s]*)\)")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
# A map of content links to several notes, on most of its lines; how many words go with each link ("- [[X]]
# — the decision and the options") does not matter, nor how a language counts words.
HUB_MIN_NOTES = 3  # notes a chunk links to, at least
HUB_LINE_SHARE = 0.5  # ... on more than this share of its lines (headings and blank lines left out)


def is_hub(text: str) -> bool:
    """Whether a chunk is a map of content: it links to at least `HUB_MIN_NOTES` notes, and more than
    `HUB_LINE_SHARE` of its lines carry a link to one. Decided by its links alone, never by word counts."""
    if "[[" not in text and "](" not in text:
        return False  # most chunks: no link at all
    if len(linked_names(text)) < HUB_MIN_NOTES:
        return False
    lines = [line for line in text.splitlines() if line.strip() and not _HEADING_LINE.match(line)]
    linking = [line for line in lines if linked_names(line)]
    return len(linking) > HUB_LINE_SHARE * len(lines)


def linked_names(text: str) -> set[str]:
    """`name_key`-style names (case-folded file names without `.md`) of the notes a chunk links to."""
    names = set()
    for match in _WIKILINK.finditer(text):
        target = re.split(r"[|#^]", match.group(1), maxsplit=1)[0]
        names.add(_name(target))
    for match in _MD_LINK.finditer(text):
        target = match.group(2).split("#", 1)[0]
        if target and "://" not in target:
            names.add(_name(target.replace("%20", " ")))
    names.discard("")
    return names


@functools.lru_cache(maxsize=65536)  # the same note paths and link targets come back search after search
def _name(target: str) -> str:
    name = unicodedata.normalize("NFC", target.strip().rsplit("/", 1)[-1].strip()).casefold()
    return name[:-3] if name.endswith(".md") else name


def note_name(note_path: str) -> str:
    """The name a wikilink uses for the note at `note_path`, folded as `linked_names` folds targets."""
    return _name(note_path)


def hubs_after_their_notes(
    hits: Sequence[T],
    *,
    text: Callable[[T], str],
    note_path: Callable[[T], str],
    rescore: Callable[[T, T], T],
) -> list[T]:
    """Move each hub chunk (a map of content: `is_hub`) just below the last hit of a note it links to.

    A map of content matches a question about its notes through their names, but the notes hold the answer:
    they go first, and the hub stays in the list after them. `rescore(hub, neighbour)` returns the hub with
    a score no higher than the hit it now follows, so the list stays best first. Hits are best first.
    """
    ordered = list(hits)
    names = [note_name(note_path(hit)) for hit in ordered]  # moved with their hits: named once a search
    for hub in [hit for hit in hits if is_hub(text(hit))]:
        at = next(i for i, hit in enumerate(ordered) if hit is hub)
        targets = linked_names(text(hub)) - {names[at]}
        if not targets:
            continue
        last = max((i for i, name in enumerate(names) if name in targets), default=-1)
        if last > at:
            ordered.pop(at)
            ordered.insert(last, rescore(hub, ordered[last - 1]))
            names.insert(last, names.pop(at))
    return ordered


def cap_per_note(hits: Sequence[T], note_path: Callable[[T], str], limit: int | None) -> list[T]:
    """At most `limit` hits of one note (its best ones), order unchanged: the slots go to other notes."""
    if limit is None:
        return list(hits)
    seen: dict[str, int] = {}
    kept = []
    for hit in hits:
        path = note_path(hit)
        if seen.get(path, 0) < limit:
            seen[path] = seen.get(path, 0) + 1
            kept.append(hit)
    return kept
