"""Entries as a search presents them (ResultView), for the recall gate's tests: only what its rules read."""

from __future__ import annotations

from backend.application.search.presenting import ResultView


def result_view(
    path: str,
    content: str = "",
    confidence: float = 0.8,
    *,
    periods: tuple[str, ...] = (),
    saved_from: str | None = None,
    aliases: tuple[str, ...] = (),
) -> ResultView:
    """The chunk of the note at `path` holding `content`, at `confidence`."""
    return ResultView(
        chunk_id=path,
        note_path=path,
        note_title=path,
        content=content,
        score=1.0,
        confidence=confidence,
        heading_context="",
        start_line=1,
        end_line=1,
        tags=[],
        aliases=list(aliases),
        date=None,
        highlights=[],
        sensitive_categories=[],
        redactions=0,
        periods=periods,
        saved_from=saved_from,
    )
