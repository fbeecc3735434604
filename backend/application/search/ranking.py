"""The ranking rules a search applies to the store's candidates, in order: the period the query names
raises the chunks of it (and lowers those that say they are of another time), notes another replaced and
notes saved from elsewhere are lowered, equal scores go by note and chunk, the notes the query names come
first, then overlapping chunks and second copies of a saved page are dropped, hubs move below the notes
they link to, each note keeps at most its share, and the threshold cuts (never a named note)."""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import replace
from typing import Any

from backend.application.search.question import Question
from backend.domain.index.payload import (
    DATE,
    FOLDERS,
    NOTE_STATES_TIME,
    PERIOD_STATED,
    PERIODS,
    REPLACED,
    SAVED_FROM,
    TAGS,
)
from backend.domain.models import ScoredPoint
from backend.domain.notes.note_origin import once_per_source, saved_from
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.periods.written_periods import writes_year_of
from backend.domain.ranking.result_rules import (
    LineSpan,
    WordTerms,
    apply_threshold,
    cap_per_note,
    dedupe_overlapping,
    hubs_after_their_notes,
    linked_names,
)
from backend.domain.text.text_analysis import words


def rank(
    named: list[ScoredPoint],
    points: list[ScoredPoint],
    boost: tuple[TimeSpan, float] | None,
    saved: Collection[str] | None = None,
) -> list[ScoredPoint]:
    """The candidates best first, boosted where `boost` (the span of days the query names, and by how
    much) says, notes another replaced and, with `saved` (the clippers' folders: `own_words_first`), notes
    saved from elsewhere lowered, without the named notes' chunks (they come first, by `put_first`)."""
    points = [ruled(p, boost, saved) for p in points]
    first = {hit.id for hit in named}
    return [p for p in sorted(points, key=best_first) if p.id not in first]


def ruled(
    point: ScoredPoint, boost: tuple[TimeSpan, float] | None, saved: Collection[str] | None
) -> ScoredPoint:
    """The point with its score moved by the rules that judge a chunk alone, as `rank` applies them: the
    period asked (`boosted`), a note another replaced, a note saved from elsewhere (with `saved`)."""
    if boost is not None:
        point = boosted(point, *boost)
    if point.payload.get(REPLACED):
        point = _lowered(point, REPLACED_FACTOR)
    if saved is not None and origin_of(point.payload, saved) is not None:
        point = _lowered(point, SAVED_FACTOR)
    return point


def best_first(point: ScoredPoint) -> tuple[float, str, int]:
    """Qdrant orders equal scores by where points sit in its storage, which differs between the embedded
    store and a server (and after a migration); ties go by note path and chunk instead, so the same index
    answers the same wherever it is stored."""
    return -point.score, str(point.payload.get("note_path", "")), chunk_index(point.payload)


def boosted(point: ScoredPoint, span: TimeSpan, boost: float) -> ScoredPoint:
    """The point with its score moved by `time_factor` (a negative score is raised by its size instead)."""
    factor, _ = time_factor(point.payload, span, boost)
    if factor == 1.0:
        return point
    if factor > 1.0:
        return replace(point, score=point.score + abs(point.score) * (factor - 1.0))
    return replace(point, score=point.score * factor)


# A note that says another replaced it (note_status) counts half, as one of another time does: the note
# that replaced it, or any answering as well, comes first; it stays findable below them.
REPLACED_FACTOR = 0.5


# A note saved from elsewhere counts half where the question does not ask about something read or saved:
# the person's own note speaking to the question comes first; the clipping stays findable below it.
SAVED_FACTOR = 0.5


def own_words_first(question: Question, saved_folders: Collection[str]) -> Collection[str] | None:
    """The clippers' folders to lower saved notes by, or None when the question asks about something read or
    saved (note_origin.asks_about_saved): then a clipping answers as well as any note."""
    return None if question.saved else saved_folders


def origin_of(payload: dict[str, Any], saved_folders: Collection[str]) -> str | None:
    """Where a chunk's note was saved from (note_origin.saved_from), None for the person's own words."""
    url = payload.get(SAVED_FROM)
    return saved_from(url, payload.get(FOLDERS) or (), payload.get(TAGS) or (), saved_folders)


def _lowered(point: ScoredPoint, factor: float) -> ScoredPoint:
    """The point's score times `factor` (< 1; a negative score is lowered by its size instead)."""
    return replace(point, score=point.score - abs(point.score) * (1.0 - factor))


# why `time_factor` moved a chunk or not, in words the explain data and the page show
OF_PERIOD = "of the period asked"
OTHER_TIME = "says it is of another time"
MENTIONED_ONLY = "its name only mentions another time: kept as it scored"
WRITES_ITS_YEAR = "writes the year asked besides days of another time: kept as it scored"
UNDATED = "undated: kept as it scored"


