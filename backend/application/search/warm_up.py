"""What a search computes from a chunk whatever the question, computed for the stored chunks at start.

Showing a chunk for the first time costs more than its search: its secrets redacted and its sensitive
categories found (~0.13 ms a LoCoMo chunk), the first word holding each of its terms (the highlights, ~0.07
ms), the facts it states (the memory suggestion), whether it is a map of content (the ranking). Each is kept
once computed, keyed by the chunk's text, so a search showing a chunk again pays nearly nothing; a service
just started paid it for every chunk it showed the first time (in-process on LoCoMo dev, a question's first
asking 2.5 ms, its second 1.2 ms). The start-up warm-up hands every page of payloads it reads in to
`ShowingWarmUp`, which computes these while their memories have room (each says how much it keeps: a vault
larger than one fills it with the chunks read first; searches fill the rest as they show them).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from backend.application.search.presenting import shown_room, shown_text
from backend.domain.ranking.result_rules import WordTerms, hub_targets
from backend.domain.recall.memory_suggestion import text_facts
from backend.domain.text.content_policy import ContentPolicy

YIELD_EVERY = 32  # chunks computed between two pauses letting a search thread take the interpreter


class ShowingWarmUp:
    """A page callback for `ChunkStore.warm`: what showing and ranking each chunk costs, computed ahead."""

    def __init__(self, policy: ContentPolicy, words: WordTerms, languages: Sequence[str]) -> None:
        """`words`: the search service's remembered word terms; `languages`: those a question in the vault's
        own languages is highlighted in (`TextAnalyzer.query_languages_for`)."""
        self._policy = policy
        self._words = words
        self._languages = tuple(languages)
        self.chunks = 0  # computed so far

    def __call__(self, payloads: list[dict[str, Any]], stop: Callable[[], bool] | None = None) -> None:
        for done, payload in enumerate(payloads):
            if done % YIELD_EVERY == 0:
                if stop is not None and stop():
                    return
                # A search arriving now waits for the interpreter until this thread lets it go (up to the
                # 5 ms switch interval otherwise): a pause every few chunks keeps searches at their pace.
                time.sleep(0)
            if not shown_room():
                return  # a vault larger than this memory: searches fill the rest as they show them
            hub_targets(str(payload.get("content", "")))
            text = shown_text(self._policy, payload)
            if self._words.room:
                self._words.first_holders(text, self._languages)
            if _has_room(text_facts):
                text_facts(text)
            self.chunks += 1


def _has_room(cached: Any) -> bool:
    """Whether an `lru_cache`d function remembers one more value without forgetting one."""
    kept = cached.cache_info()
    return kept.maxsize is None or kept.currsize < kept.maxsize
