"""Why a note someone expected is not higher among a search's results: the explain data's `why_not`.

One chunk of the note is followed throughout (its dense and keyword places, its fused rank, its place after
the rules and among the results are all that chunk's): the note's first chunk after the search's ranking
rules, replayed (ranking_replay.py), or, when none of its chunks is among the candidates, the one closest in
meaning (by keyword in keyword mode). Each rule that moved that chunk is named from the replay's stages, the
period's factor and reason from `search.ranking.time_factor`. A name no indexed note answers to gets the
closest names instead, and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from backend.application.explanation.ranking_replay import Replay, passed, place
from backend.application.explanation.rules import (
    ExplainInput,
    SideLists,
    SidePlace,
    WhyNot,
    hit_time_factor,
    period_rule,
    question_words,
    stored_of,
)
from backend.application.serving.live_index import LiveIndex
from backend.domain.models import SearchMode
from backend.domain.notes.note_lookup import NoteLookup
from backend.domain.ranking.result_rules import is_hub
from backend.domain.text.sparse import SparseEncoder


@dataclass(frozen=True, slots=True)
class NoteChunks:
    """The note's chunks as each side scores them for the question (ids as strings, best first; None: the
    search had no such side), and whether the search's filters let the note in at all."""

    dense: list[tuple[str, float]] | None
    keyword: list[tuple[str, float]] | None
    admitted: bool
    stored: bool  # it has chunks in the index


def why_not(
    asked: str,
    *,
    live: LiveIndex,
    given: ExplainInput,
    sides: SideLists,
    encoder: SparseEncoder,
    lookup: NoteLookup,
    note_chunks: Callable[[str], NoteChunks],
    replay: Callable[[], Replay],
) -> WhyNot:
    """Where the note `asked` names landed and each rule that kept it from landing higher. `lookup`: the
    indexed note what was asked means; `note_chunks(path)`: that note's chunks on each side; `replay()`: the
    search's ranking replayed (read only for a note that is indexed, admitted and not shown)."""
    if lookup.found is None:
        return _unknown(asked, lookup)
    path, title = lookup.found.path, lookup.found.title
    shown = [str(hit.payload.get("note_path", "")) for hit in given.hits]
    final = shown.index(path) + 1 if path in shown else None
    chunks = note_chunks(path)
    if not chunks.admitted:
        reason = "The search's filters (folders, tags, dates or paths) leave this note out."
        return WhyNot(asked, path, title, None, None, [], None, None, reason)
    if not chunks.stored:
        reason = "The note has no chunk in the index (empty, or only frontmatter)."
        return WhyNot(asked, path, title, None, None, [], None, None, reason)
    stages = replay()
    best = _best_chunk(path, stages, chunks, given.mode)
    if best is None:  # its chunks matched neither side
        reason = "Neither side matches any of its chunks."
        return WhyNot(asked, path, title, None, None, [], None, None, reason)
    dense, keyword = (
        _side_place(sides.dense, chunks.dense, best),
        _side_place(sides.keyword, chunks.keyword, best),
    )
    held = stored_of(live, best, encoder)
    words = [word for word, terms in question_words(given.query, encoder) if terms & held]
    order = sides.fused_order()
    fused = order.index(best) + 1 if best in order else None
    chunk = next((p for p in (*stages.fused, *stages.led, *stages.named) if p.id == best), None)
    payload = chunk.payload if chunk is not None else live.store.payloads([best]).get(best, {})
    factor, why = hit_time_factor(payload, given.span, given.time_boost)
    ranked = place(stages.final, best)
    rules = [] if final is not None else _rules(best, given, stages, factor=factor, why=why)
    candidate = place(stages.fused, best) is not None or place(stages.named, best) is not None
    reason = _reason(given, sides, fused=fused, final=final, ranked=ranked, rules=rules, seen=candidate)
    if final is None:
        reason = " ".join([reason, *_side_lines(given, sides, dense, keyword, words)])
    record = live.graph.record(path)
    if record is not None and not record.dense_ready and given.mode is not SearchMode.KEYWORD:
        reason += " It has no dense vectors yet (the embedder is catching up): found by keyword only."
    lines = (int(payload.get("start_line", 0)), int(payload.get("end_line", 0))) if payload else None
    return WhyNot(
        asked,
        path,
        title,
        dense,
        keyword,
        words,
        fused,
        final,
        reason,
        rules=rules,
        lines=lines,
        ranked=ranked,
        time_factor=factor,
        time_reason=why,
    )


def _unknown(asked: str, lookup: NoteLookup) -> WhyNot:
    """No note, or several, answer to what was asked: say so, with the closest (or all those) names."""
    if lookup.ambiguous:
        reason = "Several indexed notes answer to this name; ask for one of them by its path."
        return WhyNot(asked, None, None, None, None, [], None, None, reason, closest=list(lookup.ambiguous))
    reason = "No indexed note answers to this path or name (GET /notes lists them)."
    if lookup.closest:
        reason += " Closest: " + ", ".join(lookup.closest) + "."
    return WhyNot(asked, None, None, None, None, [], None, None, reason, closest=list(lookup.closest))


def _best_chunk(path: str, stages: Replay, chunks: NoteChunks, mode: SearchMode) -> str | None:
    """The note's chunk to follow: its first after the rules, else its first before the rules dropped it
    (pointers followed), else, none of its chunks a candidate, its best by meaning (by keyword in keyword
    mode, or with no dense side)."""
    for stage in (stages.final, stages.led, stages.named, stages.fused):
        mine = next((p.id for p in stage if p.payload.get("note_path") == path), None)
        if mine is not None:
            return mine
    first = chunks.keyword if mode is SearchMode.KEYWORD or not chunks.dense else chunks.dense
    return first[0][0] if first else None


