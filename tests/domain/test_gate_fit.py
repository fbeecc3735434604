"""The recall gate fitted for a model of unknown scale: its confidences follow from where the model's cosines
sit for turns the vault cannot answer, whatever that scale is."""

from __future__ import annotations

import random

from backend.domain.ranking.confidence import RECALL_FLOOR, Evidence
from backend.domain.recall.gate_fit import QUOTED, Probe, fit_gate, null_scale


def _probes(rng: random.Random, *, scale: float, shift: float) -> list[Probe]:
    """Chit-chat and other domains' questions whose closest chunks come no nearer than a question the vault
    cannot answer does, as one model sees them (`scale`, `shift`: that model's cosines)."""
    probes = []
    for kind, count in (("chitchat", 60), ("other", 80)):
        for _ in range(count):
            cosines = sorted((rng.gauss(0.2, 0.05) for _ in range(QUOTED)), reverse=True)
            evidence = tuple(_hit(scale * c + shift, background=scale * 0.1 + shift) for c in cosines)
            probes.append(Probe(kind, evidence))
    return probes


def _hit(cosine: float, *, background: float, keyword: float = 0.0, covered: int = 0) -> Evidence:
    return Evidence(
        dense=cosine, keyword=keyword, covered=covered, query_terms=3, dense_background=background
    )


def test_no_probe_turn_clears_the_floor_and_a_chunk_standing_far_above_them_does() -> None:
    probes = _probes(random.Random(3), scale=1.0, shift=0.0)
    gate = fit_gate("some-model", probes, chunks=2000)
    assert gate is not None
    calibration = gate.calibration
    chit = [max(calibration.probability(e, 2000) for e in p.evidence) for p in probes if p.kind == "chitchat"]
    assert max(chit) < RECALL_FLOOR
    other = [max(calibration.probability(e, 2000) for e in p.evidence) for p in probes if p.kind == "other"]
    assert sum(p >= RECALL_FLOOR for p in other) <= 0.05 * len(other)
    answer = _hit(0.6, background=0.1, keyword=4.0, covered=2)
    assert calibration.probability(answer, 2000) > 0.9


def test_a_turn_the_gate_refuses_by_a_rule_does_not_place_the_floor() -> None:
    """Over a vault of conversations "tell me something funny" stands close to the chats' jokes; the gate
    gives it nothing whatever its confidence (chat_turns.to_the_agent), so the floor is placed by the turns
    that reach it, and a chunk as sure as that probe is recalled."""
    probes = _probes(random.Random(3), scale=1.0, shift=0.0)
    funny = Probe("chitchat", (_hit(0.55, background=0.1, keyword=3.0, covered=2),))
    placed_by_it = fit_gate("m", [*probes, funny], chunks=2000)
    refused = fit_gate("m", [*probes, Probe(funny.kind, funny.evidence, refused=True)], chunks=2000)
    without = fit_gate("m", probes, chunks=2000)
    assert placed_by_it is not None
    assert refused is not None
    assert without is not None
    close = _hit(0.5, background=0.1, keyword=3.0, covered=2)  # a question of the vault, as close as that
    assert placed_by_it.calibration.probability(close, 2000) < RECALL_FLOOR
    assert refused.calibration.probability(close, 2000) >= RECALL_FLOOR
    # it still tells the model's scale: the probes' cosines with it
    assert refused.scale == placed_by_it.scale != without.scale


def test_a_model_whose_cosines_are_squeezed_and_shifted_gets_the_same_confidences() -> None:
    """e5's cosines crowd into 0.8-0.9 where MiniLM's spread over 0.1-0.7: a chunk standing as far above
    the unanswerable turns is as likely relevant with either."""
    wide = fit_gate("wide", _probes(random.Random(5), scale=1.0, shift=0.0), chunks=500)
    narrow = fit_gate("narrow", _probes(random.Random(5), scale=0.2, shift=0.78), chunks=500)
    assert wide is not None
    assert narrow is not None
    for cosine in (0.2, 0.35, 0.5, 0.7):
        seen_wide = _hit(cosine, background=0.1, keyword=2.0, covered=1)
        seen_narrow = _hit(0.2 * cosine + 0.78, background=0.2 * 0.1 + 0.78, keyword=2.0, covered=1)
        assert (
            abs(
                wide.calibration.probability(seen_wide, 500)
                - narrow.calibration.probability(seen_narrow, 500)
            )
            < 1e-3
        )


def test_probes_without_dense_scores_fit_nothing() -> None:
    keyword_only = [Probe("other", (Evidence(dense=None, keyword=1.0, covered=1, query_terms=2),))] * 40
    assert null_scale(keyword_only) is None
    assert fit_gate("down-model", keyword_only, chunks=100) is None
