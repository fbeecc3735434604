"""The hits' confidence: a probability that moves the way evidence does, on one scale for any vault size."""

from __future__ import annotations

from dataclasses import replace

import pytest

from backend.domain.ranking.confidence import (
    DENSE,
    KEYWORD_ONLY,
    RECALL_FLOOR,
    Evidence,
    calibration_for,
    max_idf,
)

# a related text's and an unrelated text's cosine to a question, as each model puts them
COSINES = {"keyword": (None, None), "all-MiniLM-L6-v2": (0.62, 0.25), "multilingual-e5-small": (0.88, 0.78)}
CALIBRATIONS = [KEYWORD_ONLY, *DENSE.values()]


@pytest.mark.parametrize("calibration", CALIBRATIONS, ids=lambda c: c.name)
def test_a_hit_that_holds_the_question_is_likely_and_a_greeting_is_not(calibration) -> None:
    related, unrelated = COSINES[calibration.name]
    answering = Evidence(dense=related, keyword=14.0, covered=4, query_terms=4)
    greeting = Evidence(dense=unrelated, keyword=2.0, covered=1, query_terms=1)
    assert calibration.probability(answering, chunks=1000) > RECALL_FLOOR
    assert calibration.probability(greeting, chunks=1000) < RECALL_FLOOR / 2


@pytest.mark.parametrize("calibration", CALIBRATIONS, ids=lambda c: c.name)
@pytest.mark.parametrize(
    "better",
    [
        {"keyword": 20.0},
        {"covered": 4, "query_terms": 4},
        {"covered": 3},
    ],
)
def test_more_evidence_never_lowers_the_confidence(calibration, better: dict) -> None:
    weak = Evidence(dense=0.4, keyword=6.0, covered=2, query_terms=4)
    stronger = replace(weak, **better)
    assert calibration.probability(stronger, chunks=500) >= calibration.probability(weak, chunks=500)


@pytest.mark.parametrize("calibration", DENSE.values(), ids=lambda c: c.name)
def test_a_closer_dense_match_raises_the_confidence_of_a_calibrated_model(calibration) -> None:
    near = Evidence(dense=0.9, keyword=5.0, covered=2, query_terms=4)
    far = Evidence(dense=0.2, keyword=5.0, covered=2, query_terms=4)
    assert calibration.probability(near, chunks=800) > calibration.probability(far, chunks=800)


@pytest.mark.parametrize("calibration", CALIBRATIONS, ids=lambda c: c.name)
def test_a_hit_is_judged_by_itself_not_by_its_neighbours(calibration) -> None:
    """What a hit shows is all its confidence reads: nothing about how the other hits of its list scored
    (a strong neighbour, such as a near-duplicate or a hostile note, used to push a relevant hit down)."""
    ledger = Evidence(dense=COSINES[calibration.name][0], keyword=12.0, covered=3, query_terms=4)
    assert calibration.probability(ledger, chunks=300) >= RECALL_FLOOR


def test_the_keyword_score_is_read_against_the_largest_idf_of_the_vault() -> None:
    """The same raw BM25 score means more in a small vault (no term weighs much there) than in a big one."""
    assert max_idf(100) < max_idf(100_000)
    evidence = Evidence(dense=None, keyword=8.0, covered=2, query_terms=3)
    assert KEYWORD_ONLY.probability(evidence, chunks=100) > KEYWORD_ONLY.probability(evidence, chunks=100_000)


def test_the_model_decides_which_weights_read_the_dense_score() -> None:
    assert calibration_for("all-MiniLM-L6-v2-int8-opt-outliers", dense=True).uses_dense
    assert (
        calibration_for("multilingual-e5-small-int8-opt-outliers", dense=True).name == "multilingual-e5-small"
    )
    assert calibration_for("all-MiniLM-L6-v2", dense=False) is KEYWORD_ONLY  # keyword-only hits
    assert calibration_for("mxbai-embed-large", dense=True) is KEYWORD_ONLY  # not calibrated: cosines unread
    assert calibration_for(None, dense=True) is KEYWORD_ONLY
