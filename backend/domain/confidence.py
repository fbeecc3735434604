"""How likely a search hit is to be relevant at all: a calibrated probability (0..1), the same scale whatever
the fusion, the mode or the vault's size.

A hybrid score says how a hit ranks against the other hits of its list (the best one is near 1 even when
nothing answers the query), so it cannot tell "hi" from a question the vault answers. This can, from what
the hit itself shows:

* `dense`: the raw cosine of the hit and the query (model-specific, so used only for a calibrated model);
* `keyword`: the raw BM25 score, divided by the largest IDF the index can give (ln(1 + (N - 0.5) / 1.5) for
  N chunks), so a small vault and a large one read alike;
* `covered` / `query_terms`: the share of the query's distinct keyword terms the hit holds, and how many
  (capped at 3: one common word matched is weak evidence, three are not);
* `query_terms` (capped at 6): a longer question says more precisely what it wants;
* `relative`: the hit's score over the best score of its list (where it stands among the others).

A logistic model over these was fitted on LoCoMo dev (759 questions, relevant = a chunk of a session that
holds the evidence) against turns the vault cannot answer (60 chit-chat turns in 11 languages, 150 SciFact
claims and 150 XQuAD questions), by `scripts/calibrate_recall.py`, which also reports how the same
weights do on the example vault and XQuAD English (and German for multilingual-e5-small): once for each
in-process model, and once by keyword alone (the weights for no embedder and for a model not calibrated
here). Figures: docs/measurements.md, "Recall calibration".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The floor the recall gate uses by default: on LoCoMo dev (MiniLM) it gives 73% of answerable turns a
# relevant entry, 8% of turns only irrelevant ones, and none of the turns the vault cannot answer
# (docs/measurements.md).
RECALL_FLOOR = 0.4


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one hit shows about itself (see the module docstring)."""

    dense: float | None  # raw cosine; None without a dense side
    keyword: float  # raw BM25 score; 0 when no query term matched
    covered: int  # distinct query terms the hit holds
    query_terms: int  # distinct keyword terms of the query
    relative: float  # the hit's score / the best score of its list (0..1)


@dataclass(frozen=True, slots=True)
class Calibration:
    """Logistic weights over the features, in the order of `features` (dense first when `uses_dense`)."""

    name: str
    weights: tuple[float, ...]
    bias: float
    uses_dense: bool

    def probability(self, evidence: Evidence, chunks: int) -> float:
        z = self.bias + sum(
            w * x for w, x in zip(self.weights, features(evidence, chunks, self), strict=True)
        )
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))


def max_idf(chunks: int) -> float:
    """The IDF of a term found in one chunk of `chunks` (Qdrant's formula): the most a term can weigh."""
    return math.log(1.0 + (max(chunks, 1) - 0.5) / 1.5)


def features(evidence: Evidence, chunks: int, calibration: Calibration) -> list[float]:
    terms = max(1, evidence.query_terms)
    values = [
        evidence.keyword / max_idf(chunks),
        evidence.covered / terms,
        max(0.0, min(1.0, evidence.relative)),
        min(evidence.query_terms, 6) / 6,
        min(evidence.covered, 3) / 3,
    ]
    if calibration.uses_dense:
        values.insert(0, evidence.dense if evidence.dense is not None else 0.0)
    return values


# Fitted by scripts/calibrate_recall.py (see the module docstring); dense weights hold for one model family.
KEYWORD_ONLY = Calibration(
    name="keyword",
    weights=(0.715, 2.79, 5.213, -0.045, 2.271),
    bias=-11.192,
    uses_dense=False,
)
DENSE = {
    "all-MiniLM-L6-v2": Calibration(
        name="all-MiniLM-L6-v2",
        weights=(2.856, 0.433, 2.801, 4.37, 0.277, 0.705),
        bias=-9.811,
        uses_dense=True,
    ),
    # its cosines crowd together (0.80-0.88 for a whole list), hence the large dense weight
    "multilingual-e5-small": Calibration(
        name="multilingual-e5-small",
        weights=(19.488, 0.411, 1.881, 4.289, -0.144, 1.244),
        bias=-24.171,
        uses_dense=True,
    ),
}


def calibration_for(model: str | None, *, dense: bool) -> Calibration:
    """The weights for hits of this embedding model: its own when it was calibrated and the hits have dense
    scores, else the keyword-only weights (an uncalibrated model's cosines say nothing comparable)."""
    if dense and model:
        for family, calibration in DENSE.items():
            if model.startswith(family):
                return calibration
    return KEYWORD_ONLY
