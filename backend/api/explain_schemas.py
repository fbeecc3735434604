"""The explain data of /search (asked with `explain` or `why_not`): why each result ranks where it does, the
fusion this question was given, and why a named note is not higher. What the look-inside page's why-panel
shows (backend/application/explanation/rules.py computes it)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from backend.application.search.ranking import MENTIONED_ONLY, OF_PERIOD, OTHER_TIME, UNDATED, WRITES_ITS_YEAR

# the reasons `time_factor` gives, as the explain data says them
_TIME_REASONS = ", ".join(
    f'"{reason}"' for reason in (OF_PERIOD, OTHER_TIME, MENTIONED_ONLY, WRITES_ITS_YEAR, UNDATED)
)


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
        description='"quoted" (or "quoted, cut to fit", or "quoted: its lines that match the question": its '
        'share of maxChars when the entries let through do not fit whole), or why not: "below the floor" '
        '(confidence under minConfidence), "beyond max '
        'entries", "over the budget" (maxChars), "duplicate", "a list of links whose note is quoted '
        'instead", "a list of links: the notes it points to answer, not it" (a map of content: never '
        'quoted), "its note says another replaced it" (never quoted), "far less likely than the first '
        'entry" (its odds of being relevant under a tenth of the surest entry\'s), "states no sum of money, '
        'and the question asks for one" (asked what something cost: no figure with a currency), "names '
        'nothing the question asks the sum of" (neither its text, heading nor note title names what the sum '
        'is for: the hygienist of "what did the hygienist cost"), "its lines on the question are unticked '
        'tasks: a plan, beside an entry telling what happened" (asked what was found or done: an action '
        'list naming it, beside the notes of what came of it), "its sums are reckoned or quoted, not paid, '
        'beside an entry stating one paid" (asked what was spent: "he reckons about £2,300" beside the '
        'ledger), "its sums stand apart from what the question asks the sum of, beside an entry writing one '
        "with it\" (asked the price of a 12oz jar: the label printing's £14 beside the price list's row "
        '"12oz | £9.00"; a sum is with what it is of on its own line or table row, or under a title, alias, '
        'tag or heading naming all of it), "its note writes none of the codes the question names, beside '
        'one that does" (asked about "11C3": the notes on class 10C3 beside the likelier timetable writing '
        '11C3; a code: a letter before a figure), "states no '
        'time of day, and the question asks for one" (asked what time something is; likewise a temperature, '
        'pressure, score, distance, weight or a number such as a phone or index number), "an earlier one '
        "of its "
        'series: the question asks about today" (last year\'s "Budget 2024" beside "Budget 2025"), "of '
        'another time than the period asked, beside entries of it" (dated wholly outside the period the '
        'question names, while entries of it are quoted: not for a plan, nor "the week before" a day), "of '
        'an earlier time than the latest asked for" (a question asking for the last time of something gets '
        'the newest dated entry), "the turn asks about the conversation itself, which no note holds" '
        '("summarize our conversation so far": the agent holds the chat, no note does), "the turn asks the '
        'agent to make something up, which no note holds" ("tell me a joke", "write me a limerick").'
    )


class HitWhyOut(BaseModel):
    dense: SidePlaceOut | None = Field(
        description="Its place by meaning; null: no dense side in this search."
    )
    keyword: KeywordPlaceOut | None = Field(
        description="Its place by keyword; null: no keyword side in this search."
    )
    fused_score: float | None = Field(
        description="After fusion, before the ranking rules (hybrid only). Adaptive and score fusion: "
        "weights.dense × dense_normalised + weights.keyword × keyword_normalised; dbsf: their plain sum; "
        "rrf: the sum over the sides of 1 / (RRF_K - 1 + rank / weight)."
    )
    dense_normalised: float | None = Field(
        None,
        description="Its dense score as the fusion combined it, 0 to 1 (adaptive: spread from the dense "
        "side's lowest candidate to its best; score: over its best; dbsf: mean ± 3 standard deviations onto "
        "0..1); 0 when not among the dense candidates. null: no dense side, one side only, or rrf (it "
        "combines ranks).",
    )
    keyword_normalised: float | None = Field(
        None, description="The same for its keyword score (BM25): 0 to 1, as the fusion combined it."
    )
    time_factor: float | None = Field(
        description="What the period the question names multiplied its score by (null: none named): the "
        "final score is fused_score × time_factor unless `rules` names what else set it."
    )
    time_reason: str | None = Field(
        None,
        description=f"Why time_factor is what it is: {_TIME_REASONS} (null: no period named).",
    )
    rules: list[str] = Field(
        description="The ranking rules that moved it, in words; one that changed its score says the new "
        "score (put first as named, a pointer's score taken, a map of content rescored below the result it "
        "follows)."
    )
    confidence_features: dict[str, float] = Field(description="What its confidence was computed from.")
    recall: RecallVerdictOut


class WhyNotOut(BaseModel):
    asked: str = Field(description="The note as asked (`why_not`).")
    vault: str | None = Field(None, description="The vault of the note it names (with several vaults).")
    note_path: str | None = Field(description="The indexed note it names; null: none.")
    note_title: str | None = None
    indexed: bool
    dense: SidePlaceOut | None = Field(description="Its best chunk's place by meaning.")
    keyword: KeywordPlaceOut | None = Field(description="Its best chunk's place by keyword.")
    fused_rank: int | None = Field(description="Its best chunk's rank after fusion (null: beyond).")
    final_rank: int | None = Field(description="Its place among the results (null: not among them).")
    reason: str = Field(description="Why it is where it is, in words.")
    start_line: int | None = Field(
        None,
        description="The best chunk all the places are of: its first line (null: no chunk). It is the note's "
        "first chunk after the ranking rules, or, none being a candidate, its closest in meaning.",
    )
    end_line: int | None = Field(None, description="That chunk's last line.")
    ranked: int | None = Field(
        None,
        description="That chunk's place after every ranking rule, before the answer is cut to top_k (null: a "
        "rule dropped it, or it was not among the candidates). Several vaults: its place in their lists "
        "merged, before the cut (null: its vault's results leave it out).",
    )
    rules: list[str] = Field(
        default_factory=list,
        description="Each ranking rule that moved that chunk, in words: the period (with time_factor and its "
        "reason), notes named first, pointers, overlap, map of content, per-note cap, threshold.",
    )
    time_factor: float | None = Field(
        None, description="What the period named multiplied that chunk's score by (null: none named)."
    )
    time_reason: str | None = Field(None, description="Why (as `time_reason` of a result).")
    closest: list[str] = Field(
        default_factory=list,
        description="No note answers to what was asked: up to 5 paths of the notes whose path, file name, "
        "title or alias is closest to it; several answer: their paths. Empty otherwise.",
    )


class WeightsOut(BaseModel):
    dense: float
    keyword: float


class CandidatesOut(BaseModel):
    dense: int
    keyword: int


class PeriodOut(BaseModel):
    text: str = Field(description="The words of the question that name it.")
    start: str = Field(description="Its first day (ISO).")
    end: str = Field(description="Its last day (ISO).")
    factor: float = Field(
        description="What a note wholly of the period multiplies its score by (1 + TIME_BOOST); a note "
        "partly of it less, by the share of it inside: a hybrid score then reaches up to this, not 1."
    )
    other_time_factor: float = Field(
        description="What a chunk that says it is of another time multiplies its score by."
    )


class SearchExplainOut(BaseModel):
    fusion: str | None = Field(description="adaptive, score, rrf or dbsf (null: one side only).")
    weights: WeightsOut | None = Field(description="The sides' weights for this question (adaptive: by it).")
    cross_language: bool = Field(description="The question is in another language than the vault's.")
    time_boost: float | None = Field(
        description="TIME_BOOST, when the question names a period (null: none): not a factor; the factors it "
        "gives are in `period`."
    )
    period: PeriodOut | None = Field(
        None, description="The period the question names, and what it multiplies scores by (null: none)."
    )
    candidates: CandidatesOut = Field(description="How many candidates each side gave.")
    why_not: WhyNotOut | None = None
