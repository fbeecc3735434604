"""Ranking quality metrics over note-level rankings (binary or graded relevance, linear gain)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at(ranking: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    dcg = sum(relevant.get(doc, 0) / math.log2(i + 2) for i, doc in enumerate(ranking[:k]))
    ideal = sorted((g for g in relevant.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranking: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    wanted = {doc for doc, g in relevant.items() if g > 0}
    return len(wanted.intersection(ranking[:k])) / len(wanted) if wanted else 0.0


def hit_at(ranking: Sequence[str], relevant: Mapping[str, int], k: int = 3) -> float:
    return 1.0 if any(relevant.get(doc, 0) > 0 for doc in ranking[:k]) else 0.0


def mrr_at(ranking: Sequence[str], relevant: Mapping[str, int], k: int = 10) -> float:
    for i, doc in enumerate(ranking[:k]):
        if relevant.get(doc, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def dedupe_notes(chunk_note_paths: Sequence[str]) -> list[str]:
    """Chunk ranking -> note ranking: each note at the rank of its best chunk."""
    return list(dict.fromkeys(chunk_note_paths))
