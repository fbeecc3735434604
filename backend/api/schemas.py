"""HTTP request and response bodies. Kept apart from domain values on purpose."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.api import examples
from backend.api.explain_schemas import HitWhyOut, SearchExplainOut
from backend.api.input_types import ChunksPerNote, IsoDay, JsonBool, JsonFloat, JsonInt
from backend.api.memory_schemas import MemoryOut, MemorySuggestionOut
from backend.application.serving.note_graph import RELATED_LIMIT
from backend.domain.models import PointFilter, SearchMode

MAX_QUERY_CHARS = 2000
# what a score means in each mode: the threshold's description, and the README's (a test compares them)
SCORE_SCALES = (
    "Drop results scoring below this, on the mode's own scale. hybrid (default, FUSION=adaptive): 0 to 1, "
    "adaptive fusion: each side's scores spread from its lowest to its best candidate onto 0 to 1, then "
    "weighted, the dense side from 0.3 to 0.7 dense by how clearly its best candidate stands out "
    "(FUSION_DENSE_LOW / FUSION_DENSE_HIGH; 0.9 for a question in another language than the notes) and "
    "keyword the rest; the best of both sides scores 1, and a chunk no keyword matches scores at most 0.7. "
    "dense: cosine similarity (at most 1). keyword: BM25 (0 upwards, unbounded; it grows with rare query "
    "words). FUSION=score: each side over its best, 0.3 dense + 0.7 keyword (FUSION_WEIGHT_DENSE / "
    "FUSION_WEIGHT_KEYWORD). FUSION=rrf: a sum of weighted reciprocal ranks, at most about 0.64 with "
    "RRF_K=2; FUSION=dbsf: 0 to 2. A question naming a period multiplies each chunk's score by its note's "
    "time factor before the threshold applies: 1 + TIME_BOOST (x2 by default) for a note wholly of the "
    "period, less for one partly of it, below 1 for one that says it is of another time (explain: "
    "`period.factor`, each result's `why.time_factor`); so with a period named every scale above is "
    "stretched by up to 1 + TIME_BOOST: a hybrid score runs from 0 to 1 + TIME_BOOST (2 by default), not "
    "0 to 1 (FUSION=dbsf: to 2 x (1 + TIME_BOOST)). A degraded hybrid request is answered, and "
    "thresholded, as keyword. Whether a result is relevant at all, on one scale for every mode: its "
    "`confidence`."
)
FILTER_WARNINGS = (
    "What is missing (with status degraded: the embedder, or the index still filling in), and each filter "
    "that matches no indexed note, with the closest names the index holds (an unknown folder, tag or path, "
    "a date range no note falls in; status stays healthy)."
)

MEMORY_SUGGESTION = (
    "A fact the confident results state about money owed, health or a commitment (a ledger's balance, "
    'a diagnosis or medication, "I promised..."), which the agent may offer to keep: ask the user, and on '
    "yes store it with POST /memory (kb_remember, MCP `remember`) as key, value and source. Never a secret, "
    "never for chit-chat or results unlikely to be relevant, nor for a fact already remembered under its "
    "key. null when there is nothing to offer."
)


class ErrorBody(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error_code": "NOTE_NOT_FOUND",
                    "detail": "no indexed note at 'Projects/Nope.md'",
                    "recoverable": False,
                    "suggestion": "Check the vault-relative path (e.g. `Projects/Database migration.md`) or "
                    "search for it.",
                }
            ]
        }
    )

    error_code: str = Field(description="Stable machine-readable code, e.g. INDEX_NOT_READY.")
    detail: str = Field(description="What went wrong, for a person or an agent.")
    recoverable: bool = Field(description="True when retrying later (or after the suggestion) can succeed.")
    suggestion: str = Field(description="What to do about it.")


VaultNames = list[Annotated[str, Field(max_length=48)]] | None


def vaults_field(merged: str, cut: str) -> Any:
    """A request's `vaults`, saying how several vaults' `merged` become one list (vault_merge.py), then `cut`
    (one wording of the merge for /search and /context)."""
    return Field(
        None,
        max_length=64,
        description="The vaults to ask, by name (VAULTS); null or empty: every vault the service serves. "
        f"Several vaults' {merged} are merged, each keeping its own order, by `confidence` weighed by how "
        "sure its vault is (its surest against the surest of any), a vault holding the note the question "
        f"is the name of, or more of the people, tags or period it names, first; then cut to {cut}",
        examples=[["work"]],
    )


class SearchFilters(BaseModel):
    """The search options /search and /context share."""

    model_config = ConfigDict(extra="forbid")  # and so the requests built on it (pydantic merges configs)

    mode: SearchMode = Field(SearchMode.HYBRID, description="hybrid (default), dense or keyword.")
    folders: list[str] = Field(default_factory=list, description="Only notes under these folders.")
    tags: list[str] = Field(
        default_factory=list,
        description="Only notes with any of these tags, in any case; a tag also finds the tags nested "
        "under it (`project` finds `Project/alpha`), as Obsidian's tag search does.",
    )
    paths: list[str] = Field(default_factory=list, description="Only these notes (vault-relative paths).")
    date_from: IsoDay | None = Field(None, description="Only notes dated on or after this day.")
    date_to: IsoDay | None = Field(
        None, description="Only notes dated on or before this day (not before date_from)."
    )
    threshold: JsonFloat | None = Field(
        None,
        ge=0,
        description=SCORE_SCALES,
    )
    include_memory: JsonBool = Field(
        False,
        description="Also search the remembered facts (POST /memory); they come back apart, in `memories`.",
    )
    vaults: VaultNames = vaults_field("lists", "top_k. Not sorted by confidence.")

    @field_validator("tags")
    @classmethod
    def _strip_hash(cls, value: list[str]) -> list[str]:
        return [tag.lstrip("#") for tag in value if tag.strip()]

    @model_validator(mode="after")
    def _dates_in_order(self) -> SearchFilters:
        if self.date_from and self.date_to and self.date_from > self.date_to:
            raise ValueError("date_from must not be after date_to")
        return self

    def point_filter(self) -> PointFilter:
        return PointFilter(
            note_paths=tuple(self.paths),
            folders=tuple(self.folders),
            tags=tuple(self.tags),
            date_from=self.date_from.isoformat() if self.date_from else None,
            date_to=self.date_to.isoformat() if self.date_to else None,
        )


class SearchRequest(SearchFilters):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"query": "how much do I owe Sreenivas?", "top_k": 3},
                {"query": "knee exercises", "folders": ["Health"], "mode": "hybrid", "include_memory": True},
            ]
        },
    )

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS, description="A question or keywords.")
    top_k: JsonInt = Field(5, ge=1, le=50, description="How many chunks to return.")
    include_related: JsonBool = Field(True, description="Also return notes linked to or from the results.")
    related_limit: JsonInt = Field(
        RELATED_LIMIT,
        ge=1,
        le=200,
        description="How many related notes at most: those linked with the most results first.",
    )
    memory_top_k: JsonInt = Field(
        3, ge=1, le=20, description="How many remembered facts at most (include_memory)."
    )
    max_chunks_per_note: ChunksPerNote | None = Field(
        None,
        description="At most this many chunks of one note in results (default: MAX_CHUNKS_PER_NOTE, 2).",
    )
    group_by: Literal["chunk", "note"] = Field(
        "chunk",
        description='"note": top_k counts notes, and `groups` holds one entry per note with its best chunks '
        "(`results` holds the same chunks, in that order).",
    )
    explain: JsonBool = Field(
        False,
        description="Also say why each result ranks where it does (`why` of each result, and `explain`): "
        "its place on each side, the fusion weights, the rules that moved it, its confidence's features "
        "and whether OpenClaw's recall would quote it; and where the search's time went, stage by stage "
        "(`stages`). Off by default (about 1 ms more a search; why_not about 1 more).",
    )
    why_not: str | None = Field(
        None,
        max_length=1000,
        description="A note's path or name (or `vault:<name>/<path>`, as a block of several vaults cites "
        "it): say why it is not higher (`explain.why_not`); implies explain.",
        examples=["Health/Therapy notes.md"],
    )

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must contain some text")
        return value.strip()


class PointedFromOut(BaseModel):
    chunk_id: str
    note_path: str
    start_line: int
    end_line: int


class MissingVaultOut(BaseModel):
    vault: str
    error_code: str = Field(description="Why it did not answer, as the error envelope says it.")
    detail: str


class SearchResult(BaseModel):
    chunk_id: str
    vault: str = Field("", description="The vault of the note (its VAULTS name; VAULT_NAME with one).")
    note_path: str
    note_title: str
    content: str
    score: float = Field(
        description="Relevance on the mode's own scale (see the request's `threshold`; hybrid 0 to 1, up to "
        "1 + TIME_BOOST when the question names a period): it ranks the results of one query against each "
        "other."
    )
    confidence: float = Field(
        description="How likely the chunk is relevant at all, 0-1, calibrated on judged questions and on "
        "turns the vault cannot answer: the same scale whatever the mode, the fusion or the vault's size "
        "(around 0.4 and above: probably relevant; greetings stay near 0)."
    )
    heading_context: str = Field(description='Headings above the chunk, e.g. "Project > Planning > Risks".')
    start_line: int
    end_line: int
    tags: list[str]
    aliases: list[str] = Field(description="The note's other names, from its frontmatter.")
    date: str | None = None
    highlights: list[str] = Field(
        description="The query's terms as written in content (keyword matching rules), first seen first."
    )
    sensitive_categories: list[str] = Field(
        description="Sensitive categories (health, finance, relationships...) the chunk touches: ask before "
        "showing it."
    )
    redactions: int = Field(description="Secrets replaced by [REDACTED:kind] in content.")
    obsidian_uri: str = Field(
        description="Opens the note in Obsidian: obsidian://open?vault=<vault>&file=<path>, percent-encoded."
    )
    pointed_from: PointedFromOut | None = Field(
        None,
        description="The chunk of a list of links (a map of content, a home note) whose line describes this "
        "note in the question's words: it brought the note here and ranks just after it. Null for most.",
    )
    saved_from: str | None = Field(
        None,
        description="Where the note was saved from: the page's address (a web clipper's `source:`/`url:`, "
        "without its scheme), the clipper's folder (`Clippings/`) or tag (`#clippings`). Null: the person's "
        "own words. Ranked below their own notes unless the question asks about something read or saved.",
    )

    why: HitWhyOut | None = Field(None, description="With `explain`: why it ranks here. null otherwise.")


class NoteGroupOut(BaseModel):
    note_path: str
    vault: str = Field("", description="The vault of the note (its VAULTS name; VAULT_NAME with one).")
    note_title: str
    score: float = Field(description="The score of the note's best chunk (scales: `threshold`).")
    tags: list[str]
    date: str | None = None
    chunks: list[SearchResult] = Field(description="The note's best chunks, best first.")


class TimeIntentOut(BaseModel):
    text: str = Field(description='The words of the query that named a time, e.g. "last March".')
    start: str = Field(description="First day of the span (ISO).")
    end: str = Field(description="Last day of the span (ISO, inclusive).")
    granularity: str = Field(
        description="day, week, month, months, season, holiday, quarter, half, year or years."
    )


class RelatedNoteOut(BaseModel):
    note_path: str
    vault: str = Field("", description="The vault of the note (that of the results it is linked with).")
    note_title: str
    relationship: str = Field(description="backlink: it links to a result; outlink: a result links to it.")
    link_count: int = Field(description="How many of the results it links to or is linked from.")


class StageTimeOut(BaseModel):
    stage: str = Field(
        description="analysis (terms, language, time span, tags), store_named, embedding, store_sides, "
        "fusion, store_payloads, store_query, ranking, store_pointer_targets, related_notes, store_terms, "
        "confidence, presenting (redaction, highlights, sensitivity), memory, serialisation"
    )
    ms: float


class SearchResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.SEARCH_RESPONSE]})

    query: str
    mode: SearchMode = Field(description="The mode actually used.")
    status: str = Field(description="healthy, or degraded when part of the search was unavailable.")
    warnings: list[str] = Field(description=FILTER_WARNINGS)
    results: list[SearchResult]
    related_notes: list[RelatedNoteOut] = Field(description="Notes linked to or from the results.")
    memories: list[MemoryOut] = Field(
        description="Remembered facts matching the query (only with include_memory), best first."
    )
    sensitive_detected: bool = Field(
        description="True when a result or fact touches a sensitive category (see sensitive_categories)."
    )
    total_hits: int = Field(
        description=(
            "Candidates that matched (after filters, threshold and removing overlapping chunks of one note) "
            "before top_k was applied; counted within the candidate depth (SEARCH_PREFETCH_LIMIT)."
        )
    )
    search_time_ms: float
    time_intent: TimeIntentOut | None = Field(
        None,
        description="The span of days the query named (in 2024, last March, this week): notes dated in it "
        "were ranked higher (a boost, not a filter). null when the query names no time.",
    )
    groups: list[NoteGroupOut] | None = Field(
        None, description='With group_by "note": one entry per note, best first. null otherwise.'
    )
    memory_suggestion: MemorySuggestionOut | None = Field(None, description=MEMORY_SUGGESTION)
    explain: SearchExplainOut | None = Field(
        None, description="With `explain` or `why_not`: the fusion and the note asked about. null otherwise."
    )
    stages: list[StageTimeOut] | None = Field(
        None,
        description="With `explain`: the search's stages in the order they ran, each with its milliseconds "
        "(they add up to `search_time_ms` and the response's own serialisation). null otherwise.",
    )
    missing_vaults: list[MissingVaultOut] = Field(
        default_factory=list,
        description="Vaults asked that could not answer (folder gone, index unavailable): the results are "
        "the other vaults'.",
    )


class Health(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.HEALTH]})

    status: str
    version: str
    instance: str = Field(
        description="Names this run of the service (random, new at every start): what its record in DATA_DIR "
        "(service.json) says, so a client finds the service of its vault and never a stale record's port."
    )


class LinkedNoteOut(BaseModel):
    note_path: str
    note_title: str
    kind: str = Field(description="wikilink, embed or markdown")
    anchor: str | None = Field(None, description='"Heading" or "^block" the link points into')
    text: str | None = Field(None, description="The link's shown text")
    line: int = Field(description="Line of the link in the linking note")


class UnresolvedLinkOut(BaseModel):
    target: str = Field(description="The link target as written; no such note exists yet")
    kind: str
    anchor: str | None = None
    text: str | None = None
    line: int


class NoteLinksOut(BaseModel):
    vault: str = Field("", description="The vault of the note; its links never leave it.")
    model_config = ConfigDict(json_schema_extra={"examples": [examples.NOTE_LINKS]})

    note_path: str
    note_title: str
    outlinks: list[LinkedNoteOut]
    backlinks: list[LinkedNoteOut]
    unresolved: list[UnresolvedLinkOut]
    attachments: list[UnresolvedLinkOut] = Field(description="Links to files that are not notes")
