"""Score fusion: each side's scores over its own top score, weighted."""

from __future__ import annotations

import pytest

from backend.domain.ranking.fusion import (
    AdaptiveWeights,
    adaptive,
    adaptive_weights,
    dbsf,
    dbsf_parts,
    scaled_parts,
    spread,
    top_scaled,
)


def test_each_side_counts_its_best_as_one_and_the_weights_share_them() -> None:
    dense = [("a", 0.8), ("b", 0.4)]
    keyword = [("b", 12.0), ("c", 6.0)]
    fused = top_scaled([dense, keyword], (0.3, 0.7))
    assert fused == pytest.approx({"a": 0.3, "b": 0.3 * 0.5 + 0.7, "c": 0.35})


def test_a_dense_side_whose_scores_lie_close_together_barely_reorders_the_keyword_side() -> None:
    # RRF would give the dense winner as much as the keyword winner; scaled scores keep the gap (or its lack)
    dense = [("x", 0.41), ("y", 0.40), ("z", 0.39)]
    keyword = [("y", 9.0), ("z", 3.0), ("x", 1.0)]
    fused = top_scaled([dense, keyword], (0.3, 0.7))
    assert sorted(fused, key=fused.__getitem__, reverse=True) == ["y", "z", "x"]


def test_an_empty_or_scoreless_side_is_left_out_with_its_weight() -> None:
    # the best candidate of the sides that answered scores 1: a threshold means the same whether or not
    # the keyword side found anything (a question in another language than the notes)
    assert top_scaled([[], [("a", 2.0)]], (0.3, 0.7)) == {"a": pytest.approx(1.0)}
    assert top_scaled([[("a", 0.9), ("b", 0.45)], []], (0.3, 0.7)) == {
        "a": pytest.approx(1.0),
        "b": pytest.approx(0.5),
    }
    assert top_scaled([[("a", 0.0)], [("b", 1.0)]], (0.5, 0.5)) == {"b": pytest.approx(1.0)}


def test_scores_stay_between_zero_and_one_and_the_best_on_both_sides_scores_one() -> None:
    fused = top_scaled([[("a", 0.8), ("b", 0.4)], [("a", 12.0), ("c", 3.0)]], (0.3, 0.7))
    assert fused["a"] == pytest.approx(1.0)
    assert all(0.0 <= value <= 1.0 for value in fused.values())


def test_spread_maps_a_crowded_list_onto_zero_to_one() -> None:
    # multilingual-e5's cosines crowd just under the top: spread, its winner stands out as MiniLM's would
    assert spread([("a", 0.88), ("b", 0.84), ("c", 0.80)]) == [
        ("a", pytest.approx(1.0)),
        ("b", pytest.approx(0.5)),
        ("c", pytest.approx(0.0)),
    ]
    assert spread([("a", 0.5), ("b", 0.5)]) == [("a", 1.0), ("b", 1.0)]
    assert spread([]) == []


def test_adaptive_weighs_the_dense_side_by_how_clearly_its_winner_stands_out() -> None:
    weights = AdaptiveWeights(low=0.3, high=0.7, unsure=1.0, sure=4.0)
    flat = [0.50, 0.49, 0.49, 0.48, 0.48, 0.47, 0.47, 0.46, 0.46, 0.45, 0.45, 0.44]
    standing_out = [0.90, *([0.40] * 29)]
    assert weights.dense_weight(flat) < 0.45
    assert weights.dense_weight(standing_out) == pytest.approx(0.7)
    dense = [("a", 0.90), *[(f"d{i}", 0.40) for i in range(11)]]
    keyword = [("b", 10.0), ("a", 8.0), ("c", 1.0)]
    fused = adaptive(dense, keyword, weights)
    assert max(fused, key=fused.__getitem__) == "a"  # a sure dense winner that keyword also finds
    assert all(0.0 <= v <= 1.0 for v in fused.values())
    # fixed weights (a question in another language than the notes) override the lead
    only_dense = adaptive(dense, keyword, weights, fixed=(1.0, 0.0))
    assert only_dense["a"] == pytest.approx(1.0)
    assert only_dense.get("b", 0.0) == 0.0


def _rebuilt(values: list[dict[str, float]], weights: list[float]) -> dict[str, float]:
    keys = {key for side in values for key in side}
    return {key: sum(w * side.get(key, 0.0) for w, side in zip(weights, values, strict=True)) for key in keys}


@pytest.mark.parametrize(
    "keyword",
    # an empty side is left out with its weight: the other's is 1
    [[("b", 12.0), ("c", 6.0), ("d", 1.0)], []],
)
def test_a_fused_score_is_rebuilt_from_each_sides_values_and_the_weights_summed_with(
    keyword: list[tuple[str, float]],
) -> None:
    # what the explain data shows of each hit: weights x normalised values must give the fused score
    dense = [("a", 0.8), ("b", 0.5), ("c", 0.45), ("d", 0.2)]
    values, weights = scaled_parts([dense, keyword], (0.3, 0.7))
    assert _rebuilt(values, weights) == pytest.approx(top_scaled([dense, keyword], (0.3, 0.7)))
    assert sum(weights) == pytest.approx(1.0)
    chosen = adaptive_weights(dense, AdaptiveWeights())
    values, weights = scaled_parts([spread(dense), spread(keyword)], chosen)
    assert _rebuilt(values, weights) == pytest.approx(adaptive(dense, keyword, AdaptiveWeights()))
    assert all(0.0 <= value <= 1.0 for side in values for value in side.values())


def test_dbsf_is_the_plain_sum_of_each_sides_mapped_values() -> None:
    lists = [[("a", 0.8), ("b", 0.5), ("c", 0.1)], [("b", 9.0), ("c", 2.0)]]
    assert _rebuilt(dbsf_parts(lists), [1.0, 1.0]) == pytest.approx(dbsf(lists))