def time_factor(payload: dict[str, Any], span: TimeSpan, boost: float) -> tuple[float, str]:
    """What the period a question names multiplies a chunk's score by, and why: the one rule the ranking
    applies and the explain data shows.

    A chunk wholly of the span (by the days it writes out, else its note's `date:`, name, properties or
    folder) scores (1 + boost) times its own, one partly of it (a note of 2024 for "spring 2024") by the
    share of its period inside. A chunk that says it is of another time — it writes days of another time, or
    its note's `date:`, name, properties or folder state one (a journal day, "Honey sales 2025") — scores
    its own over (1 + boost): asked about 2024, the 2025 sales answer nothing. Any other chunk keeps its
    score: undated (`created:` says when a file was made, never what it is of), named with a year it only
    mentions ("Im Jahr 2010 erlitt der Amazonas-Regenwald" asked about 2014), or, in a note that does not
    state its own time, writing a year of the span besides its days of another time (a paragraph on a
    university founded "1 de agosto de 1963" that tells what happened "en 1992", asked about 1992): a period
    is a preference, and never lowers a note for a time it does not say it is of alone."""
    periods = note_periods(payload)
    share = span.share_of(periods)
    if share > 0.0:
        return 1.0 + boost * share, OF_PERIOD
    if not periods:
        return 1.0, UNDATED
    if not payload.get(PERIOD_STATED, True):  # an index written before it was stored: as stated, as then
        return 1.0, MENTIONED_ONLY
    # a note that says its time (a journal's day, a Zettelkasten ID's, `date:`, a label in its name, its
    # folder; not a `birthday:`, never `created:`) is of that time whatever year it writes, as chunk_periods
    # reads it ("2022-01-10: new program" in a log of 2021 is no note of 2022)
    own_time = payload.get(NOTE_STATES_TIME, bool(payload.get(DATE)))  # before it was stored: its date
    if not own_time and writes_year_of(str(payload.get("content", "")), span):
        return 1.0, WRITES_ITS_YEAR
    return 1.0 / (1.0 + boost), OTHER_TIME


def note_periods(payload: dict[str, Any]) -> list[str]:
    """The periods a chunk is of (written_periods.chunk_periods); an index written before they were stored
    has only its note's date."""
    periods = payload.get(PERIODS)
    if periods is None:
        day = payload.get(DATE)
        return [str(day)] if day else []
    return [str(period) for period in periods]


def chunk_index(payload: dict[str, Any]) -> int:
    return int(payload.get("chunk_index", 0))


def put_first(
    entity: list[ScoredPoint],
    fused: list[ScoredPoint],
    threshold: float | None,
    per_note: int | None,
    asked_about: Callable[[ScoredPoint], bool],
    *,
    own_scale: bool,
) -> list[ScoredPoint]:
    """The named notes first, then the fused results refined as usual (`asked_about`: the maps of content
    the question asks about by their own names, which keep their place: `hub_asked_about`).

    A named note is what was asked for, so the threshold does not drop it; it takes the best fused score
    (and its own keyword score when that is the mode's scale) so the list stays best-first.
    """
    if not entity:
        return _refine(fused, threshold, per_note, asked_about)
    top = fused[0].score if fused else 0.0
    firsts = [replace(hit, score=max(top, hit.score) if own_scale or not fused else top) for hit in entity]
    kept = dedupe_overlapping([*firsts, *fused], _span)  # named notes are distinct, so all of them stay
    kept = [*kept[: len(firsts)], *once_per_source(kept[len(firsts) :], _note_path, _saved_url)]
    rest = hubs_after_their_notes(
        kept[len(firsts) :], text=_text, note_path=_note_path, rescore=_below, asked_about=asked_about
    )
    kept = cap_per_note([*kept[: len(firsts)], *rest], _note_path, per_note)
    named = len(firsts)
    return [*kept[:named], *apply_threshold(kept[named:], threshold)]


def _refine(
    hits: list[ScoredPoint],
    threshold: float | None,
    per_note: int | None,
    asked_about: Callable[[ScoredPoint], bool],
) -> list[ScoredPoint]:
    """Overlapping chunks of one note dropped (so a dropped neighbour frees its slot), hubs moved below the
    notes they link to, at most `per_note` chunks of a note, then the threshold."""
    kept = once_per_source(dedupe_overlapping(hits, _span), _note_path, _saved_url)
    kept = hubs_after_their_notes(
        kept, text=_text, note_path=_note_path, rescore=_below, asked_about=asked_about
    )
    return apply_threshold(cap_per_note(kept, _note_path, per_note), threshold)


def _span(hit: ScoredPoint) -> LineSpan:
    p = hit.payload
    return LineSpan(str(p.get("note_path", "")), int(p.get("start_line", 0)), int(p.get("end_line", 0)))


def _text(hit: ScoredPoint) -> str:
    return str(hit.payload.get("content", ""))


def _note_path(hit: ScoredPoint) -> str:
    return str(hit.payload.get("note_path", ""))


def _saved_url(hit: ScoredPoint) -> str | None:
    url = hit.payload.get(SAVED_FROM)
    return str(url) if url else None


def _below(hub: ScoredPoint, above: ScoredPoint) -> ScoredPoint:
    return replace(hub, score=min(hub.score, above.score))


def hub_asked_about(question: Question, words_terms: WordTerms) -> Callable[[ScoredPoint], bool]:
    """Whether the question asks about a map of content itself rather than through it: its note's title or
    heading holds at least two of the question's words and none of its lines with a link holds one (the
    exam guide listing its chapters, for "which certification exam was I getting ready for"). A map that
    matches through its links' names or descriptions leads to its notes, which hold the answer. Words are
    read by the search's `WordTerms` (each word's terms remembered across searches)."""
    wanted, languages = question.wanted, question.languages

    def held(text: str) -> set[str]:
        return {term for word in words(text) for term in words_terms(word, languages) if term in wanted}

    def asked_about(hub: ScoredPoint) -> bool:
        p = hub.payload
        if len(held(f"{p.get('note_title', '')} {p.get('heading_context', '')}")) < 2:
            return False
        return not any(held(line) and linked_names(line) for line in _text(hub).splitlines())

    return asked_about
