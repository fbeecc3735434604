"""What an agent sees of a search hit: the chunk with secrets redacted, the query's words found in it, and the
sensitive categories it touches. One place, so /search, /context and the MCP tools show hits alike."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from backend.application.search.question import Question
from backend.application.search.ranking import note_periods, origin_of
from backend.domain.index.payload import LINE_MAP, PERIOD_STATED, REPLACED, TITLE_ONLY
from backend.domain.models import ScoredPoint
from backend.domain.notes.line_map import LineMap
from backend.domain.notes.line_map import read as read_line_map
from backend.domain.ranking.result_rules import Highlighter, WordTerms
from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.secrets import Redacted
from backend.domain.text.text_analysis import TextAnalyzer


@dataclass(frozen=True, slots=True)
class PointerView:
    """The chunk of a list of links (a map of content) whose line led to a result: the way there."""

    chunk_id: str
    note_path: str
    start_line: int
    end_line: int


@dataclass(frozen=True, slots=True)
class ResultView:
    chunk_id: str
    note_path: str
    note_title: str
    content: str  # secrets redacted
    score: float
    confidence: float  # how likely the hit is relevant at all (0..1; backend/domain/ranking/confidence.py)
    heading_context: str
    start_line: int
    end_line: int
    tags: list[str]
    aliases: list[str]
    date: str | None
    highlights: list[str]
    sensitive_categories: list[str]
    redactions: int
    pointed_from: PointerView | None = None  # the map-of-content chunk whose line led here, if one did
    # the periods the chunk says it is of (search.ranking.note_periods; none for one undated or whose name
    # only mentions a year): what "the last time" is read by
    periods: tuple[str, ...] = ()
    replaced: bool = False  # its note says another note replaced it (note_status)
    saved_from: str | None = None  # where its note was saved from (note_origin); None: the person's own words
    line_map: LineMap = ()  # where its text's lines stand in the file (line_map.py)
    title_only: bool = False  # its note's title standing in for a note of headings or a query alone


def group_by_note(hits: Sequence[ScoredPoint], notes: int) -> list[ScoredPoint]:
    """The chunks of the best `notes` notes, grouped: each note's chunks together, best note first."""
    return [hit for group in note_groups(hits)[:notes] for hit in group]


def note_groups(hits: Sequence[ScoredPoint]) -> list[list[ScoredPoint]]:
    """The hits by note, each note's in their order, the notes in the order of their best hit."""
    groups: dict[str, list[ScoredPoint]] = {}
    for hit in hits:
        groups.setdefault(str(hit.payload.get("note_path", "")), []).append(hit)
    return list(groups.values())


def shown_confidence(hit: ScoredPoint) -> float:
    """A hit's confidence as its result shows it: 0 where none was computed (a mode without calibration)."""
    return hit.confidence if hit.confidence is not None else 0.0


def present_hits(
    hits: Sequence[ScoredPoint],
    question: Question,
    policy: ContentPolicy,
    *,
    analyzer: TextAnalyzer,
    words: WordTerms | None = None,
    highlight: bool = True,
    saved_folders: Collection[str] = (),
) -> list[ResultView]:
    """`question`: as the search read it (its terms are highlighted, in the languages it was stemmed in).
    `words`: the search service's remembered word terms (`SearchService.word_terms`), for `analyzer`.
    `highlight`: find the query's words in each hit (a context block shows none: /context leaves them out).
    `saved_folders`: the clippers' folders (SearchOptions.saved_folders), which say a note was saved."""
    views = []
    highlights = (
        Highlighter(question.terms, question.languages, words if words is not None else WordTerms(analyzer))
        if highlight
        else None
    )
    for hit in hits:
        p = hit.payload
        tags = list(p.get("tags") or [])
        content, heading, categories = _cleaned(
            policy,
            str(p.get("content", "")),
            str(p.get("heading_context", "")),
            tuple(tags),
            tuple(p.get("heading_path") or ()),
        )
        views.append(
            ResultView(
                chunk_id=hit.id,
                note_path=str(p.get("note_path", "")),
                note_title=str(p.get("note_title", "")),
                content=content.text,
                score=hit.score,
                confidence=shown_confidence(hit),
                heading_context=heading,
                start_line=int(p.get("start_line", 0)),
                end_line=int(p.get("end_line", 0)),
                tags=tags,
                aliases=list(p.get("aliases") or []),
                date=p.get("date"),
                # computed on the redacted text: a highlight never brings a secret back
                highlights=highlights(content.text) if highlights is not None else [],
                sensitive_categories=list(categories),
                redactions=content.redactions,
                pointed_from=_pointer(hit.via),
                periods=tuple(note_periods(p)) if p.get(PERIOD_STATED, True) else (),
                replaced=bool(p.get(REPLACED)),
                saved_from=origin_of(p, saved_folders),
                line_map=read_line_map(p.get(LINE_MAP)),
                title_only=bool(p.get(TITLE_ONLY)),
            )
        )
    return views


def shown_text(policy: ContentPolicy, payload: dict[str, Any]) -> str:
    """A chunk's text as a search shows it (secrets redacted), remembered with the rest of what showing it
    costs whatever the question (the warm-up computes it for the stored chunks ahead of the searches)."""
    content, _, _ = _cleaned(
        policy,
        str(payload.get("content", "")),
        str(payload.get("heading_context", "")),
        tuple(payload.get("tags") or ()),
        tuple(payload.get("heading_path") or ()),
    )
    return content.text


def shown_room() -> bool:
    """Whether `shown_text` remembers one more chunk without forgetting one."""
    kept = _cleaned.cache_info()
    return kept.maxsize is None or kept.currsize < kept.maxsize


# ~130 bytes a chunk beside its payload's own strings (the key and a text without secrets are those strings):
# 3.3 MB for the Zettelkasten's 25,714 chunks, all of which the start-up warm-up computes
@lru_cache(maxsize=32768)
def _cleaned(
    policy: ContentPolicy, content: str, heading: str, tags: tuple[str, ...], headings: tuple[str, ...]
) -> tuple[Redacted, str, tuple[str, ...]]:
    """A chunk as every search shows it, whatever the question: its text and heading with secrets redacted,
    and the sensitive categories it touches. Kept for the chunks shown lately: the hits of a vault's
    searches come back often, and this is most of what showing one costs (~0.25 ms a long LoCoMo chunk)."""
    cleaned = policy.clean(content)
    categories = policy.categories_of(cleaned.text, tags=tags, headings=headings)
    return cleaned, policy.clean(heading).text, tuple(categories)


def _pointer(via: ScoredPoint | None) -> PointerView | None:
    if via is None:
        return None
    p = via.payload
    return PointerView(
        via.id, str(p.get("note_path", "")), int(p.get("start_line", 0)), int(p.get("end_line", 0))
    )
