"""Rules applied to a ranked result list before it is cut to `top_k`: dedupe, threshold, highlights.

Pure functions over small values, so the search use case stays a pipeline of named steps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from backend.domain.sparse import analyze, analyze_words

T = TypeVar("T")

# Letter/digit runs of the original text: the candidates a highlight is cut from. `analyze` decides what
# each run means (folding, stop words, stemming), so highlights follow the keyword side's rules.
_RUN = re.compile(r"[^\W_]+", re.UNICODE)


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


def highlights(query: str, text: str, *, stemming: bool = True) -> list[str]:
    """The query's terms as they are written in `text`: each once, in order of first appearance.

    Matching uses the keyword side's normalisation (`analyze`: case and accent folding, stop words,
    stemming), so "Cafe" in a query highlights "café" in the text, "deciding" highlights "decides", and stop
    words are never highlights.
    """
    wanted = set(analyze(query, stemming=stemming))
    if not wanted:
        return []
    words = _RUN.findall(text)
    distinct = list(dict.fromkeys(words))  # words repeat; analyse each distinct one once, in one batch
    analysed = {
        word: {term for term in terms if term in wanted}
        for word, terms in zip(distinct, analyze_words(distinct, stemming=stemming), strict=True)
    }
    found: list[str] = []
    seen: set[str] = set()
    for word in words:
        terms = analysed[word]
        if terms - seen:
            seen |= terms
            found.append(word)
    return found
