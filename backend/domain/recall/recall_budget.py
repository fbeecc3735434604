"""What OpenClaw's per-turn recall asks /context for, by the plugin's defaults
(integrations/openclaw/openclaw.plugin.json, `recall`; tests/test_recall_budget.py keeps the two equal): the
explain data of /search says by these whether the recall would quote a hit, and the look-inside page's recall
preview asks with them."""

from __future__ import annotations

from dataclasses import dataclass

from backend.domain.ranking.confidence import RECALL_FLOOR


@dataclass(frozen=True, slots=True)
class RecallBudget:
    floor: float = RECALL_FLOOR  # minConfidence
    max_chars: int = 1500  # maxChars: the whole block, fence and header included
    max_entries: int = 3  # maxEntries
    repeat_turns: int = 10  # repeatTurns: a chunk given to a session is not given again this many turns


PLUGIN_RECALL = RecallBudget()
