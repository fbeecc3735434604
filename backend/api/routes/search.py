"""The two ways to ask the search: ranked results (/search) and a ready-to-inject block (/context)."""

from __future__ import annotations

from fastapi import APIRouter, Response

from backend.api.context_schemas import ContextRequest, ContextResponse
from backend.api.deps import LibraryDep
from backend.api.errors import INDEX_UNREADABLE, error_responses
from backend.api.schemas import SearchRequest, SearchResponse
from backend.api.vault_answers import context_vaults
from backend.api.vault_search import search_vaults

router = APIRouter()

# both search the index, so both fail alike
SEARCH_ERRORS = error_responses(
    400, "EMBEDDING_MODEL_MISMATCH", 422, *INDEX_UNREADABLE, "VAULT_UNAVAILABLE", 507
)


@router.post(
    "/search", operation_id="search", tags=["search"], response_model=SearchResponse, responses=SEARCH_ERRORS
)
async def search(body: SearchRequest, library: LibraryDep, response: Response) -> SearchResponse:
    """Find the chunks of notes that best answer `query`, with the notes linked to them, and (with
    `include_memory`) the remembered facts that match. `hybrid` (the default mode) searches by meaning (dense
    vectors) and by keyword (BM25) and joins both lists by adaptive fusion: each side's scores spread onto
    0 to 1, the dense side weighted 0.3 to 0.7 by how clearly its best candidate stands out and keyword the
    rest, so hybrid scores run from 0 to 1 (weighted score fusion with FUSION=score, Reciprocal Rank Fusion
    with FUSION=rrf). `dense` scores are cosine similarities, `keyword` scores BM25: `threshold` is on that
    scale; each result's `confidence` says how likely it is relevant at all, on one scale for every mode.
    Filters that match no indexed note are named in `warnings`. Each result is flagged with the sensitive
    categories it touches; secrets in it are redacted. When the confident results state a fact about money
    owed, health or a commitment, `memory_suggestion` proposes it (key, value, source note, its vault and
    line): ask the user whether to keep it, and on yes store it with POST /memory (kb_remember), vault too.
    With several vaults (`vaults`: some; default all) each is asked for top_k and their lists are merged, each
    keeping its own order, by `confidence` weighed by how sure its vault is (its surest result against the
    surest of any), a vault holding the note the question is the name of, or more of the people, tags or
    period it names, first; then cut to top_k (so not sorted by confidence). Each result names its `vault`;
    a vault that cannot answer is named in `missing_vaults`."""
    answer, timing = await search_vaults(library, body)
    response.headers["Server-Timing"] = timing
    return answer


@router.post(
    "/context",
    operation_id="build_context",
    tags=["context"],
    response_model=ContextResponse,
    responses=SEARCH_ERRORS,
)
async def build_context(body: ContextRequest, library: LibraryDep) -> ContextResponse:
    """A ready-to-inject context block for a question (`query`) or a conversation (`messages`): the best
    chunks, each attributed as `[path:start-end]`, within `max_chars` (everything counted), never cut
    mid-word, without duplicates, secrets redacted; plus the same entries as data in `sources`. Use the
    `start_line`/`end_line` of a source with GET /note/{path} to read more around it. A fact about money
    owed, health or a commitment that the block quotes comes back as `memory_suggestion`, as with /search.
    With several vaults (`vaults`: some; default all) the candidates of each are merged as /search merges
    results (a vault without the note, people, tags or period the question names that another holds is left
    out)
    before the block is packed, each source naming its `vault`."""
    return await context_vaults(library, body)
