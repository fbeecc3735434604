"""Fusion of the dense and the keyword candidate lists into one ranking.

The default (`adaptive`) spreads each list onto 0..1 and weighs the dense side by how clearly its winner
stands out; `top_scaled` (each list over its top score, fixed weights) was the default before issue 27.

Pure functions over (id, score) lists, best first, so the search use case and the tuning script
(`scripts/measure/calibration/fusion_grid.py`) run the very same rules. Qdrant computes RRF and DBSF inside
one query; these are the same formulas (checked against the engine by the contract tests), plus what the
engine cannot do: weights chosen per query from the two lists themselves.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

K = TypeVar("K", bound=Hashable)

Ranked = Sequence[tuple[K, float]]  # (id, score), best first


def rrf(lists: Sequence[Ranked[K]], weights: Sequence[float], k: float) -> dict[K, float]:
    """Reciprocal Rank Fusion as Qdrant (1.16+) computes it: each list adds 1 / (k - 1 + rank / weight), rank
    from 1. A weight stretches its list's ranks (weight 0.5: rank 3 counts as rank 6) rather than scaling its
    scores; weight 1 is the textbook 1 / (k + position from 0). A list of weight 0 is left out."""
    fused: dict[K, float] = {}
    for ranked, weight in zip(lists, weights, strict=True):
        if weight <= 0:
            continue
        for position, (key, _) in enumerate(ranked):
            fused[key] = fused.get(key, 0.0) + 1.0 / (k - 1 + (position + 1) / weight)
    return fused


def dbsf(lists: Sequence[Ranked[K]], weights: Sequence[float] | None = None) -> dict[K, float]:
    """Distribution-based score fusion (Qdrant's DBSF): each list's scores mapped from mean ± 3 standard
    deviations onto 0..1, then summed (weighted here; Qdrant's weights are all 1)."""
    fused: dict[K, float] = {}
    for index, ranked in enumerate(lists):
        weight = 1.0 if weights is None else weights[index]
        if not ranked or weight == 0:
            continue
        low, high = _three_sigma(s for _, s in ranked)
        span = high - low
        for key, score in ranked:
            value = (score - low) / span if span > 0 else 0.5
            fused[key] = fused.get(key, 0.0) + weight * min(max(value, 0.0), 1.0)
    return fused


def top_scaled(lists: Sequence[Ranked[K]], weights: Sequence[float]) -> dict[K, float]:
    """Score fusion: each list's scores divided by its own top score (so its best candidate counts 1), then
    summed with the weights, over the weights of the lists that answered. Unlike RRF it keeps how far apart
    a side's candidates are: a dense list whose top few stand out from the rest moves them, one whose scores
    lie close together barely does. A list with no positive top score is left out, and so is its weight:
    a candidate best on every side that answered scores 1, whether or not the keyword side found anything
    (a question in another language than the notes), so a threshold means the same in every language."""
    fused: dict[K, float] = {}
    answered = 0.0
    for ranked, weight in zip(lists, weights, strict=True):
        if not ranked or weight <= 0:
            continue
        top = max(score for _, score in ranked)
        if top <= 0:
            continue
        answered += weight
        for key, score in ranked:
            fused[key] = fused.get(key, 0.0) + weight * max(score, 0.0) / top
    return {key: value / answered for key, value in fused.items()}


def scaled_parts(
    lists: Sequence[Ranked[K]], weights: Sequence[float]
) -> tuple[list[dict[K, float]], list[float]]:
    """What `top_scaled` sums, apart: each list's scores over its top (0 for a negative one), and each list's
    weight over the weights of the lists that answered (0 for a list left out). A candidate's fused score is
    the sum over the lists of weight times its value there (0 where the list does not hold it): the explain
    data shows both, so a fused score can be rebuilt by hand."""
    values: list[dict[K, float]] = []
    kept: list[float] = []
    for ranked, weight in zip(lists, weights, strict=True):
        top = max((score for _, score in ranked), default=0.0)
        if weight <= 0 or top <= 0:
            values.append({})
            kept.append(0.0)
            continue
        values.append({key: max(score, 0.0) / top for key, score in ranked})
        kept.append(weight)
    answered = sum(kept)
    return values, [weight / answered if answered else 0.0 for weight in kept]


def dbsf_parts(lists: Sequence[Ranked[K]]) -> list[dict[K, float]]:
    """What `dbsf` sums (its weights all 1): each list's scores mapped from mean ± 3 standard deviations
    onto 0..1."""
    values: list[dict[K, float]] = []
    for ranked in lists:
        if not ranked:
            values.append({})
            continue
        low, high = _three_sigma(s for _, s in ranked)
        span = high - low
        values.append(
            {key: min(max((score - low) / span if span > 0 else 0.5, 0.0), 1.0) for key, score in ranked}
        )
    return values


def spread(ranked: Ranked[K]) -> list[tuple[K, float]]:
    """A list's scores mapped from its lowest to its top onto 0..1. A model whose cosines crowd just under
    its top (multilingual-e5: 0.80-0.88 for a whole list) then separates its candidates as clearly as one
    whose cosines spread out (MiniLM), and a keyword list does not outweigh it by its scale alone."""
    if not ranked:
        return []
    low = min(score for _, score in ranked)
    top = max(score for _, score in ranked)
    if top <= low:
        return [(key, 1.0) for key, _ in ranked]
    return [(key, (score - low) / (top - low)) for key, score in ranked]


@dataclass(frozen=True, slots=True)
class AdaptiveWeights:
    """Adaptive fusion's dense weight, from how far the dense side's winner stands out (`SideShape.lead`):
    `low` at a lead of `unsure` or less, `high` at `sure` or more, in between on a line; the keyword side
    gets the rest. A flat dense list (chat messages that all look alike to the model) barely moves the
    keyword ranking; a dense list whose winner stands out (a paragraph that answers the question) does."""

    low: float = 0.3
    high: float = 0.7
    unsure: float = 1.0
    sure: float = 4.0

    def dense_weight(self, dense_scores: Sequence[float]) -> float:
        lead = SideShape.of(dense_scores).lead
        if self.sure <= self.unsure:
            return self.high if lead >= self.sure else self.low
        share = min(1.0, max(0.0, (lead - self.unsure) / (self.sure - self.unsure)))
        return self.low + (self.high - self.low) * share


def adaptive(
    dense: Ranked[K], keyword: Ranked[K], weights: AdaptiveWeights, fixed: tuple[float, float] | None = None
) -> dict[K, float]:
    """Each side spread onto 0..1 (`spread`), summed with the dense weight `weights` gives for this dense
    list (or the `fixed` (dense, keyword) weights), over the weights of the sides that answered: the best
    candidate of both sides scores 1."""
    return top_scaled([spread(dense), spread(keyword)], adaptive_weights(dense, weights, fixed))


def adaptive_weights(
    dense: Ranked[K], weights: AdaptiveWeights, fixed: tuple[float, float] | None = None
) -> tuple[float, float]:
    """The (dense, keyword) weights adaptive fusion gives this dense list: `fixed` when given, else the dense
    weight `weights` reads off the list's lead and the keyword side the rest."""
    if fixed is not None:
        return fixed
    wd = weights.dense_weight([score for _, score in dense])
    return wd, 1.0 - wd


def _three_sigma(scores: object) -> tuple[float, float]:
    values = list(scores)  # type: ignore[call-overload]
    mean = sum(values) / len(values)
    if len(values) < 2:
        return mean, mean
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
    return mean - 3 * std, mean + 3 * std


@dataclass(frozen=True, slots=True)
class SideShape:
    """How sure one side is of its head: its top score's lead over the scores just below, in standard
    deviations of the list (a z-score of the winner)."""

    lead: float

    @classmethod
    def of(cls, scores: Sequence[float], head: int = 10) -> SideShape:
        if len(scores) < 3:
            return cls(0.0)
        mean = sum(scores) / len(scores)
        std = math.sqrt(sum((s - mean) ** 2 for s in scores) / (len(scores) - 1))
        if std <= 0:
            return cls(0.0)
        below = scores[1 : head + 1]
        return cls((scores[0] - sum(below) / len(below)) / std)


def agreement(first: Sequence[K], second: Sequence[K], depth: int = 10) -> float:
    """Share of the top `depth` of each list that the other also has in its top `depth` (0..1)."""
    a, b = set(first[:depth]), set(second[:depth])
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
