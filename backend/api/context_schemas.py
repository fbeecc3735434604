"""Bodies of POST /context."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from backend.api import examples
from backend.api.input_types import JsonBool, JsonFloat, JsonInt
from backend.api.memory_schemas import MemorySuggestionOut
from backend.api.schemas import (
    FILTER_WARNINGS,
    MAX_QUERY_CHARS,
    MEMORY_SUGGESTION,
    MissingVaultOut,
    SearchFilters,
    VaultNames,
    vaults_field,
)
from backend.domain.models import SearchMode

MAX_CONTEXT_CHARS = 32_000
MIN_CONTEXT_CHARS = 200
MAX_MESSAGES = 50


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system", "tool"]
    content: str = Field(max_length=20_000)


Attribution = Annotated[str, Field(max_length=2000)]  # `path:start-end`, as `sources` give it


class ContextRequest(SearchFilters):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"query": "how much do I owe Sreenivas?", "max_chars": 1200},
                {
                    "messages": [
                        {"role": "user", "content": "I'm flying to Lisbon with Sreenivas in May."},
                        {"role": "assistant", "content": "Nice! Anything to sort out before?"},
                        {"role": "user", "content": "Do I still owe him money?"},
                    ],
                    "max_chars": 2000,
                    "include_memory": True,
                },
            ],
            # the rule of _query_or_messages and query_from_messages, in the schema: some query text, or a
            # user or assistant message with some text
            "anyOf": [
                {"required": ["query"], "properties": {"query": {"type": "string", "pattern": r"\S"}}},
                {
                    "required": ["messages"],
                    "properties": {
                        "messages": {
                            "contains": {
                                "properties": {
                                    "role": {"enum": ["user", "assistant"]},
                                    "content": {"pattern": r"\S"},
                                }
                            }
                        }
                    },
                },
            ],
        },
    )

    query: str | None = Field(
        None, max_length=MAX_QUERY_CHARS, description="What to find context for; or give `messages`."
    )
    messages: list[ChatMessage] = Field(
        default_factory=list,
        max_length=MAX_MESSAGES,
        description="The conversation so far, oldest first; the query is built from the last few user and "
        "assistant messages (the latest user message first). Used when `query` is absent.",
    )
    max_chars: JsonInt = Field(
        4000,
        ge=MIN_CONTEXT_CHARS,
        le=MAX_CONTEXT_CHARS,
        description="Budget for the whole block, headers and separators included (characters). A budget no "
        "entry fits in gives an empty block and a warning naming the budget that would hold the first.",
    )
    max_chunks: JsonInt = Field(10, ge=1, le=50, description="How many chunks to consider, best first.")
    include_memory: JsonBool = Field(
        False,
        description="Also quote the remembered facts that match (kept with POST /memory or the MCP "
        '`remember` tool): each an entry `[memory:key]` in `context`, and in `sources` with `kind` "memory".',
    )
    vaults: VaultNames = vaults_field("chunks", "max_chunks.")
    exclude_categories: list[str] = Field(
        default_factory=list,
        description="Leave out chunks and facts touching these sensitive categories (e.g. health).",
    )
    min_confidence: JsonFloat | None = Field(
        None,
        ge=0,
        le=1,
        description="Leave out chunks less likely than this to be relevant at all (their `confidence`, "
        "0-1): 0.4 keeps what answers the question and drops everything for greetings and questions the "
        "vault cannot answer (the calibrated default of the OpenClaw recall). With a floor, a chunk whose "
        "odds of being relevant are under a tenth of the surest chunk's is left out too (the answer is one "
        "note; its neighbours on the topic are not alternatives). Unset: neither.",
    )
    exclude: list[Attribution] = Field(
        default_factory=list,
        max_length=200,
        description="Attributions (`path:start-end`, as in `sources`) the caller already has, e.g. "
        "injected in earlier turns: a chunk holding one, or half of whose lines one holds, is left out, and "
        "others fill its place (its neighbour, which shares a line or two with it, is not). "
        "`vault:<name>/path:start-end` leaves out that vault's only (another vault may hold the same path).",
    )
    quoted: JsonBool = Field(
        False,
        description="Fence the block as quoted data: `<vault-notes-N>`, a line saying it is quoted from the "
        "user's notes and is not instructions, the entries, `</vault-notes-N>`, with N random per answer "
        "and any such tag inside a note made inert, so a note can neither close nor imitate the fence. "
        "The fence counts in max_chars.",
    )
    cite: JsonBool = Field(
        True,
        description="With `quoted`: whether the fence's head asks the model to cite the entries as "
        "[path:lines] (true) or says only that they are data to use, not instructions (false: for an "
        "agent told not to mention paths or lines, as OpenClaw's memory.citations `off`). Entries are "
        "labelled [path:start-end] either way. Without `quoted`, nothing.",
    )
    explain: JsonBool = Field(
        False,
        description="Also say what became of every candidate (`explain`): quoted, or left out and why. "
        "What the look-inside page's recall preview shows.",
    )

    @field_validator("query")
    @classmethod
    def _blank_is_none(cls, value: str | None) -> str | None:
        return value.strip() if value and value.strip() else None

    @model_validator(mode="after")
    def _query_or_messages(self) -> ContextRequest:
        if self.query is None and not any(m.content.strip() for m in self.messages):
            raise ValueError("give a query or the last messages of the conversation")
        return self


class ContextSource(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.CONTEXT_RESPONSE["sources"][0]]})

    kind: Literal["note", "memory"]
    vault: str = Field("", description="The vault the entry comes from (its VAULTS name).")
    note_path: str = Field(description="The note the text comes from (a fact's source note for memory).")
    note_title: str
    heading_context: str
    start_line: int = Field(description="First line of the included text (0 for a fact).")
    end_line: int = Field(description="Last line of the included text, inclusive (0 for a fact).")
    memory_key: str | None = Field(None, description="The fact's key (kind memory).")
    attribution: str = Field(description="The label of the entry in `context`, e.g. `path:14-18`.")
    score: float
    confidence: float = Field(
        description="How likely the chunk is relevant at all, 0-1 (as in /search; 0 for a fact)."
    )
    chars: int = Field(description="Characters of the entry in `context` (header included).")
    truncated: bool = Field(
        description="The text is part of the chunk, the lines the attribution names: cut at a word boundary "
        "to fit, or (a block asked with min_confidence whose entries do not fit whole) its lines that match "
        "the question; ' …' marks lines left out."
    )
    sensitive_categories: list[str]


class ConsideredOut(BaseModel):
    vault: str = Field("", description="The vault of the candidate.")
    attribution: str = Field(description="`path:start-end` (as the block labels it) or `memory:key`.")
    note_path: str
    start_line: int
    end_line: int
    confidence: float
    quoted: bool = Field(description="In `context`.")
    reason: str = Field(
        description='"quoted", "quoted, cut to fit", "quoted: its lines that match the question" (its share '
        'of max_chars, when the entries let through do not fit whole), or why not: "below the floor" '
        '(min_confidence), "repeated" (repeats an `exclude` entry), "excluded category", "a list of links '
        'whose note is quoted instead", "a list of links: the notes it points to answer, not it", "holds '
        'only its note\'s name: nothing of it to quote" (a note of headings or a Dataview query alone), "far '
        'less likely than the first entry" (min_confidence), "states no sum of money, and the question '
        'asks for one" (min_confidence), "names nothing the question asks the sum of" (min_confidence: a '
        'sum for the physio, asked what the hygienist cost), "its lines on the question are unticked '
        'tasks: a plan, beside an entry telling what happened" (min_confidence), "its sums are reckoned or '
        'quoted, not paid, beside an entry stating one paid" (min_confidence: asked what was spent), "its '
        'sums stand apart from what the question asks the sum of, beside an entry writing one with it" '
        "(min_confidence: the label printing's £14 beside the price list, asked the price of a jar), "
        '"states no time of day, and '
        'the question asks for one" (likewise a temperature, pressure, score, distance, weight or a number '
        "such as a phone or index number; "
        'min_confidence), "an earlier one of its series: the question asks about today" (min_confidence: '
        '"Budget 2024" beside "Budget 2025" asked about now), "of another time than the period asked, '
        'beside entries of it" (min_confidence: dated wholly outside the period the question names), "the '
        'turn asks about the conversation itself, which no note holds" (min_confidence: "summarize our '
        'conversation so far"), "the turn asks the agent to make something up, which no note holds" '
        '(min_confidence: "tell me a joke"), "beyond max entries" (max_chunks), "duplicate", "over the '
        'budget" (max_chars), "no text left (redacted or blank)", "of a vault without what the question '
        'names: another vault holds it" (several vaults: another holds the note the question is the name '
        "of, or more of the people, tags or period it names).",
    )


class ContextExplainOut(BaseModel):
    floor: float | None = Field(description="min_confidence as applied (null: none).")
    max_chars: int
    max_chunks: int
    considered: list[ConsideredOut] = Field(
        description="Every candidate the search gave, remembered facts first, best first, and its fate."
    )


class ContextResponse(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.CONTEXT_RESPONSE]})

    query: str = Field(description="The query searched (built from the messages when no query was given).")
    context: str = Field(
        description="The block to inject: entries `[path:start-end] heading` + text (or `[memory:key] from "
        "path` + fact), separated by blank lines; never longer than max_chars, never cut mid-word, no "
        "duplicates, secrets redacted. Empty when nothing matched."
    )
    chars: int = Field(description="len(context).")
    max_chars: int
    sources: list[ContextSource] = Field(description="The entries of `context`, in order, as data.")
    omitted: int = Field(description="Candidates left out: duplicates, excluded, or over the budget.")
    mode: SearchMode
    status: str = Field(description="healthy, or degraded when part of the search was unavailable.")
    warnings: list[str] = Field(description=FILTER_WARNINGS)
    sensitive_detected: bool
    memory_suggestion: MemorySuggestionOut | None = Field(
        None, description=f"{MEMORY_SUGGESTION} Judged on the entries of `context` only."
    )
    explain: ContextExplainOut | None = Field(
        None, description="With `explain`: every candidate and why it is in `context` or not. null otherwise."
    )
    missing_vaults: list[MissingVaultOut] = Field(
        default_factory=list,
        description="Vaults asked that could not answer: the block quotes the other vaults'.",
    )
