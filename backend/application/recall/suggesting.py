"""The memory suggestion of a search or a context block (backend/domain/recall/memory_suggestion.py), from the
hits as an agent sees them (secrets already redacted), unless the very fact is remembered already."""

from __future__ import annotations

from collections.abc import Sequence

from backend.application.notes.memory import MemoryService
from backend.application.search.presenting import ResultView
from backend.application.search.question import Question
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.models import from_same_fields
from backend.domain.recall.memory_suggestion import FoundText, MemorySuggestion, suggest_from_words


def suggestion_for(
    question: Question, views: Sequence[ResultView], memory: MemoryService | None
) -> MemorySuggestion | None:
    """What the hits offer to remember for `question` (its words, as the search read it), or None; None too
    when the fact is kept under its key already (an agent would otherwise offer the same fact at every search
    that finds it)."""
    found = [from_same_fields(FoundText, view, text=view.content) for view in views]
    suggestion = suggest_from_words(question.words, found)
    if suggestion is None or memory is None:
        return suggestion
    try:
        kept = memory.get(suggestion.key)
    except KnowledgeBridgeError:  # not remembered (or the facts cannot be read): the offer stands
        return suggestion
    return None if kept.value == suggestion.value else suggestion
