"""Fit the generic weights of the recall gate of a model without shipped weights
(backend/domain/recall/gate_fit.py), and check the vault-fitted gate honestly: each in-process model's shipped
weights left out in turn.

For each dev set (as scripts/measure/calibration/recall.py: personal-dev, LoCoMo dev, the example vault, XQuAD
English; XQuAD German with multilingual-e5-small) and each in-process model, every turn is asked (the set's
questions, its unanswerable ones, chit-chat, other sets' questions) and so are the gate's probe turns
(backend/domain/recall/calibration_probes.py). The generic weights are a logistic fit over the hits' evidence
with the cosines read in units of the model's null spread in that vault, each set and model weighing the same.

Leave-one-model-out: the generic weights fitted on the other model alone, the gate fitted from each vault's
probes, against the model's shipped weights, both at the recall floor (first 3 hits at or above 0.4):
answerable questions given a relevant entry, unanswerable turns (their own, other sets', chit-chat) given
anything, chit-chat given anything.

    .venv/bin/python -m scripts.measure.calibration.gate [--corpora ../shared/corpora] [--data-dir data/eval]
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

from backend.application.indexing.model_choice import ENGLISH_MODEL, MULTILINGUAL_MODEL
from backend.bootstrap import Services
from backend.config import REPO_ROOT
from backend.domain.models import SearchMode
from backend.domain.ranking.confidence import Calibration, shipped_calibration
from backend.domain.recall import gate_fit
from backend.domain.recall.calibration_probes import PROBES
from backend.domain.recall.chat_turns import to_the_agent
from backend.domain.recall.gate_fit import QUOTED, GenericWeights, Probe, fit_gate, null_scale
from scripts.measure.calibration.recall import SETS, Observed, asked_turns, fit, gate, indexed, observe_in

MODELS = {ENGLISH_MODEL: tuple(SETS), MULTILINGUAL_MODEL: (*SETS, "xquad-dev/de")}


def probes_in(services: Services) -> list[Probe]:
    """The gate's probe turns asked of the set's vault, as the service asks them."""
    asked = []
    for kind, text in PROBES:
        outcome = services.search.search(text, top_k=10, mode=SearchMode.HYBRID)
        asked.append(Probe.asked(kind, text, outcome.evidence))
    return asked


def seen_in(corpora: Path, name: str, model: str, data_dir: Path) -> tuple[list[Observed], list[Probe]]:
    """Every turn of the set and every probe, asked of one index of the set's vault."""
    vault, turns = asked_turns(corpora, name)
    with indexed(vault, name, model, data_dir) as services:
        return observe_in(services, turns, SearchMode.HYBRID), probes_in(services)


def generic(seen: dict[tuple[str, str], tuple[list[Observed], list[Probe]]]) -> GenericWeights:
    """The generic weights over `seen`: each set's dense features in units of its probes' null scale."""
    standardised: dict[str, list[Observed]] = {}
    for (name, model), (observed, asked) in seen.items():
        scale = null_scale(asked)
        assert scale is not None, f"{name} with {model}: no dense scale"
        standardised[f"{name}/{model}"] = [
            replace(
                turn,
                evidence=[
                    replace(
                        e,
                        dense=None if e.dense is None else (e.dense - scale.mean) / scale.spread,
                        dense_background=None
                        if e.dense_background is None
                        else (e.dense_background - scale.mean) / scale.spread,
                    )
                    for e in turn.evidence
                ],
            )
            for turn in observed
        ]
    # features() gives [dense, dense - background, ...]: with both read as (x - mean) / spread, the plain fit
    # is the fit in units of the null spread
    fitted = fit(standardised, Calibration("dense", (), 0.0, True), "generic")
    weights = tuple(round(w, 3) for w in fitted.weights)
    assert len(weights) == 5
    return GenericWeights(weights, round(fitted.bias, 3))  # type: ignore[arg-type]


def _line(label: str, observed: list[Observed], calibration: Calibration) -> str:
    shares = gate(observed, calibration, 0.4)
    unanswerable = [s for s in observed if s.turn.kind != "answerable"]
    given = sum(_given(s, calibration) for s in unanswerable)
    chit = [s for s in observed if s.turn.kind == "chitchat"]
    return (
        f"  {label:8} answerable {shares.get('answerable', 0):.3f}, unanswerable given "
        f"{given}/{len(unanswerable)} ({given / max(1, len(unanswerable)):.1%}), chit-chat "
        f"{sum(_given(s, calibration) for s in chit)}/{len(chit)}"
    )


def _given(seen: Observed, calibration: Calibration) -> bool:
    """As the recall gate gives: nothing to a turn addressed to the agent itself, whatever its hits."""
    if to_the_agent(seen.turn.text):
        return False
    return any(calibration.probability(e, seen.chunks) >= 0.4 for e in seen.evidence[:QUOTED])


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--corpora", type=Path, default=REPO_ROOT.parent / "shared" / "corpora")
    parser.add_argument("--data-dir", type=Path, default=REPO_ROOT / "data" / "eval")
    args = parser.parse_args()
    seen = {
        (name, model): seen_in(args.corpora, name, model, args.data_dir)
        for model, names in MODELS.items()
        for name in names
    }
    print(f"generic weights, both models: {generic(seen)}")
    for left_out in MODELS:
        others = generic({key: value for key, value in seen.items() if key[1] != left_out})
        print(f"\n{left_out} left out; generic weights from the other model: {others}")
        gate_fit.GENERIC = others
        for (name, model), (observed, asked) in seen.items():
            if model != left_out:
                continue
            fitted = fit_gate(model, asked, observed[0].chunks)
            shipped = shipped_calibration(model)
            assert fitted is not None
            assert shipped is not None
            print(f" {name}")
            print(_line("fitted", observed, fitted.calibration))
            print(_line("shipped", observed, shipped))


if __name__ == "__main__":
    main()
