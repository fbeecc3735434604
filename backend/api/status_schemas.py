"""Response schemas of the index routes: what /index/status, /index/verify and the index jobs answer."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.api import examples


class JobInfo(BaseModel):
    id: str
    kind: str = Field(description="index (first pass), sync (compare vault and index) or rebuild.")
    phase: str = Field(
        description="queued, scanning, indexing (keyword vectors: every note is searchable by keyword once "
        "it ends), embedding (dense vectors, after the keyword ones), removing, switching (rebuild), done, "
        "failed or cancelled."
    )
    done: int = Field(description="Notes done in this phase.")
    total: int = Field(description="Notes this phase has to do.")
    started_at: datetime
    finished_at: datetime | None = None
    error: str | None = None
    detail: str | None = Field(
        None, description="What the phase does now when the counts cannot show it (a large note's pieces)."
    )
    vectors_left: int | None = Field(
        None,
        description="Embedding: dense vectors (chunks and their windows) this pass has still to embed; notes "
        "left from an earlier pass are counted at the mean of those done. Kept when the job ends unfinished.",
    )
    eta_seconds: float | None = Field(
        None,
        description="Embedding: about how many seconds the vectors left take at this pass's pace so far "
        "(weighed by text length); null until the pace is known and once the job has ended.",
    )


class FailedFile(BaseModel):
    path: str
    reason: str


class LinkCountsOut(BaseModel):
    total: int
    resolved: int
    unresolved: int = Field(description="Links to notes not created yet (or attachments not in the vault).")
    embeds: int


class EmbedderProblemOut(BaseModel):
    error_code: str = Field(
        description="EMBEDDER_UNAVAILABLE, MODEL_NOT_FOUND, or EMBEDDING_MODEL_MISMATCH (wrong vector size)"
    )
    detail: str
    suggestion: str


class EmbedderInfo(BaseModel):
    provider: str = Field(
        description="onnx, ollama, openai (an OpenAI-compatible server) or none (keyword only)."
    )
    model: str
    query_instruction: str | None = Field(
        None,
        description="What a model served over HTTP (ollama, openai) gets before each search query: its "
        "documentation's (the table of known models) or EMBEDDING_QUERY_INSTRUCTION; empty: none. Null for "
        "the in-process models, which add their own.",
    )
    document_instruction: str | None = Field(
        None,
        description="What it gets before each note's text (EMBEDDING_DOCUMENT_INSTRUCTION); recorded with "
        "the index, so changing it re-embeds the vault. Null for the in-process models.",
    )
    state: Literal["loading", "ready", "failed", "idle", "off"] = Field(
        description="loading: the model is being loaded or built (first start), searches answer by keyword "
        "meanwhile; ready; failed: see `error`; idle: the in-process model is not loaded (the CLI working "
        "without a service; it loads on first use); off: EMBEDDING_PROVIDER=none (keyword only)."
    )
    healthy: bool = Field(
        description="False while the embedder cannot answer; searches fall back to keywords."
    )
    error: EmbedderProblemOut | None = Field(
        None, description="The embedder's last failure, until it answers again (what to do: `suggestion`)."
    )
    texts_sent: int | None = Field(
        None,
        description="Texts sent to the model since the service started (each text once: the embedding cache "
        "answers the others); null without an embedder.",
    )
    cache_hits: int | None = Field(
        None, description="Texts the embedding cache answered since the service started, without the model."
    )
    chosen_by: Literal["setting", "index", "languages"] | None = Field(
        None,
        description="Why this model: EMBEDDING_MODEL (setting), the model the index was built with (index), "
        "or, at the first index, the vault's languages (languages: multilingual-e5-small when most notes "
        "are not in English).",
    )
    reason: str | None = Field(None, description="The choice in words, with the vault's languages.")
    proposal: str | None = Field(
        None,
        description="What to change when the model does not suit the vault's languages (an English-only "
        "model for a vault mostly in other languages), or null.",
    )


class LanguagesOut(BaseModel):
    shares: dict[str, float] = Field(
        description="Share of the sampled notes in each language (ISO 639-1), largest first: from their "
        "frontmatter `lang`/`language`, else detected from their text."
    )
    sampled_notes: int = Field(description="Notes whose language was told, of an even sample of the vault.")
    query_languages: list[str] = Field(
        description="The languages every query is also stemmed in (each with at least 5% of the notes)."
    )
    non_english_share: float = Field(description="Share of the sampled notes not in English.")


class LoopLagOut(BaseModel):
    probes: int = Field(description="Probes in the window (one every 50 ms, the last minute).")
    p50_ms: float
    p99_ms: float
    max_ms: float


class RecallCalibrationOut(BaseModel):
    source: Literal["shipped", "fitted", "fitting", "keyword"] = Field(
        description="How each hit's confidence (and so the recall gate) is weighed: shipped: weights "
        "calibrated for this model on the evaluation sets; fitted: a gate fitted for this model on this "
        "vault (a model without shipped weights); fitting: that fit is running, keyword-only weights "
        "meanwhile; keyword: keyword-only weights (no dense side, or a model not fitted yet)."
    )
    model: str | None = Field(None, description="The model whose cosines are weighed (the serving index's).")
    fitted_at: datetime | None = Field(None, description="When the fitted gate was fitted.")
    chunks: int | None = Field(
        None, description="The vault's chunks when it was fitted (a refit follows ×2)."
    )
    probes: int | None = Field(None, description="Probe turns the vault cannot answer it was fitted on.")


class VaultStateOut(BaseModel):
    """One vault of a service that serves several: its index's state, or why it does not answer."""

    vault: str
    path: str = Field(description="The vault's folder.")
    available: bool = Field(description="False when the vault could not be opened or its folder is gone.")
    error_code: str | None = Field(None, description="Why it is unavailable (the error envelope's code).")
    detail: str | None = None
    status: IndexStatus | None = Field(
        None, description="Its /index/status?vault=<name> (null: unavailable)."
    )


