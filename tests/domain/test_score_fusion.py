"""Score fusion: each side's scores over its own top score, weighted."""

from __future__ import annotations

import pytest

from backend.domain.fusion import top_scaled


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
