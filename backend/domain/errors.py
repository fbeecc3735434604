"""Transport-free errors. `api/errors.py` maps each code to an HTTP status once."""

from __future__ import annotations


class KnowledgeBridgeError(Exception):
    code = "INTERNAL_ERROR"
    recoverable = False
    suggestion = "Check the service logs."

    def __init__(self, detail: str, *, suggestion: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        if suggestion is not None:
            self.suggestion = suggestion


class IndexNotReadyError(KnowledgeBridgeError):
    code = "INDEX_NOT_READY"
    recoverable = True
    suggestion = (
        "Wait for the first indexing to finish (GET /index/status) or start one with POST /index/rebuild."
    )


class IndexUnavailableError(KnowledgeBridgeError):
    code = "INDEX_UNAVAILABLE"
    recoverable = True
    suggestion = "Check that Qdrant is running and reachable, then retry."


class EmbeddingModelMismatchError(KnowledgeBridgeError):
    code = "EMBEDDING_MODEL_MISMATCH"
    recoverable = True
    suggestion = (
        "Rebuild the index with the configured model "
        "(POST /index/rebuild or `python -m backend index --rebuild`)."
    )


class EmbedderUnavailableError(KnowledgeBridgeError):
    code = "EMBEDDER_UNAVAILABLE"
    recoverable = True
    suggestion = "Check the embedding service, or search with mode=keyword meanwhile."


class ModelNotFoundError(KnowledgeBridgeError):
    code = "MODEL_NOT_FOUND"
    recoverable = True
    suggestion = "Pull the model first, e.g. `ollama pull mxbai-embed-large`."


class ReindexInProgressError(KnowledgeBridgeError):
    code = "REINDEX_IN_PROGRESS"
    recoverable = True
    suggestion = "Wait for the running job to finish (GET /index/status) and try again."


class NoteNotFoundError(KnowledgeBridgeError):
    code = "NOTE_NOT_FOUND"
    recoverable = False
    suggestion = "Check the vault-relative path (e.g. `Projects/Database migration.md`) or search for it."


class SecurityViolationError(KnowledgeBridgeError):
    """A path that tries to leave the vault (or is not a plain vault-relative path at all)."""

    code = "SECURITY_VIOLATION"
    recoverable = False
    suggestion = (
        "Use a vault-relative path with forward slashes, e.g. `Projects/Database migration.md`: "
        "no `..`, no leading `/`, no drive letter, no backslash, no control characters."
    )


class UnauthorizedError(KnowledgeBridgeError):
    code = "UNAUTHORIZED"
    recoverable = True
    suggestion = "Send the configured API key as `Authorization: Bearer <key>`."


class RequestTooLargeError(KnowledgeBridgeError):
    """A request body over MAX_REQUEST_BYTES (declared by Content-Length, or counted as it streams)."""

    code = "REQUEST_TOO_LARGE"
    recoverable = True
    suggestion = "Send a smaller request: shorter texts, fewer filters (the limit is MAX_REQUEST_BYTES)."


class UrlTooLongError(KnowledgeBridgeError):
    """A path plus query string over MAX_URL_BYTES."""

    code = "URL_TOO_LONG"
    recoverable = True
    suggestion = "Use a shorter path or fewer query parameters (the limit is MAX_URL_BYTES)."


class ForeignRequestError(KnowledgeBridgeError):
    """Without API_KEY: a request for a host name that is not ours (DNS rebinding), or a state-changing
    request sent by a page on another origin (cross-site request forgery)."""

    code = "FOREIGN_REQUEST"
    recoverable = False
    suggestion = (
        "Call the service by a loopback name (localhost, 127.0.0.1, [::1]), add the name you use to "
        "ALLOWED_HOSTS (a browser page's origin to CORS_ORIGINS), or set API_KEY and send it."
    )


class ServerBusyError(KnowledgeBridgeError):
    """More heavy requests at once than the service takes (MAX_CONCURRENT_REQUESTS and its queue)."""

    code = "SERVER_BUSY"
    recoverable = True
    suggestion = "Retry after the number of seconds in the Retry-After header; send fewer requests at once."


class RequestTimeoutError(KnowledgeBridgeError):
    """A client that did not finish sending its request body within REQUEST_BODY_TIMEOUT_SECONDS."""

    code = "REQUEST_TIMEOUT"
    recoverable = True
    suggestion = "Send the whole request body at once, promptly (the limit is REQUEST_BODY_TIMEOUT_SECONDS)."


class InvalidRequestError(KnowledgeBridgeError):
    """A request that is well-formed but cannot be answered as asked (e.g. a line range past the end)."""

    code = "VALIDATION_ERROR"
    recoverable = True
    suggestion = "Fix the request fields named in detail; the schema is at /docs."


class MemoryNotFoundError(KnowledgeBridgeError):
    code = "MEMORY_NOT_FOUND"
    recoverable = False
    suggestion = "List the remembered facts with GET /memory."


class VaultMismatchError(KnowledgeBridgeError):
    """The index in this data directory (or these server collections) was built from another vault."""

    code = "VAULT_MISMATCH"
    recoverable = True


class ServiceUnreachableError(KnowledgeBridgeError):
    """The CLI's: the running service it was asked to use (--url) does not answer, or stopped answering."""

    code = "SERVICE_UNREACHABLE"
    recoverable = True


class ServiceAmbiguousError(KnowledgeBridgeError):
    """The CLI's: several services run, each for its own vault, and the command names none of them."""

    code = "SERVICE_AMBIGUOUS"
    recoverable = True
    suggestion = "Name the vault with --vault (or VAULT_PATH)."


class StoreError(KnowledgeBridgeError):
    code = "STORE_ERROR"
    recoverable = False


class MigrationTargetNotEmptyError(KnowledgeBridgeError):
    code = "TARGET_NOT_EMPTY"
    recoverable = True
    suggestion = (
        "Keep it (the server already serves this vault), migrate with --replace to overwrite it, "
        "or set VAULT_NAME to give this vault collections of its own."
    )


REBUILD_SUGGESTION = (
    "Rebuild the index from the vault: POST /index/rebuild while the service runs, or "
    "`python -m backend index --rebuild` while it is stopped. The vault itself is untouched."
)


class IndexCorruptedError(KnowledgeBridgeError):
    """The index files on disk are damaged (truncated, garbled, half-deleted): the vault is fine, and a
    rebuild from it restores the index."""

    code = "INDEX_CORRUPTED"
    recoverable = True
    suggestion = REBUILD_SUGGESTION


class StorageFullError(KnowledgeBridgeError):
    """The disk holding the index has too little free space to write safely; nothing was written."""

    code = "STORAGE_FULL"
    recoverable = True
    suggestion = "Free disk space where DATA_DIR lives, then retry (POST /index/sync)."


class UnknownVaultError(KnowledgeBridgeError):
    """A request names a vault this service does not serve (VAULTS)."""

    code = "UNKNOWN_VAULT"
    recoverable = True


class VaultUnavailableError(KnowledgeBridgeError):
    """A vault this service serves could not be opened, or its folder is gone: the others still answer."""

    code = "VAULT_UNAVAILABLE"
    recoverable = True
    # true of both ways a vault is out: its folder gone while serving (back by itself once the folder is)
    # and a vault that failed to open at start (out until a restart); each says its own where it is known
    suggestion = (
        "Check that the vault's folder exists and is readable: a folder put back is served again by itself, "
        "a vault that failed to open at start after a restart of the service."
    )


class NoteAmbiguousError(KnowledgeBridgeError):
    """A note path (or a remembered fact's key) held by several vaults, asked without naming one."""

    code = "NOTE_AMBIGUOUS"
    recoverable = True
