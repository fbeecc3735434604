import math

import pytest

from backend.domain.metrics import dedupe_notes, hit_at, mrr_at, ndcg_at, recall_at

REL = {"a.md": 1, "b.md": 1}


@pytest.mark.parametrize(
    ("ranking", "ndcg", "recall", "hit3", "mrr"),
    [
        (["a.md", "b.md", "x.md"], 1.0, 1.0, 1.0, 1.0),
        (["x.md", "a.md"], (1 / math.log2(3)) / (1 + 1 / math.log2(3)), 0.5, 1.0, 0.5),
        (["x.md", "y.md", "z.md", "a.md"], (1 / math.log2(5)) / (1 + 1 / math.log2(3)), 0.5, 0.0, 0.25),
        ([], 0.0, 0.0, 0.0, 0.0),
    ],
)
def test_metrics(ranking: list[str], ndcg: float, recall: float, hit3: float, mrr: float) -> None:
    assert ndcg_at(ranking, REL) == pytest.approx(ndcg)
    assert recall_at(ranking, REL) == pytest.approx(recall)
    assert hit_at(ranking, REL) == hit3
    assert mrr_at(ranking, REL) == pytest.approx(mrr)


def test_beyond_the_cutoff_does_not_count() -> None:
    ranking = [f"n{i}.md" for i in range(10)] + ["a.md"]
    assert ndcg_at(ranking, REL, 10) == 0.0
    assert mrr_at(ranking, REL, 10) == 0.0


def test_chunk_ranking_becomes_note_ranking_at_best_chunk() -> None:
    assert dedupe_notes(["a.md", "b.md", "a.md", "c.md", "b.md"]) == ["a.md", "b.md", "c.md"]