def _side_place(
    side: list[tuple[str, float]] | None, note: list[tuple[str, float]] | None, point_id: str
) -> SidePlace | None:
    """The chunk's place on one side: its rank among the side's candidates, or beyond them with its own
    score (None: it does not match on that side)."""
    if side is None:
        return None
    for position, (candidate, score) in enumerate(side):
        if candidate == point_id:
            return SidePlace(score, position + 1)
    return SidePlace(dict(note or []).get(point_id), None)


def _rules(
    best: str, given: ExplainInput, stages: Replay, *, factor: float | None, why: str | None
) -> list[str]:
    """Each rule that moved the chunk, from where the replay's stages put it."""
    rules: list[str] = []
    if place(stages.fused, best) is None and place(stages.named, best) is None:
        return rules  # no rule saw it (said by `_reason`)
    moved = passed(stages.fused, stages.boosted, best)
    span = given.span
    if span is not None and factor is not None and why is not None:
        text = period_rule(span, factor, why)
        if moved:
            text += f" {len(moved)} {_chunks(len(moved))} passed it by the period rule."
        if factor != 1.0 or moved:
            rules.append(text)
    others = [hit for hit in stages.named if hit.id != best]
    if others and place(stages.named, best) is None:
        names = ", ".join(str(hit.payload.get("note_path", "")) for hit in others)
        rules.append(f"The question names {names}: put first, above it.")
    led = [hit for hit in passed(stages.boosted, stages.led, best) if hit.via is not None]
    if led:
        rules.append(
            f"{len(led)} {_chunks(len(led))} brought up by lists of links whose line describes them in the "
            "question's words went above it."
        )
    rules += _put_first_rules(best, given, stages)
    return rules


def _put_first_rules(best: str, given: ExplainInput, stages: Replay) -> list[str]:
    """What `put_first` did to it: dropped as an overlap, placed after the notes it links to, over its
    note's share of places, below the threshold."""
    rules: list[str] = []
    if place(stages.led, best) is not None and place(stages.unrefined, best) is None:
        rules.append("Dropped: it overlaps a better-ranked chunk of its own note (one chunk per overlap).")
    before = next((p for p in stages.led if p.id == best), None)
    after = next((p for p in stages.unrefined if p.id == best), None)
    if before is not None and after is not None and after.score < before.score:
        text = str(before.payload.get("content", ""))
        if is_hub(text):
            rules.append(
                f"A map of content (mostly links): placed after the notes it links to, its score lowered to "
                f"{after.score:.4f}."
            )
    if place(stages.unrefined, best) is not None and place(stages.uncut, best) is None:
        rules.append(
            f"Its note already has {given.per_note} chunks above it (at most {given.per_note} a note)."
        )
    if place(stages.uncut, best) is not None and place(stages.final, best) is None:
        score = next(p.score for p in stages.uncut if p.id == best)
        rules.append(f"Its score {score:.4f} is below the threshold {given.threshold}.")
    return rules


def _chunks(count: int) -> str:
    return "chunk" if count == 1 else "chunks"


def _reason(
    given: ExplainInput,
    sides: SideLists,
    *,
    fused: int | None,
    final: int | None,
    ranked: int | None,
    rules: list[str],
    seen: bool,
) -> str:
    """Where it landed and, when not among the results, each rule that kept it out (`seen`: the chunk was
    among the candidates the rules ranked)."""
    if final is not None:
        return f"It is result {final}."
    shown = len(given.hits)
    fusing = "Fused, its" if sides.fused is not None else "Its"
    if fused is None:
        return (
            f"Neither side keeps any of its chunks among its first {sides.depth} candidates: no rule saw it."
        )
    if not seen:
        return (
            f"{fusing} best chunk ranks {fused}: beyond the {sides.depth} candidates the ranking rules read."
        )
    parts = [f"{fusing} best chunk ranks {fused}."]
    parts += rules
    if ranked is not None and ranked > shown:
        parts.append(f"After the ranking rules it ranks {ranked}: below the {shown} results shown.")
    elif ranked is not None:
        parts.append(
            f"After the ranking rules it ranks {ranked}, yet it is not among the {shown} results shown "
            "(grouped by note, or the index changed since the search)."
        )
    elif not rules:
        parts.append("The ranking rules leave it out.")
    return " ".join(parts)


def _side_lines(
    given: ExplainInput,
    sides: SideLists,
    dense: SidePlace | None,
    keyword: SidePlace | None,
    words: list[str],
) -> list[str]:
    """That chunk on each side the search had (a side it had not is not mentioned)."""
    lines: list[str] = []
    if dense is not None:
        if dense.rank is not None and dense.score is not None:
            lines.append(f"By meaning it ranks {dense.rank} (cosine {dense.score:.3f}).")
        else:
            last = sides.dense[-1][1] if sides.dense else None
            below = f" (the {sides.depth}th candidate's is {last:.3f})" if last is not None else ""
            cosine = f"; its cosine is {dense.score:.3f}" if dense.score is not None else ""
            lines.append(f"By meaning it is beyond the first {sides.depth}{cosine}{below}.")
    if keyword is not None:
        held = f"it holds {', '.join(words)}" if words else "on common words of the question only"
        if keyword.rank is not None and keyword.score is not None:
            lines.append(f"By keyword it ranks {keyword.rank} (BM25 {keyword.score:.2f}; {held}).")
        elif not words:
            lines.append("None of the question's words are in it (keyword side).")
        else:
            lines.append(f"By keyword {held}, but it is beyond the first {sides.depth}.")
    if sides.weights is not None and given.mode is SearchMode.HYBRID:
        lines.append(f"This question weighs dense {sides.weights[0]:.2f}, keyword {sides.weights[1]:.2f}.")
    return lines
