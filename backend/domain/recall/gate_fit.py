"""The recall gate of an embedding model without shipped weights, fitted from the vault itself.

Each model's cosines live on a scale of their own: all-MiniLM-L6-v2 gives a question its vault cannot answer
about 0.2 and a relevant chunk 0.5-0.7; multilingual-e5-small gives 0.80 and 0.86. Measured on every dev set,
the two scales line up once a cosine is read as how far it stands above what the same model gives, in the
same vault, to turns the vault cannot answer (`calibration_probes`): a relevant chunk stands 2-4 of that
spread above it with either model. So the shipped confidence has one set of weights over cosines read that
way (`GENERIC`, fitted on both in-process models: scripts/measure/calibration/gate.py), and a model of
unknown scale needs only its scale in this vault, and the floor put where that model and vault need it:

* its scale: the mean and spread of the closest chunk's cosine over the probe turns;
* its floor: the recall gate's floor (RECALL_FLOOR) moved to just above the surest chit-chat probe and the
  surest but one in twenty of the other domains' questions, as the shipped calibrations' floor was chosen
  against the dev sets' own unanswerable turns. A probe the gate refuses by a rule whatever its confidence
  (a turn addressed to the agent itself: chat_turns.to_the_agent) never reaches the floor, so it does not
  place it: over a vault of conversations "tell me something funny" is close by meaning to the chats'
  jokes, and the floor above it left questions of the vault unrecalled. It still tells the model's scale.

Checked by leaving each in-process model's shipped weights out (docs/measurements.md, "A gate for any
model").
"""

from __future__ import annotations

import hashlib
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace

from backend.domain.ranking.confidence import RECALL_FLOOR, Calibration, Evidence, features
from backend.domain.recall.chat_turns import to_the_agent

# Of the other domains' questions, the share the fitted gate may give anything (a vault about cooking
# answers the recipe); at most a tenth of a set's unanswerable turns is the goal, half of it the margin.
OTHER_GIVEN_AT_MOST = 0.05
# The hits of a turn recall may quote (RECALL_ENTRIES), the ones the floor is placed on.
QUOTED = 3
# A spread below this is a model answering every text alike (or too few probes): no scale to read.
MIN_SPREAD = 1e-4
# How the floor is placed, in the fingerprint: a gate placed by older rules is fitted again (2: a probe the
# gate refuses by a rule does not place it)
PLACEMENT_RULES = 2


@dataclass(frozen=True, slots=True)
class GenericWeights:
    """Weights over (cosine above the null mean, cosine above the question's background) in units of the
    null spread, then keyword, covered and of_period as `confidence.features` gives them."""

    weights: tuple[float, float, float, float, float]
    bias: float

    @property
    def fingerprint(self) -> str:
        """Changes whenever the weights or the floor's placement do: a gate fitted otherwise is fitted
        again."""
        text = ",".join(f"{w:.6f}" for w in (*self.weights, self.bias)) + f";placed-{PLACEMENT_RULES}"
        return hashlib.sha256(text.encode()).hexdigest()[:12]


# Fitted by scripts/measure/calibration/gate.py on personal-dev, LoCoMo dev, the example vault and XQuAD
# English, with all-MiniLM-L6-v2 and multilingual-e5-small (and XQuAD German with e5), each set and model
# weighing the same. The bias is replaced by the floor's placement.
GENERIC = GenericWeights(weights=(0.603, -0.013, 0.663, 1.99, 1.999), bias=-3.49)


@dataclass(frozen=True, slots=True)
class NullScale:
    """Where a model's cosines sit in this vault for turns it cannot answer."""

    mean: float
    spread: float


