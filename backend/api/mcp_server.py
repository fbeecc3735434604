"""The MCP endpoint: the agent capabilities as MCP tools on streamable HTTP at `/mcp`, in the same app.

Built on the official `mcp` SDK (v2: `MCPServer`, stateless streamable HTTP with JSON responses, so any
worker can answer any request and no session outlives a call). Each tool builds its route's request from its
arguments (`request_from`) and calls the same answer as its HTTP route (vault_search.py: `search_vaults`;
vault_answers.py: `context_vaults`, `status_vaults`; answers.py: `note_answer`, ...) on the same `Library` of
vaults, so both transports answer alike (several vaults: `vaults` to search, `vault` for a note, each result
naming its vault), validate alike (our request models) and fail alike: a failure is a tool error (`isError`)
whose text and structured content are our error envelope (`error_code`, `detail`, `recoverable`,
`suggestion`).

API_KEY protects `/mcp` like every route: the key middleware (backend/api/guards.py) wraps the whole app, so a
request without it gets the 401 envelope before the SDK is reached.
The app's lifespan runs the SDK's session manager (`run_session_manager`).
"""

from __future__ import annotations

import inspect
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from backend.api.answers import forget_answer, memories_answer
from backend.api.context_schemas import Attribution, ChatMessage, ContextRequest, ContextResponse
from backend.api.errors import INTERNAL, envelope
from backend.api.errors import validation_envelope as invalid
from backend.api.input_types import (
    ChunksPerNote,
    IsoDay,
    JsonFloat,
    LineNumber,
    PageOffset,
    PageSize,
    request_from,
)
from backend.api.mcp_advice import mcp_suggestion
from backend.api.memory_schemas import MemoryDeleted, MemoryIn, MemoryListOut, MemoryStored
from backend.api.note_schemas import NoteOut
from backend.api.schemas import ErrorBody, NoteLinksOut, SearchRequest, SearchResponse, VaultNames
from backend.api.status_schemas import IndexStatus
from backend.api.validation_messages import describe_validation
from backend.api.vault_answers import (
    context_vaults,
    read_links,
    read_note,
    remember_fact,
    status_vaults,
)
from backend.api.vault_search import search_vaults
from backend.config import Settings
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.models import SearchMode
from backend.vault_set import Library

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Knowledge Bridge searches the user's Obsidian vault by meaning and by keyword. Call `search` (or "
    "`build_context` for a ready-to-inject block) first; expand a hit with `get_note` using its start_line "
    "and end_line; follow links with `note_links`; keep a fact with `remember` (when an answer holds a "
    "`memory_suggestion`, offer it to the user and remember it only if they agree); `list_memories` shows "
    "what is kept and `forget` drops a fact the user no longer wants kept. Results flag sensitive "
    "categories (health, finance, relationships): ask the user before showing those. Secrets are redacted. "
    "A service may serve several vaults: `search` and `build_context` ask all of them unless `vaults` names "
    "some, each result names its `vault`, and `get_note`, `note_links` and `remember` take that `vault` "
    "(needed when two vaults hold the same path); `index_status` lists every vault. "
    "Errors carry error_code, detail, recoverable and suggestion."
)


# Every tool says what it does to the world, so clients (OpenClaw's approval postures) need not ask the user
# before each search: all tools read our own index only (closed world); `remember` writes a fact, and writing
# the same fact again changes nothing (idempotent), but a new value under a key already kept replaces the old
# one, which is gone: not an additive update, so destructive (OpenClaw's "auto" approval mode asks first);
# `forget` drops a fact, and forgetting it again changes nothing more.
READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
WRITES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
# The SDK answers resources/* and prompts/* (empty lists) and advertises both; we serve neither, and a client
# such as OpenClaw would turn them into four tools that list nothing.
UNSERVED_METHODS = (
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
)


def _about(model: type[BaseModel], field: str) -> Any:
    """The tool parameter as the HTTP request field is: its description (one wording for both), its bounds
    and its strictness. The tool's schema then says what the route takes (an agent reading `top_k` sees
    1-50), and the SDK refuses what the route refuses ("3" for a number, 1 for a boolean) instead of taking
    it silently before the route's model sees a clean value."""
    route_field = model.model_fields[field]
    about = Field(description=route_field.description)
    about.metadata = list(route_field.metadata)  # bounds (Ge, Le, MaxLen ...), Strict, JsonInt's validator
    return about


def _failure(body: ErrorBody) -> CallToolResult:
    # the routes a suggestion names, as what an MCP client can do instead (an agent here calls tools)
    payload = {**body.model_dump(), "suggestion": mcp_suggestion(body.suggestion)}
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps(payload))],
        structured_content=payload,
        is_error=True,
    )


