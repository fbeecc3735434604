"""How likely a search hit is to be relevant at all: a calibrated score (0..1), the same scale whatever the
fusion, the mode or the vault's size.

A hybrid score says how a hit ranks against the other hits of its list (the best one is near 1 even when
nothing answers the query), so it cannot tell "hi" from a question the vault answers. This can, from what
the hit itself shows, and from nothing else: another note matching the question strongly (a near-duplicate,
an old draft, a hostile note) leaves a hit's confidence as it was.

* `dense`: the raw cosine of the hit and the query (model-specific, so used only for a calibrated model);
* `dense - background`: how far that cosine stands above the question's background, the cosine of its 20th
  closest chunk (how close the vault's ordinary chunks come; one or two notes matching strongly move it by
  one rank). MiniLM reads a hit standing out as slightly more likely; e5, whose cosines crowd together
  (0.80-0.88 for a whole list), reads a close background as a vault that covers the question's topic;
* `keyword`: the raw BM25 score, divided by the largest IDF the index can give (ln(1 + (N - 0.5) / 1.5) for
  N chunks), so a small vault and a large one read alike;
* `covered`: how many of the query's distinct keyword terms the hit holds, capped at 3 (one common word
  matched is weak evidence, three are not); a tag the question names holds the words it stands for;
* `of_period`: how much of the hit's note is of the period the question names ("autumn 2024": a note of
  October 2024 wholly, one of 2024 by a quarter); 0 when the question names none. A journal day of the month
  asked about speaks to the question even in words of its own.

The share of the question's terms covered, the question's length and the hit's score over the best of its
list were features once: the first two made a one-word greeting that one chunk repeats ("thanks", "ok")
look fully answered, and the last let a strong neighbour push a relevant hit below the floor.

A logistic model over these is fitted by `scripts/measure/calibration/recall.py` on every dev set at once
(personal-dev, LoCoMo dev, the example vault's questions, XQuAD English; each set weighing the same) against
turns the vault cannot answer (their own unanswerable questions, chit-chat in 11 languages, other sets'
questions), once for each in-process model and once by keyword alone (the weights for no embedder and for a
model not calibrated here); its bias puts the recall floor (0.4) where the set doing worst gets the most
answerable questions a relevant entry, while no chit-chat turn, and at most 10% of any set's unanswerable
turns, get anything. multilingual-e5-small, which the service picks for vaults mostly not in English, is
fitted with XQuAD German added and LoCoMo (English chat transcripts) held out. Figures: docs/measurements.md,
"A person's own vault".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# The floor the recall gate uses by default (the calibration's operating point, docs/measurements.md).
RECALL_FLOOR = 0.4
# With a floor, a further entry is quoted only when its odds of being relevant (p / (1 - p)) are at least a
# tenth of the surest entry's: the answer is one note, and a neighbour on its topic an order of magnitude
# less likely (0.52 beside 0.97: the January journal day beside Christmas's) is a distraction, not an
# alternative; two entries of like odds (0.79 beside 0.72) both stay. docs/measurements.md, "Alternatives".
ODDS_APART = 10.0
# Above this the calibration (fitted on a few hundred questions a set) cannot tell one entry from another:
# 0.9999 beside 0.999 are equally sure, not ten times apart (e5's confidences crowd up there).
SURE = 0.99


@dataclass(frozen=True, slots=True)
class Evidence:
    """What one hit shows about itself (see the module docstring)."""

    dense: float | None  # raw cosine; None without a dense side
    keyword: float  # raw BM25 score; 0 when no query term matched
    covered: int  # distinct query terms the hit holds
    query_terms: int  # distinct keyword terms of the query (said with the evidence; not a feature)
    # the question's background: the cosine of its 20th closest chunk (how close the vault's ordinary chunks
    # come); None without a dense side
    dense_background: float | None = None
    # how much of the hit's note is of the period the question names (0..1; 0 when it names none)
    of_period: float = 0.0


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


def far_less_likely(confidence: float, best: float) -> bool:
    """Whether an entry of `confidence` is less likely than one of `best` by more than ODDS_APART in odds."""
    return _odds(best) > ODDS_APART * _odds(confidence)


def _odds(probability: float) -> float:
    clipped = min(max(probability, 1e-9), SURE)
    return clipped / (1.0 - clipped)


def max_idf(chunks: int) -> float:
    """The IDF of a term found in one chunk of `chunks` (Qdrant's formula): the most a term can weigh."""
    return math.log(1.0 + (max(chunks, 1) - 0.5) / 1.5)


def features(evidence: Evidence, chunks: int, calibration: Calibration) -> list[float]:
    values = [evidence.keyword / max_idf(chunks), min(evidence.covered, 3) / 3, evidence.of_period]
    if calibration.uses_dense:
        dense = evidence.dense if evidence.dense is not None else 0.0
        background = evidence.dense_background if evidence.dense_background is not None else dense
        values[:0] = [dense, dense - background]
    return values


# Fitted by scripts/measure/calibration/recall.py (see the module docstring); dense weights hold for one model
# family.
KEYWORD_ONLY = Calibration(
    name="keyword",
    weights=(1.226, 3.376, 2.412),
    bias=-5.558,
    uses_dense=False,
)
DENSE = {
    "all-MiniLM-L6-v2": Calibration(
        name="all-MiniLM-L6-v2",
        weights=(7.656, 1.284, 0.79, 1.415, 1.987),
        bias=-6.123,
        uses_dense=True,
    ),
    # its cosines crowd together (0.80-0.88 for a whole list), hence the large dense weight
    "multilingual-e5-small": Calibration(
        name="multilingual-e5-small",
        weights=(60.404, -4.687, 0.726, 0.73, 1.68),
        bias=-53.334,
        uses_dense=True,
    ),
}


def shipped_calibration(model: str) -> Calibration | None:
    """The weights shipped for this model (a name of a calibrated family, with or without a variant suffix),
    else None."""
    for family, calibration in DENSE.items():
        if model.startswith(family):
            return calibration
    return None


def calibration_for(model: str | None, *, dense: bool) -> Calibration:
    """The shipped weights for hits of this embedding model: its own when it was calibrated and the hits have
    dense scores, else the keyword-only weights. A model calibrated on the vault is `RecallGate`'s."""
    shipped = shipped_calibration(model) if dense and model else None
    return shipped or KEYWORD_ONLY
