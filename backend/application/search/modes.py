"""Which mode a search can answer in, and the warnings that say why it is not the one asked for.

Every sentence a search warns with is built here (the index's own reasons, `keyword_fallback` and
`dense_fallback`, are passed on as they are): a first indexing still running, notes without dense vectors
yet, an embedder that cannot embed the query. Each step narrows the mode, never widens it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from backend.application.serving.serving_index import ServingIndex
from backend.domain.models import SearchMode

NO_EMBEDDER = "no embedder is configured (EMBEDDING_PROVIDER=none)"
KEYWORD_ONLY = "answered from keyword search only"


@dataclass(frozen=True, slots=True)
class ModePlan:
    mode: SearchMode  # the mode the search will answer in
    warnings: tuple[str, ...] = ()

    def warned(self, warning: str, mode: SearchMode | None = None) -> ModePlan:
        return replace(self, mode=mode or self.mode, warnings=(*self.warnings, warning))

    def without_dense(self, reason: str) -> ModePlan:
        """The query could not be embedded (`reason`): keyword search answers."""
        return self.warned(f"{reason}; {KEYWORD_ONLY}", SearchMode.KEYWORD)


def index_plan(index: ServingIndex, asked: SearchMode) -> ModePlan:
    """What the serving index allows: keyword only from an outdated index whose model cannot be loaded,
    dense only from one of another keyword encoding, and a warning while the first indexing runs."""
    plan = ModePlan(asked)
    fallback = index.keyword_fallback
    if fallback is not None:
        plan = plan.warned(fallback, SearchMode.KEYWORD)
    dense_only = index.dense_fallback  # an outdated index's keyword vectors are another encoding's
    if dense_only is not None:
        plan = plan.warned(dense_only, SearchMode.DENSE)
    if not index.complete:
        plan = plan.warned(
            f"the first indexing is still running ({index.indexed_notes} notes so far); "
            "results may be incomplete"
        )
    return plan


def pending_plan(plan: ModePlan, index: ServingIndex) -> ModePlan:
    """Notes still without dense vectors: found by keywords only, and when none has them yet the whole
    search is keyword search. The reason is the embedder's standing failure, if there is one."""
    pending = index.dense_pending if plan.mode is not SearchMode.KEYWORD else 0
    if not pending:
        return plan
    health = index.serving_health
    failed = health is not None and health.problem is not None
    # keyword first: without a standing failure the notes are simply still waiting their turn
    why = (
        "the embedder was unavailable when they were indexed"
        if failed
        else "the index is still filling them in"
    )
    if pending >= index.indexed_notes:
        warning = f"the dense vectors are not built yet ({why}); {KEYWORD_ONLY}"
        mode = SearchMode.KEYWORD
    else:
        warning = (
            f"{pending} of {index.indexed_notes} notes have no dense vectors yet "
            f"({why}): they are found by keywords only"
        )
        mode = plan.mode
    if health is not None and health.problem is not None:  # `failed`, said so the type checker sees it
        warning += f"; {health.describe()}"  # e.g. MODEL_NOT_FOUND and the `ollama pull` to run
    return plan.warned(warning, mode)