class IndexStatus(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.INDEX_STATUS]})

    vault: str = Field("", description="The vault this status is of (its VAULTS name; VAULT_NAME with one).")
    vaults: list[VaultStateOut] | None = Field(
        None,
        description="With several vaults (VAULTS) and no `vault` asked: every vault's state; the fields "
        "above are the first vault's. null otherwise.",
    )
    indexed_notes: int
    indexed_chunks: int
    dense_pending: int = Field(description="Notes searchable by keyword only until the embedder catches up.")
    unindexed_files: int = Field(
        description="Notes on the disk the index does not hold: waiting to be indexed, or failed (see "
        "failed_files)."
    )
    pending_changes: int = Field(description="Changed paths the watcher is waiting to apply (debounce).")
    watcher_running: bool = Field(description="False when WATCH is off or the watcher is down (it restarts).")
    watcher_restarts: int = Field(description="Times a dead watcher was restarted (each followed by a sync).")
    watcher_error: str | None = Field(None, description="The watcher's last failure, if any.")
    links: LinkCountsOut
    last_indexed: datetime | None = Field(None, description="When a pass last wrote or removed a note.")
    last_sync: datetime | None = Field(None, description="When the index was last compared with the disk.")
    generation: str | None = Field(
        None, description="The index generation serving now; a rebuild switches it."
    )
    embedder: EmbedderInfo
    embedding_model: str = Field(
        description="The configured embedding model (EMBEDDING_MODEL, ONNX_VARIANT)."
    )
    embedding_dimension: int | None = None
    index_model: str = Field(
        description="The model the serving index was built with, whose vectors answer searches: the "
        "configured one, or after a change of model or variant the previous one until the re-embedding "
        "switches (see model_change)."
    )
    index_dimension: int | None = None
    model_change: str | None = Field(
        None,
        description='Set while the index was built for other settings than the configured ones: "serving X; '
        're-embedding for Y: n of N" (notes with vectors of Y so far), or what is needed to switch.',
    )
    recall_calibration: RecallCalibrationOut | None = Field(
        None, description="The calibration in force; `python -m backend calibrate` fits it again."
    )
    languages: LanguagesOut | None = Field(
        None, description="The vault's languages, from a sample of its notes taken at start-up."
    )
    vault_path: str
    store: str = Field(description="embedded (qdrant-edge) or the Qdrant server URL.")
    store_healthy: bool = Field(
        description="False when the store could not be reached; searches answer INDEX_UNAVAILABLE meanwhile."
    )
    job: JobInfo | None = None
    previous_job: JobInfo | None = Field(
        None,
        description="The job before `job`, as it ended: a client following a job it started finds how it "
        "ended here once the service has begun another (a queued sync starts the moment a job ends).",
    )
    search_warming: bool = Field(
        False,
        description="True for the first seconds after a start, while the stored chunks are read into the "
        "search memory and what showing each costs is computed (searches answer meanwhile, slower).",
    )
    loop_lag: LoopLagOut | None = Field(
        None,
        description="HTTP only: how late the service's event loop woke a task asking to sleep 50 ms, over "
        "the last minute. Searches run in a thread pool: above a few ms, something blocks the loop and "
        "delays every request.",
    )
    failed_files: list[FailedFile]


class DriftFinding(BaseModel):
    kind: str = Field(description="What does not add up, e.g. 'notes on disk missing from the index'.")
    count: int
    paths: list[str] = Field(description="The first of the notes concerned (all of them are counted).")


class VerifyResult(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.VERIFY_RESULT]})

    consistent: bool = Field(description="True when the index matches the vault and adds up with itself.")
    notes_on_disk: int
    notes_indexed: int
    indexed_chunks: int
    dense_pending: int = Field(description="Notes waiting for dense vectors (not drift: a sync embeds them).")
    pending_changes: int = Field(description="Changes the watcher has seen but not applied yet.")
    drift: list[DriftFinding]
    skipped: list[FailedFile] = Field(description="Files on disk that cannot be indexed (not drift).")


class JobAccepted(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.JOB_ACCEPTED]})

    job_id: str
    status: str = "accepted"
    status_url: str = "/index/status"


VaultStateOut.model_rebuild()
