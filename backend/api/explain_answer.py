"""The explain data of a search as the API shows it (backend/api/explain_schemas.py)."""

from __future__ import annotations

from backend.api.explain_schemas import (
    CandidatesOut,
    HitWhyOut,
    KeywordPlaceOut,
    PeriodOut,
    RecallVerdictOut,
    SearchExplainOut,
    SidePlaceOut,
    WeightsOut,
    WhyNotOut,
)
from backend.application.explanation.rules import HitWhy, Period, SearchExplanation, SidePlace, WhyNot
from backend.application.recall.context import Considered


def hit_whys(explanation: SearchExplanation | None, recall: dict[str, Considered]) -> dict[str, HitWhyOut]:
    """Each explained hit's why, by chunk id (none without an explanation)."""
    if explanation is None:
        return {}
    return {why.chunk_id: _hit_why(why, recall.get(why.chunk_id)) for why in explanation.hits}


def search_explain_out(explanation: SearchExplanation | None) -> SearchExplainOut | None:
    if explanation is None:
        return None
    weights = explanation.weights
    return SearchExplainOut(
        fusion=explanation.fusion,
        weights=WeightsOut(dense=weights[0], keyword=weights[1]) if weights is not None else None,
        cross_language=explanation.cross_language,
        time_boost=explanation.time_boost,
        candidates=CandidatesOut(dense=explanation.candidates[0], keyword=explanation.candidates[1]),
        why_not=_why_not(explanation.why_not) if explanation.why_not is not None else None,
        period=_period(explanation.period),
    )


def _period(period: Period | None) -> PeriodOut | None:
    if period is None:
        return None
    return PeriodOut(
        text=period.text,
        start=period.start.isoformat(),
        end=period.end.isoformat(),
        factor=period.factor,
        other_time_factor=period.other_time_factor,
    )


def _hit_why(why: HitWhy, verdict: Considered | None) -> HitWhyOut:
    return HitWhyOut(
        dense=_place(why.dense),
        keyword=_keyword(why.keyword, why.words),
        fused_score=why.fused_score,
        dense_normalised=why.dense_normalised,
        keyword_normalised=why.keyword_normalised,
        time_factor=why.time_factor,
        time_reason=why.time_reason,
        rules=why.rules,
        confidence_features=why.features,
        recall=RecallVerdictOut(
            quoted=verdict is not None and verdict.quoted,
            reason=verdict.reason if verdict is not None else "not among the results",
        ),
    )


def _why_not(answer: WhyNot) -> WhyNotOut:
    return WhyNotOut(
        asked=answer.asked,
        note_path=answer.note_path,
        note_title=answer.title,
        indexed=answer.note_path is not None,
        dense=_place(answer.dense),
        keyword=_keyword(answer.keyword, answer.words),
        fused_rank=answer.fused_rank,
        final_rank=answer.final_rank,
        reason=answer.reason,
        start_line=answer.lines[0] if answer.lines is not None else None,
        end_line=answer.lines[1] if answer.lines is not None else None,
        ranked=answer.ranked,
        rules=answer.rules,
        time_factor=answer.time_factor,
        time_reason=answer.time_reason,
        closest=answer.closest,
    )


def _place(place: SidePlace | None) -> SidePlaceOut | None:
    if place is None:
        return None
    return SidePlaceOut(score=_rounded(place.score), rank=place.rank)


def _keyword(place: SidePlace | None, words: list[str]) -> KeywordPlaceOut | None:
    if place is None:
        return None
    return KeywordPlaceOut(score=_rounded(place.score), rank=place.rank, terms=words)


def _rounded(score: float | None) -> float | None:
    return round(score, 4) if score is not None else None
