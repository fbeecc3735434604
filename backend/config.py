"""Settings: environment variables (and `.env`), validated once at start-up.

Built by the entry points (the app factory, the CLI: backend/entrypoints/) and passed down; never imported as
a global.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import NoDecode, SettingsConfigDict
from pydantic_settings import SettingsError as SourceError

from backend.data_dirs import DEFAULT_VAULT_NAME, model_cache, models_dir, store_dir, vault_data_dir
from backend.embedding_server_settings import EmbeddingServerSettings
from backend.setting_values import (
    BLANK_IS_UNSET,
    SensitiveCategorySetting,
    absolute_path,
    browser_origins,
    default_categories,
    header_token,
    named_folder,
    share,
    split_list,
    upper_text,
)
from backend.vault_set_settings import VaultSetSettings

REPO_ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_VAULT = REPO_ROOT / "docs" / "example-vault"
# how the CLI is typed: every message naming one of its commands, at the terminal or to an MCP client
PROGRAM = "python -m backend"

# comma-separated in the environment
LIST_SETTINGS = ("deny_dirs", "allow_dirs", "saved_folders", "cors_origins", "allowed_hosts")
DEFAULT_MODELS = {
    "onnx": "all-MiniLM-L6-v2",
    "ollama": "mxbai-embed-large",
    "openai": "mxbai-embed-large",
    "none": "none",
}


class SettingsError(Exception):
    """Invalid configuration, described in one line that names the variable."""


class Settings(EmbeddingServerSettings, VaultSetSettings):
    model_config = SettingsConfigDict(env_file=".env", env_file_encoding="utf-8", extra="ignore")

    vault_path: Path = Field(EXAMPLE_VAULT, description="The Obsidian vault to index, read-only (not empty).")
    data_dir: Path = Field(
        default_factory=lambda fields: vault_data_dir(fields.get("vault_path", EXAMPLE_VAULT)),
        description="Where this vault's index, embedding cache and remembered facts live. Unset: a folder of "
        "the vault's own under ./data, `data/<vault folder>-<8 hex digits of its path>`, so each vault keeps "
        "its index and switching back finds it. A data dir belongs to one vault: another is refused. Empty: "
        "refused.",
    )
    qdrant_url: str | None = Field(None, description="Qdrant server URL; unset = embedded store in DATA_DIR.")
    qdrant_api_key: str | None = Field(None, description="API key for the Qdrant server.")
    embedding_provider: Literal["onnx", "ollama", "openai", "none"] = Field(
        "onnx",
        description="onnx = in-process MiniLM; ollama = Ollama /api/embed; openai = an OpenAI-compatible "
        "/v1/embeddings (llama.cpp, LM Studio, vLLM, text-embeddings-inference); none = keyword only.",
    )
    embedding_model: str | None = Field(
        None,
        description="Model name. onnx: all-MiniLM-L6-v2 (English) or multilingual-e5-small (~100 languages); "
        "unset = the model the index was built with, or at the first index the one the vault's languages "
        "call for (multilingual-e5-small when most notes are not in English). ollama: defaults to "
        "mxbai-embed-large (bge-m3 for a vault in many languages). openai: the name the server serves.",
    )
    host: str = Field("127.0.0.1", description="Address the HTTP server binds to.")
    port: int = Field(
        8000,
        ge=0,
        le=65535,
        description="HTTP port; 0 = any free port. The service records the one it listens on in DATA_DIR "
        "(service.json), where the CLI finds it.",
    )
    debounce_seconds: float = Field(
        2.0, ge=0.0, le=60.0, description="Quiet time after the last save of a note before it is indexed."
    )
    watch: bool = Field(True, description="Follow the vault with a file watcher while the service runs.")
    api_key: str | None = Field(
        None,
        description="When set, every request but /health (the API, /mcp, /docs, /openapi.json alike) needs "
        "`Authorization: Bearer <key>`.",
    )
    # -- what the HTTP edge accepts (backend/api/guards.py) -----------------------------------------
    max_request_bytes: int = Field(
        1024 * 1024,
        ge=1024,
        le=1024 * 1024 * 1024,
        description="Largest request body accepted (declared or streamed); larger ones answer 413.",
    )
    max_url_bytes: int = Field(
        # 16 KiB: the longest note path served (1,024 characters, 12 bytes each percent-encoded) fits
        16384,
        ge=256,
        le=65536,
        description="Longest path plus query string accepted; longer ones answer 414.",
    )
    cors_origins: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated browser origins (scheme://host[:port]) allowed to call the API, or *; "
        "empty = no CORS headers at all.",
    )
    # -- rebinding, forgery and overload (issue 17; backend/api/guards.py) --------------------------
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Without API_KEY: comma-separated host names accepted besides loopback ones "
        "(localhost, 127.0.0.1, [::1]), e.g. the machine's name on the LAN; * accepts any (not advised).",
    )
    max_filter_items: int = Field(
        1000, ge=1, le=100_000, description="Most entries in one filter list (paths, folders, tags, ...)."
    )
    max_filter_bytes: int = Field(
        64 * 1024, ge=1024, le=16 * 1024 * 1024, description="Most bytes in all filter lists of a request."
    )
    max_concurrent_requests: int = Field(
        16, ge=1, le=1024, description="Requests worked on at once (all but /health); more wait in a queue."
    )
    max_queued_requests: int = Field(
        64, ge=0, le=100_000, description="Requests waiting for a slot; past it they answer 503 SERVER_BUSY."
    )
    large_request_bytes: int = Field(
        64 * 1024,
        ge=1024,
        le=1024 * 1024 * 1024,
        description="Bodies larger than this (or of unknown size) also need one of MAX_LARGE_REQUESTS slots.",
    )
    max_large_requests: int = Field(
        2, ge=1, le=1024, description="Large-bodied requests at once; more answer 503 SERVER_BUSY at once."
    )
    request_body_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=3600,
        description="A request's head, then its body, must each arrive within this (a late body: 408).",
    )
    keep_alive_seconds: float = Field(
        5.0, gt=0, le=3600, description="An idle keep-alive connection is closed after this."
    )
    deny_dirs: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Comma-separated vault folders never indexed (a folder name, or a vault-relative path).",
    )
    allow_dirs: Annotated[list[str], NoDecode] = Field(
        default_factory=list, description="Comma-separated vault folders; when set, only these are indexed."
    )
    saved_folders: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["Clippings"],
        description="Comma-separated folders of notes saved from elsewhere (a web clipper's; a name or a "
        "vault-relative path): ranked below the person's own notes, quoted only when none answers.",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field("INFO", description="Log level.")
    # The largest real notes seen are Excalidraw drawings of ~0.6 MB (13k-note Zettelkasten); a note past the
    # cap is indexed up to it (its start stays searchable) and listed in failed_files with the reason.
    max_note_bytes: int = Field(
        5 * 1024 * 1024,
        ge=1024,
        le=1024**3,
        description="Bytes of a note read and indexed; the rest is left out.",
    )
    min_free_disk_mb: int = Field(
        100,
        ge=0,
        le=1024**2,
        description="Index writes are refused while less than this is free under DATA_DIR.",
    )
    chunk_max_tokens: int = Field(200, ge=32, le=2000, description="Chunk size cap in words.")
    chunk_overlap_tokens: int = Field(30, ge=0, le=500, description="Words repeated between chunks.")
    # 48: windows of one or two chat messages; LoCoMo dev dense 0.555 -> 0.638 nDCG@10 (docs/measurements.md)
    dense_window_words: int = Field(
        48,
        ge=0,
        le=2000,
        description="Words in a dense window: a chunk of several blocks (chat messages, entries) also gets "
        "one vector per window of blocks and is scored by its best one (MAX_SIM); 0 = one vector a chunk. "
        "Part of the index identity: changing it rebuilds the index (AUTO_REEMBED).",
    )
    search_prefetch_limit: int = Field(
        100, ge=10, le=1000, description="Candidates each side (dense, keyword) hands to fusion."
    )
    # read in at start and dropped as notes change (the store stays the truth); the Zettelkasten's 25,714
    # chunks take 72 MB (docs/measurements.md)
    search_cache_mb: int = Field(
        96, ge=0, le=65536, description="Megabytes of the chunks searches read kept in memory; 0 = none."
    )
    # score fusion, dense 0.3 / keyword 0.7: of a grid on SciFact train and LoCoMo dev at once (with dense
    # windows), the best margin of hybrid over its best single mode on the worse of the two sets
    # (docs/measurements.md). Before: FUSION=rrf RRF_K=2 FUSION_WEIGHT_DENSE=0.2 FUSION_WEIGHT_KEYWORD=1.
    rrf_k: int = Field(2, ge=1, le=1000, description="Reciprocal Rank Fusion constant.")
    fusion_weight_dense: float = Field(
        0.3,
        ge=0.0,
        le=10.0,
        description="Weight of the dense side (score: share of its scaled scores; rrf: stretches its ranks).",
    )
    fusion_weight_keyword: float = Field(
        0.7, ge=0.0, le=10.0, description="Weight of the keyword side (as FUSION_WEIGHT_DENSE)."
    )
    # adaptive, dense 0.3..0.7 by the dense winner's lead 1..4, foreign questions 0.9: of a grid on SciFact,
    # LoCoMo and the six XQuAD dev sets at once, the best worst-set margin (docs/languages.md, issue 27)
    fusion: Literal["adaptive", "score", "rrf", "dbsf"] = Field(
        "adaptive",
        description="How the dense and keyword lists are joined: adaptive (each side spread onto 0..1, the "
        "dense side weighted FUSION_DENSE_LOW..FUSION_DENSE_HIGH by how clearly its best candidate stands "
        "out), score (each side's scores over its top score, FUSION_WEIGHT_* weights), rrf (weighted "
        "ranks) or dbsf (Qdrant's). adaptive and score run both sides in one batched store query.",
    )
    fusion_dense_low: float = share(
        0.3, "adaptive: the dense side's weight when its best candidate is unsure."
    )
    fusion_dense_high: float = share(
        0.7, "adaptive: the dense side's weight when its best candidate stands out clearly."
    )
    fusion_dense_foreign: float = share(
        0.9,
        "adaptive and score: the dense side's weight for a question in another language than the vault's "
        "main ones (its words can only meet names and numbers in the notes).",
    )
    max_chunks_per_note: int = Field(
        2,
        ge=1,
        le=50,
        description="Chunks of one note at most in search results (a request may ask otherwise).",
    )
    # 1 (a note dated in the span counts double): LoCoMo dev hybrid 0.823 without, 0.825 at 0.5, 0.826 at 1
    time_boost: float = Field(
        1.0,
        ge=0.0,
        le=10.0,
        description="A question naming a time (in 2024, autumn 2024) multiplies the scores of its chunks by "
        "1 + this (by the share of their period inside), divides by it those that say they are of another "
        "time (their note's date, name or folder, or days they write), keeps the others'; 0 turns it off.",
    )
    today: dt.date | None = Field(None, description="The day 'this year', 'last month' count from (or now).")
    seasons: Literal["northern", "southern"] = Field(
        "northern", description="The hemisphere of the seasons and summer holidays a question names."
    )
    # Keyword side (BM25F). SciFact train is flat across these (docs/measurements.md); names weigh more so a
    # note's own name beats notes that only mention it.
    keyword_weight_file_name: float = Field(3.0, ge=0.0, le=20.0, description="Weight of file-name terms.")
    keyword_weight_title: float = Field(3.0, ge=0.0, le=20.0, description="Weight of title terms.")
    keyword_weight_aliases: float = Field(3.0, ge=0.0, le=20.0, description="Weight of alias terms.")
    keyword_weight_tags: float = Field(2.0, ge=0.0, le=20.0, description="Weight of tag terms.")
    keyword_weight_headings: float = Field(1.5, ge=0.0, le=20.0, description="Weight of heading-path terms.")
    keyword_weight_body: float = Field(1.0, ge=0.0, le=20.0, description="Weight of chunk-text terms.")
    keyword_weight_properties: float = Field(1.0, ge=0.0, le=20.0, description="Weight of property terms.")
    keyword_k1: float = Field(1.2, ge=0.0, le=10.0, description="BM25 term-frequency saturation (k1).")
    keyword_b: float = share(0.5, "BM25 length normalisation of chunk text (b).")
    keyword_avg_doc_len: float = Field(
        120.0, gt=0.0, le=10000.0, description="Chunk-text terms counted as average length by BM25."
    )
    keyword_stop_weight: float = share(
        0.5,
        "Weight of a stop word (the, not, many, what...) in a question; above 0 stop words are "
        "indexed too (adding nothing to a chunk's length), 0 leaves them out of the index and the query. "
        "0.5: English XQuAD 0.971 -> 0.975, LoCoMo 0.832 -> 0.836, SciFact 0.733 -> 0.734; 1 costs LoCoMo "
        "0.015 (docs/languages.md). Switching between 0 and above 0 rebuilds the keyword index.",
    )
    keyword_stemming: bool = Field(
        True, description="Snowball stemming of each word in its note's language (the query's: in its own)."
    )
    keyword_compounds: bool = Field(
        True,
        description="Also index the parts of compound words (German, Dutch, the Nordic languages...), so "
        "'Steuer' finds 'Steuererklärung'. Part of the index identity.",
    )
    vault_language: str = Field(
        "en",
        pattern=r"^[a-z]{2,3}$",
        description="ISO 639-1 code of the language of a note whose frontmatter names none (lang, language) "
        "and whose text is too short to tell. Part of the index identity.",
    )
    # What agents see (issue 7)
    # all-MiniLM-L6-v2 on the example facts: questions about a fact 0.52-0.69, unrelated questions <= 0.13
    memory_min_similarity: float = share(
        0.4,
        "Cosine similarity from which a remembered fact counts as close in meaning to a query "
        "(facts sharing a word with it always count).",
    )
    redact_secrets: bool = Field(
        True, description="Replace secrets (keys, tokens, passwords, card numbers) in every returned text."
    )
    sensitive_categories: dict[str, SensitiveCategorySetting] = Field(
        default_factory=default_categories,
        description='JSON: {"name": {"tags": [...], "words": [...], "headings": [...]}}; replaces the '
        "defaults (health, finance, relationships); {} turns flagging off.",
    )

    # -- production: Ollama, the Qdrant server, several vaults (docs/deployment.md) --------------------
    vault_name: str = Field(
        DEFAULT_VAULT_NAME,
        min_length=1,
        max_length=48,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_-]*$",
        description="Names this vault's index: collections `<name>_chunks/_notes/_links` on a Qdrant server, "
        "its own folder in the embedded store. One name per vault.",
    )
    qdrant_prefer_grpc: bool = Field(False, description="Talk to the Qdrant server over gRPC.")
    qdrant_grpc_port: int = Field(6334, ge=1, le=65535, description="The Qdrant server's gRPC port.")
    qdrant_timeout_seconds: int = Field(30, ge=1, le=3600, description="Timeout of a Qdrant server request.")
    qdrant_shard_number: int | None = Field(
        None, ge=1, le=1024, description="Shards per collection (cluster); unset = the server's default."
    )
    qdrant_replication_factor: int | None = Field(
        None, ge=1, le=64, description="Copies of each shard (cluster); unset = the server's default."
    )
    qdrant_write_consistency_factor: int | None = Field(
        None, ge=1, le=64, description="Replicas that must confirm a write (cluster); unset = 1."
    )
    qdrant_on_disk_vectors: bool = Field(False, description="Keep dense and sparse vectors on disk (mmap).")
    qdrant_on_disk_payload: bool = Field(False, description="Keep payloads on disk instead of in RAM.")
    onnx_model_dir: Path | None = Field(
        None,
        description="A folder with the ONNX graph prepared by `python -m backend prepare-model` (the "
        "Docker image bakes one in); unset or stale = built on first start into MODEL_CACHE_DIR.",
    )
    model_cache_dir: Path | None = Field(
        None,
        description="Where the in-process model's built graphs are kept, once per machine and user (shared "
        "by every service and data dir; safe for two services at once); unset = "
        "$XDG_CACHE_HOME/knowledge-bridge/models (~/.cache/...), or DATA_DIR/models when that is not "
        "writable.",
    )
    embedding_cache_dir: Path | None = Field(
        None,
        description="Where the embedding cache (vectors by model and text hash) is kept, shared by every "
        "vault and data dir using the folder; unset = beside the model cache, ~/.cache/knowledge-bridge.",
    )
    auto_reembed: bool = Field(
        True,
        description="When the index was built with another embedding model, variant, DENSE_WINDOW_WORDS, "
        "keyword settings or older chunk rules (an upgrade, a changed setting), rebuild it for the "
        "configured ones in the background while it keeps answering as it was built; false = keep "
        "answering so until POST /index/rebuild.",
    )
    recall_gate_fit: bool = Field(
        True,
        description="For an embedding model without shipped recall weights (Ollama, OpenAI-compatible), fit "
        "a recall gate on the vault after indexing (158 short searches); false = keyword-only weights until "
        "`python -m backend calibrate`.",
    )
    onnx_variant: Literal[
        "fp32", "int8", "fp32-opt", "int8-opt", "int8-opt-ffn2fp32", "int8-opt-outliers"
    ] = Field(
        "int8-opt-outliers",
        description="Build of the in-process model: fp32 as exported, -opt after onnxruntime's transformer "
        "optimiser, int8 dynamically quantised (-ffn2fp32: but each layer's feed-forward output; -outliers: "
        "but that output's few widest input channels). Part of the index identity: changing it re-embeds "
        "the vault (AUTO_REEMBED).",
    )
    onnx_threads: int | None = Field(
        None,
        ge=1,
        le=256,
        description="Texts the in-process model embeds at once while indexing, each on a thread of its own; "
        "unset = one per core.",
    )
    onnx_query_threads: int | None = Field(
        None, ge=1, le=256, description="Threads embedding a search query (own session); unset: one per core."
    )
    onnx_query_spinning: bool = Field(
        True,
        description="Let the query session's idle thread spin-wait briefly (30 us) between operators, never "
        "after the query: 1.2-1.4x faster query embedding while the cores are idle or moderately busy; set "
        "false on a machine other programs keep oversubscribed, where it made the p95 much worse.",
    )

    _split_lists = field_validator(*LIST_SETTINGS, mode="before")(split_list)
    _named_folders = field_validator("vault_path", "data_dir", mode="before")(named_folder)
    _absolute_vault = field_validator("vault_path")(absolute_path)
    _printable_key = field_validator("api_key")(header_token)
    _origins = field_validator("cors_origins")(browser_origins)
    _upper_level = field_validator("log_level", mode="before")(upper_text)

    @field_validator(*BLANK_IS_UNSET, mode="before")
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        return None if isinstance(value, str) and not value.strip() else value

    @model_validator(mode="after")
    def _check(self) -> Settings:
        if self.chunk_overlap_tokens >= self.chunk_max_tokens:
            raise ValueError("CHUNK_OVERLAP_TOKENS must be smaller than CHUNK_MAX_TOKENS")
        return self

    def prefixed(self, prefix: str, names: Iterable[str]) -> dict[str, Any]:
        """Constructor arguments from the settings named `prefix` + the argument's name
        (KEYWORD_WEIGHT_TITLE → title), for a group of settings that maps one to one onto a constructor."""
        return {name: getattr(self, prefix + name) for name in names}

    @property
    def model_name(self) -> str:
        return self.embedding_model or DEFAULT_MODELS[self.embedding_provider]

    @property
    def store_dir(self) -> Path:
        return store_dir(self.data_dir, self.vault_name, self.vault_path)

    @property
    def obsidian_vault(self) -> str:
        """The vault's name in `obsidian://` links: VAULT_NAME when set to something else than the default
        (not a short name of VAULTS), else the vault's folder name (what Obsidian itself calls the vault)."""
        named = self.vault_name != DEFAULT_VAULT_NAME and not self._one_of_vaults
        return self.vault_name if named else self.vault_path.name

    @property
    def data_dir_named(self) -> bool:
        """DATA_DIR was set (environment, .env, --data-dir), not derived from the vault."""
        return "data_dir" in self.model_fields_set

    @property
    def vault_named(self) -> bool:
        """VAULT_PATH was set (environment, .env, --vault), not the bundled example vault by default."""
        return "vault_path" in self.model_fields_set

    @property
    def models_dir(self) -> Path:
        return models_dir(self.data_dir)

    @property
    def model_cache(self) -> Path:
        return model_cache(self.model_cache_dir, self.data_dir)


def load_settings(**overrides: object) -> Settings:
    """Build settings, turning any validation error into one line that names the variable."""
    try:
        settings = Settings(**{k: v for k, v in overrides.items() if v is not None})  # type: ignore[arg-type]
    except SourceError as exc:  # a complex value (SENSITIVE_CATEGORIES) that is not valid JSON
        named = re.search(r'field "(\w+)"', str(exc))
        field = named.group(1).upper() if named else "settings"
        raise SettingsError(f"invalid setting {field}: not valid JSON") from None
    except ValidationError as exc:
        first = exc.errors()[0]
        field = str(first["loc"][0]).upper() if first["loc"] else "settings"
        raise SettingsError(f"invalid setting {field}: {first['msg']} (got {first.get('input')!r})") from None
    if not settings.vault_path.is_dir():
        raise SettingsError(f"invalid setting VAULT_PATH: {settings.vault_path} is not a directory")
    return settings
