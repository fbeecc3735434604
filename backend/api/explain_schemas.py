"""The explain data of /search (asked with `explain` or `why_not`): why each result ranks where it does, the
fusion this question was given, and why a named note is not higher. What the look-inside page's why-panel
shows (backend/application/explaining.py computes it)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class SidePlaceOut(BaseModel):
    score: float | None = Field(
        description="The side's own score: cosine (dense) or BM25 (keyword); null when beyond its candidates."
    )
    rank: int | None = Field(description="1-based among the side's candidates; null: beyond them.")


class KeywordPlaceOut(SidePlaceOut):
    terms: list[str] = Field(description="The question's words the chunk holds (keyword rules: stemmed).")


class RecallVerdictOut(BaseModel):
    quoted: bool = Field(description="OpenClaw's per-turn recall (the plugin's defaults) would quote it.")
    reason: str = Field(
        description='"quoted", or why not: "below the floor" (confidence under minConfidence), "beyond max '
        'entries", "over the budget" (maxChars), "duplicate", "a list of links whose note is quoted instead".'
    )


class HitWhyOut(BaseModel):
    dense: SidePlaceOut | None = Field(
        description="Its place by meaning; null: no dense side in this search."
    )
    keyword: KeywordPlaceOut | None = Field(
        description="Its place by keyword; null: no keyword side in this search."
    )
    fused_score: float | None = Field(description="After fusion, before the ranking rules (hybrid only).")
    time_factor: float | None = Field(
        description="What the period the question names multiplied its score by (null: none named)."
    )
    rules: list[str] = Field(description="The ranking rules that moved it, in words.")
    confidence_features: dict[str, float] = Field(description="What its confidence was computed from.")
    recall: RecallVerdictOut


class WhyNotOut(BaseModel):
    asked: str = Field(description="The note as asked (`why_not`).")
    note_path: str | None = Field(description="The indexed note it names; null: none.")
    note_title: str | None = None
    indexed: bool
    dense: SidePlaceOut | None = Field(description="Its best chunk's place by meaning.")
    keyword: KeywordPlaceOut | None = Field(description="Its best chunk's place by keyword.")
    fused_rank: int | None = Field(description="Its best chunk's rank after fusion (null: beyond).")
    final_rank: int | None = Field(description="Its place among the results (null: not among them).")
    reason: str = Field(description="Why it is where it is, in words.")


class WeightsOut(BaseModel):
    dense: float
    keyword: float


class CandidatesOut(BaseModel):
    dense: int
    keyword: int


class SearchExplainOut(BaseModel):
    fusion: str | None = Field(description="adaptive, score, rrf or dbsf (null: one side only).")
    weights: WeightsOut | None = Field(description="The sides' weights for this question (adaptive: by it).")
    cross_language: bool = Field(description="The question is in another language than the vault's.")
    time_boost: float | None = Field(description="The boost of the period the question names (null: none).")
    candidates: CandidatesOut = Field(description="How many candidates each side gave.")
    why_not: WhyNotOut | None = None
