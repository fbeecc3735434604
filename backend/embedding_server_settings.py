"""The settings of an embedding model served over HTTP (EMBEDDING_PROVIDER=ollama or openai): where the
server is, its key, the instructions put before each text, the requests' size, timeouts and retries. A part of
the one settings class (config.Settings inherits it), kept here so config.py stays within the module size.
"""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings

REMOTE_PROVIDERS = ("ollama", "openai")  # models served over HTTP: the ones given their instructions here


class EmbeddingServerSettings(BaseSettings):
    """Read only as part of `config.Settings` (which sets where they are read from)."""

    # unset (None) is the table's, "" is none: so no BLANK_IS_UNSET for these two
    embedding_query_instruction: str | None = Field(
        None,
        description="ollama/openai: text put before each search query; unset = the model's own from the "
        "table of known models (docs/deployment.md), empty = none. Changing it needs no re-embedding.",
    )
    embedding_document_instruction: str | None = Field(
        None,
        description="ollama/openai: text put before each note's text; unset = the model's own, empty = none. "
        "Part of the index identity: changing it re-embeds the vault (AUTO_REEMBED).",
    )
    ollama_url: str = Field("http://127.0.0.1:11434", description="Ollama base URL.")
    openai_base_url: str = Field(
        "http://127.0.0.1:8080/v1", description="openai: the API's root, where /embeddings and /models are."
    )
    embedding_api_key: SecretStr | None = Field(
        None, description="ollama/openai: sent as `Authorization: Bearer`; never logged or shown."
    )
    embedding_dimension: int | None = Field(
        None,
        ge=1,
        le=65536,
        description="The model's vector size, when the server serves a model this service does not know and "
        "may be down at the first start; checked against the model's real answer.",
    )
    # the OLLAMA_* request settings below are the openai provider's too (one set for a server over HTTP)
    ollama_batch_size: int = Field(
        64,
        ge=1,
        le=2048,
        description="Most texts per embedding request (ollama, openai); fewer while the server is slow.",
    )
    ollama_concurrency: int = Field(
        2,
        ge=1,
        le=64,
        description="Most embedding requests in flight at once while indexing (ollama, openai).",
    )
    ollama_timeout_seconds: float = Field(
        120.0,
        gt=0.0,
        le=3600.0,
        description="Read timeout of an embedding request (a cold model loads slowly).",
    )
    ollama_connect_timeout_seconds: float = Field(
        5.0, gt=0.0, le=600.0, description="Connect timeout of an embedding request (ollama, openai)."
    )
    ollama_max_retries: int = Field(
        3, ge=0, le=10, description="Retries (with backoff) of an embedding request after a 5xx or a timeout."
    )
