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
from backend.domain.models import from_same_fields


def hit_whys(explanation: SearchExplanation | None, recall: dict[str, Considered]) -> dict[str, HitWhyOut]:
    """Each explained hit's why, by chunk id (none without an explanation)."""
    if explanation is None:
        return {}
    return {why.chunk_id: _hit_why(why, recall.get(why.chunk_id)) for why in explanation.hits}


def search_explain_out(explanation: SearchExplanation | None) -> SearchExplainOut | None:
    if explanation is None:
        return None
    weights = explanation.weights
    return from_same_fields(
        SearchExplainOut,
        explanation,
        weights=WeightsOut(dense=weights[0], keyword=weights[1]) if weights is not None else None,
        candidates=CandidatesOut(dense=explanation.candidates[0], keyword=explanation.candidates[1]),
        why_not=_why_not(explanation.why_not) if explanation.why_not is not None else None,
        period=_period(explanation.period),
    )


def _period(period: Period | None) -> PeriodOut | None:
    if period is None:
        return None
    return from_same_fields(PeriodOut, period, start=period.start.isoformat(), end=period.end.isoformat())


def _hit_why(why: HitWhy, verdict: Considered | None) -> HitWhyOut:
    return from_same_fields(
        HitWhyOut,
        why,
        dense=_place(why.dense),
        keyword=_keyword(why.keyword, why.words),
        confidence_features=why.features,
        recall=RecallVerdictOut(
            quoted=verdict is not None and verdict.quoted,
            reason=verdict.reason if verdict is not None else "not among the results",
        ),
    )


def _why_not(answer: WhyNot) -> WhyNotOut:
    return from_same_fields(
        WhyNotOut,
        answer,
        note_title=answer.title,
        indexed=answer.note_path is not None,
        dense=_place(answer.dense),
        keyword=_keyword(answer.keyword, answer.words),
        start_line=answer.lines[0] if answer.lines is not None else None,
        end_line=answer.lines[1] if answer.lines is not None else None,
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