_PYDANTIC_LINE = re.compile(r"^(\S.*)\n\s+(.+?)(?: \[type=.*)?$", re.MULTILINE)


_UNKNOWN_TOOL = re.compile(r"^Unknown tool: (\S+)")


def _sdk_refusal(text: str) -> ErrorBody:
    """The SDK's own refusal of arguments (a wrong JSON type, before our code runs) as our envelope:
    "Error executing tool search: 1 validation error for searchArguments\ntop_k\n  Input should be..." ->
    "top_k: Input should be ..."; and of a tool this server does not serve, said so."""
    unknown = _UNKNOWN_TOOL.match(text)
    if unknown is not None:
        return ErrorBody(
            error_code="VALIDATION_ERROR",
            detail=f"no tool {unknown.group(1)!r} here",
            recoverable=True,
            suggestion="Call one of the tools tools/list gives. `remember` and `forget` are served only "
            "through the running service (`python -m backend mcp` relays to it), not over a read-only index.",
        )
    body = text.split("\n", 1)[1] if "\n" in text else text
    problems = [f"{field}: {message}" for field, message in _PYDANTIC_LINE.findall(body)]
    return invalid("; ".join(problems) or "invalid tool arguments")


async def _enveloped_errors(ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
    """Tool errors from our tools carry the envelope as structured content; the only ones without it are the
    SDK's refusals of arguments it could not convert: give those the envelope too."""
    result = await call_next(ctx)
    if getattr(ctx, "method", None) != "tools/call":
        return result
    wire = result.model_dump(by_alias=True) if isinstance(result, CallToolResult) else result
    if isinstance(wire, dict) and wire.get("isError") and wire.get("structuredContent") is None:
        blocks = wire.get("content") or [{}]
        return _failure(_sdk_refusal(str(blocks[0].get("text", ""))))
    return result


async def _known_arguments(
    mcp: MCPServer, taken: dict[str, set[str]], ctx: Any, call_next: Callable[[Any], Awaitable[Any]]
) -> Any:
    """A tool called with an argument it does not take is refused, naming it and those it takes, as REST
    refuses an unknown field: an agent's `topk` or a `vault` where a tool takes `vaults` would otherwise
    be dropped in silence and the call answered as if never given. `taken`: each tool's arguments, read
    from the tools' schemas at the first call (the tools are all registered by then, and never change)."""
    params = getattr(ctx, "params", None)
    if getattr(ctx, "method", None) != "tools/call" or not isinstance(params, dict):
        return await call_next(ctx)
    if not taken:
        taken.update(
            {t.name: set((t.input_schema or {}).get("properties", {})) for t in await mcp.list_tools()}
        )
    name, given = str(params.get("name")), params.get("arguments")
    takes = taken.get(name)
    if takes is None or not isinstance(given, dict):
        return await call_next(ctx)
    unknown = sorted(set(given) - takes)
    if not unknown:
        return await call_next(ctx)
    return _failure(
        ErrorBody(
            error_code="VALIDATION_ERROR",
            detail=f"{name} takes no argument {', '.join(map(repr, unknown))}",
            recoverable=True,
            suggestion=f"Call {name} with its own arguments: {', '.join(sorted(takes))}.",
        )
    )


# a tool's `vault`: worded as the routes' `?vault=` (deps.VaultQuery), one meaning for every door
VAULT = Field(
    None,
    max_length=48,
    description="The vault (VAULTS name) the note is in, as results give it; needed only when the service "
    "serves several and more than one of them holds the path.",
)


# a tool's note `path`: as the routes' {note_path} takes it
NOTE_PATH = (
    "Vault-relative path of the note, as search results give it; or `vault:<name>/<path>`, as a block of "
    "several vaults cites it."
)


async def _call(work: Callable[[], Any]) -> Any:
    """Run a blocking service call off the event loop; any failure becomes a tool error with our envelope."""
    return await _guarded(lambda: anyio.to_thread.run_sync(work))


async def _guarded(work: Callable[[], Awaitable[Any]]) -> Any:
    """Await `work` (the routes' own async answers, which fan out over the vaults in the thread pool); any
    failure becomes a tool error with our envelope."""
    try:
        return await work()
    except KnowledgeBridgeError as exc:
        return _failure(envelope(exc))
    except ValidationError as exc:  # our request models reject what the tool's types let through
        return _failure(invalid(describe_validation(list(exc.errors()))))
    except Exception:
        log.exception("MCP tool failed")  # the trace stays in the log
        return _failure(INTERNAL)


def build_mcp_server(
    library: Callable[[], Library], settings: Settings, *, version: str, read_only: bool = False
) -> MCPServer:
    """`library`: the vaults the routes serve (a callable: the app opens them in its lifespan, after this
    is built); `read_only`: without the tools that write (`remember`, `forget`), for an index read only."""
    taken: dict[str, set[str]] = {}  # each tool's arguments: `_known_arguments`
    mcp: MCPServer = MCPServer(
        "knowledge-bridge",
        instructions=INSTRUCTIONS,
        version=version,
        log_level=settings.log_level,
        middleware=[_enveloped_errors, lambda ctx, call_next: _known_arguments(mcp, taken, ctx, call_next)],
    )

    handlers = mcp._lowlevel_server._request_handlers  # noqa: SLF001 (the SDK has no public way to unregister)
    for method in UNSERVED_METHODS:
        handlers.pop(method, None)

    def tool(
        name: str, title: str, annotations: ToolAnnotations = READS
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a tool under `name`, described by its docstring without the source's indentation."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            description = inspect.cleandoc(fn.__doc__ or "")
            return mcp.tool(name=name, title=title, description=description, annotations=annotations)(fn)

        return register

    @tool("search", "Search the vault")
    async def search(
        query: Annotated[str, _about(SearchRequest, "query")],
        top_k: Annotated[int, _about(SearchRequest, "top_k")] = 5,
        mode: Annotated[SearchMode, _about(SearchRequest, "mode")] = SearchMode.HYBRID,
        folders: Annotated[list[str] | None, _about(SearchRequest, "folders")] = None,
        tags: Annotated[list[str] | None, _about(SearchRequest, "tags")] = None,
        paths: Annotated[list[str] | None, _about(SearchRequest, "paths")] = None,
        date_from: Annotated[IsoDay | None, _about(SearchRequest, "date_from")] = None,
        date_to: Annotated[IsoDay | None, _about(SearchRequest, "date_to")] = None,
        include_related: Annotated[bool, _about(SearchRequest, "include_related")] = True,
        include_memory: Annotated[bool, _about(SearchRequest, "include_memory")] = False,
        vaults: Annotated[VaultNames, _about(SearchRequest, "vaults")] = None,
        threshold: Annotated[JsonFloat | None, _about(SearchRequest, "threshold")] = None,
        max_chunks_per_note: Annotated[
            ChunksPerNote | None, _about(SearchRequest, "max_chunks_per_note")
        ] = None,
        group_by: Annotated[Literal["chunk", "note"], _about(SearchRequest, "group_by")] = "chunk",
        explain: Annotated[bool, _about(SearchRequest, "explain")] = False,
        why_not: Annotated[str | None, _about(SearchRequest, "why_not")] = None,
    ) -> SearchResponse:
        """Find the chunks of notes that best answer a question (meaning + keywords), with their note path,
        heading, line range, tags and date, the notes linked to them, and (include_memory) remembered facts.
        Each result says which sensitive categories it touches; `memory_suggestion` proposes a fact (money
        owed, health, a commitment) to offer the user to keep with `remember`. Several vaults: each is
        asked (all, or those `vaults` names), their lists merged in each vault's own order by confidence
        weighed by how sure each vault is (not sorted by confidence: see `vaults`), each naming its
        `vault`."""

        async def work() -> SearchResponse:
            body = request_from(
                SearchRequest,
                query=query,
                top_k=top_k,
                mode=mode,
                folders=folders,
                tags=tags,
                paths=paths,
                date_from=date_from,
                date_to=date_to,
                include_related=include_related,
                include_memory=include_memory,
                vaults=vaults,
                threshold=threshold,
                max_chunks_per_note=max_chunks_per_note,
                group_by=group_by,
                explain=explain,
                why_not=why_not,
            )
            return (await search_vaults(library(), body))[0]

        return await _guarded(work)  # type: ignore[no-any-return]

    @tool("get_note", "Read a note")
    async def get_note(
        path: Annotated[str, Field(description=NOTE_PATH)],
        start_line: Annotated[
            LineNumber | None, Field(description="First line (1-based, as in search hits).")
        ] = None,
        end_line: Annotated[LineNumber | None, Field(description="Last line, inclusive.")] = None,
        vault: Annotated[str | None, VAULT] = None,
    ) -> NoteOut:
        """Read a note: metadata and text, or only lines start_line..end_line (expand a search hit by asking
        a few lines around its start_line/end_line, in its `vault`). Secrets are redacted."""

        return await _call(lambda: read_note(library(), path, vault, start_line, end_line))  # type: ignore[no-any-return]

    @tool("note_links", "Links of a note")
    async def note_links(
        path: Annotated[str, Field(description=NOTE_PATH)],
        vault: Annotated[str | None, VAULT] = None,
    ) -> NoteLinksOut:
        """The notes this note links to (outlinks), the notes linking to it (backlinks), and links to notes
        not created yet, all within its vault."""

        return await _call(lambda: read_links(library(), path, vault))  # type: ignore[no-any-return]

    @tool("index_status", "Index status")
    async def index_status(
        vault: Annotated[
            str | None,
            Field(None, max_length=48, description="The vault (VAULTS name); unset: every vault's state."),
        ] = None,
    ) -> IndexStatus:
        """What is indexed (notes, chunks, links), with which embedding model, whether the watcher and the
        embedder are up, and the progress of the running or last indexing job. Several vaults: every vault's
        state in `vaults` (or the one `vault` names)."""
        return await _guarded(lambda: status_vaults(library(), vault))  # type: ignore[no-any-return]

    @tool("build_context", "Context block for a question")
    async def build_context(
        query: Annotated[str | None, _about(ContextRequest, "query")] = None,
        messages: Annotated[list[ChatMessage] | None, _about(ContextRequest, "messages")] = None,
        max_chars: Annotated[int, _about(ContextRequest, "max_chars")] = 4000,
        max_chunks: Annotated[int, _about(ContextRequest, "max_chunks")] = 10,
        folders: Annotated[list[str] | None, _about(ContextRequest, "folders")] = None,
        tags: Annotated[list[str] | None, _about(ContextRequest, "tags")] = None,
        paths: Annotated[list[str] | None, _about(ContextRequest, "paths")] = None,
        include_memory: Annotated[bool, _about(ContextRequest, "include_memory")] = False,
        exclude_categories: Annotated[list[str] | None, _about(ContextRequest, "exclude_categories")] = None,
        vaults: Annotated[VaultNames, _about(ContextRequest, "vaults")] = None,
        min_confidence: Annotated[JsonFloat | None, _about(ContextRequest, "min_confidence")] = None,
        exclude: Annotated[list[Attribution] | None, _about(ContextRequest, "exclude")] = None,
        quoted: Annotated[bool, _about(ContextRequest, "quoted")] = False,
        cite: Annotated[bool, _about(ContextRequest, "cite")] = True,
    ) -> ContextResponse:
        """A ready-to-inject block of the vault's best chunks for a question or a conversation, each entry
        attributed [path:start-end], within max_chars, never cut mid-word, without duplicates; the entries
        again as data in `sources`, each naming its `vault` (several vaults: all, or those `vaults` names)."""

        async def work() -> ContextResponse:
            body = request_from(
                ContextRequest,
                query=query,
                messages=messages,
                max_chars=max_chars,
                max_chunks=max_chunks,
                folders=folders,
                tags=tags,
                paths=paths,
                include_memory=include_memory,
                exclude_categories=exclude_categories,
                vaults=vaults,
                min_confidence=min_confidence,
                exclude=exclude,
                quoted=quoted,
                cite=cite,
            )
            return await context_vaults(library(), body)

        return await _guarded(work)  # type: ignore[no-any-return]

    @tool("list_memories", "List remembered facts")
    async def list_memories(
        limit: Annotated[PageSize, Field(description="Facts per page.")] = 100,
        offset: Annotated[
            PageOffset, Field(description="Facts to skip (next_offset of the previous page).")
        ] = 0,
        vault: Annotated[str | None, VAULT] = None,
    ) -> MemoryListOut:
        """Every remembered fact, by key, one page at a time (values with secrets redacted): what `remember`
        kept, to check before keeping another or to `forget` one the user no longer wants kept."""

        def work() -> MemoryListOut:
            name, services = library().get(vault)
            return memories_answer(services, limit, offset, name)

        return await _call(work)  # type: ignore[no-any-return]

    if read_only:
        return mcp

    @tool("forget", "Forget a remembered fact", WRITES)
    async def forget(
        key: Annotated[str, Field(description="The key the fact was stored under.")],
        vault: Annotated[str | None, VAULT] = None,
    ) -> MemoryDeleted:
        """Forget a remembered fact the user no longer wants kept (MEMORY_NOT_FOUND when no fact has that
        key). The vault's notes are never touched."""
        return await _call(lambda: forget_answer(library().get(vault)[1], key))  # type: ignore[no-any-return]

    @tool("remember", "Remember a fact", WRITES)
    async def remember(
        key: Annotated[str, _about(MemoryIn, "key")],
        value: Annotated[str, _about(MemoryIn, "value")],
        source: Annotated[str, _about(MemoryIn, "source")],
        vault: Annotated[str | None, _about(MemoryIn, "vault")] = None,
    ) -> MemoryStored:
        """Remember a fact the user wants kept, tied to the vault note it comes from (an indexed note).
        Facts survive restarts and index rebuilds; search and build_context find them with include_memory."""

        def work() -> MemoryStored:
            body = request_from(MemoryIn, key=key, value=value, source=source, vault=vault)
            return remember_fact(library(), body)

        return await _call(work)  # type: ignore[no-any-return]

    return mcp