@dataclass(frozen=True, slots=True)
class Probe:
    """One probe turn and the evidence of its first hits."""

    kind: str  # "chitchat" or "other"
    evidence: tuple[Evidence, ...]
    refused: bool = False  # the gate gives it nothing by a rule (chat_turns.to_the_agent): not a floor's bar

    @classmethod
    def asked(cls, kind: str, text: str, evidence: Sequence[Evidence]) -> Probe:
        """The probe turn `text` as a search answered it: the evidence of the hits recall may quote, and
        whether the gate refuses the turn by a rule."""
        return cls(kind, tuple(evidence[:QUOTED]), refused=to_the_agent(text))


@dataclass(frozen=True, slots=True)
class FittedGate:
    """A fitted calibration with what it was fitted from (kept with the index, shown in /index/status)."""

    calibration: Calibration
    scale: NullScale
    chunks: int  # the vault's size when fitted
    probes: int
    generic: str  # GENERIC.fingerprint it was fitted with


def null_scale(probes: Sequence[Probe]) -> NullScale | None:
    """The mean and spread of each probe's closest chunk's cosine; None when a probe's hits have no dense
    score (the model down while they were asked: a scale read from the others is not the model's) or too
    few probes have hits to read one."""
    asked = [p for p in probes if p.evidence]
    if any(all(e.dense is None for e in p.evidence) for p in asked):
        return None
    tops = [max(e.dense for e in p.evidence if e.dense is not None) for p in asked]
    if len(tops) < 10:
        return None
    spread = statistics.pstdev(tops)
    if spread < MIN_SPREAD:
        return None
    return NullScale(statistics.fmean(tops), spread)


def scaled(name: str, scale: NullScale, generic: GenericWeights | None = None) -> Calibration:
    """The generic weights in the model's raw cosines: (cos - mean) / spread and (cos - background) / spread
    are linear in the raw features, so the result is an ordinary `Calibration`."""
    generic = generic or GENERIC
    w_dense, w_above, *rest = generic.weights
    return Calibration(
        name=name,
        weights=(w_dense / scale.spread, w_above / scale.spread, *rest),
        bias=generic.bias - w_dense * scale.mean / scale.spread,
        uses_dense=True,
    )


def placed(calibration: Calibration, probes: Sequence[Probe], chunks: int) -> Calibration:
    """The calibration with its bias moved so that RECALL_FLOOR sits just above the surest chit-chat probe
    and above all but OTHER_GIVEN_AT_MOST of the other domains' questions (each probe by its surest quoted
    hit; a probe the gate refuses by a rule does not place it)."""
    reaching = [p for p in probes if p.evidence and not p.refused]
    chit = [_surest(calibration, p, chunks) for p in reaching if p.kind == "chitchat"]
    other = sorted(_surest(calibration, p, chunks) for p in reaching if p.kind == "other")
    bars = []
    if chit:
        bars.append(max(chit))
    if other:
        allowed = math.floor(len(other) * OTHER_GIVEN_AT_MOST)
        bars.append(other[len(other) - 1 - allowed])
    if not bars:
        return calibration
    bar = max(bars) + 1e-3  # the surest probe itself is left out: the floor is inclusive
    floor = math.log(RECALL_FLOOR / (1.0 - RECALL_FLOOR))
    return replace(calibration, bias=round(calibration.bias - (bar - floor), 4))


def fit_gate(model: str, probes: Sequence[Probe], chunks: int) -> FittedGate | None:
    """The gate for `model` in this vault, or None when the probes show no scale (`null_scale`)."""
    scale = null_scale(probes)
    if scale is None:
        return None
    calibration = placed(scaled(model, scale), probes, chunks)
    calibration = replace(calibration, weights=tuple(round(w, 4) for w in calibration.weights))
    return FittedGate(calibration, scale, chunks, len(probes), GENERIC.fingerprint)


def _surest(calibration: Calibration, probe: Probe, chunks: int) -> float:
    """The largest logit among the probe's quoted hits."""
    weights = calibration.weights
    return max(
        calibration.bias + sum(w * x for w, x in zip(weights, features(e, chunks, calibration), strict=True))
        for e in probe.evidence[:QUOTED]
    )
