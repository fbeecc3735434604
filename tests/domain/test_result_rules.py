from __future__ import annotations

import sys
import threading
from dataclasses import dataclass

import pytest

from backend.domain.ranking.result_rules import (
    TEXTS_KEPT,
    LineSpan,
    WordTerms,
    apply_threshold,
    dedupe_overlapping,
    highlights,
)
from backend.domain.text.text_analysis import TextAnalyzer


@dataclass(frozen=True)
class Hit:
    name: str
    note: str
    start: int
    end: int
    score: float = 1.0


def _span(hit: Hit) -> LineSpan:
    return LineSpan(hit.note, hit.start, hit.end)


@pytest.mark.parametrize(
    ("hits", "kept"),
    [
        ([], []),
        ([Hit("a", "n.md", 1, 10)], ["a"]),
        # an overlap chunk repeats lines of its neighbour: the better-ranked one stays
        ([Hit("a", "n.md", 8, 20), Hit("b", "n.md", 1, 10)], ["a"]),
        ([Hit("b", "n.md", 1, 10), Hit("a", "n.md", 8, 20)], ["b"]),
        # one shared line is an overlap
        ([Hit("a", "n.md", 1, 10), Hit("b", "n.md", 10, 12)], ["a"]),
        # chunks of one note that share no line all stay
        ([Hit("a", "n.md", 1, 10), Hit("b", "n.md", 11, 20), Hit("c", "n.md", 30, 40)], ["a", "b", "c"]),
        # the same lines in another note are not a duplicate
        ([Hit("a", "n.md", 1, 10), Hit("b", "m.md", 1, 10)], ["a", "b"]),
        # dropped hits do not block later ones: c overlaps only the dropped b
        ([Hit("a", "n.md", 1, 10), Hit("b", "n.md", 9, 20), Hit("c", "n.md", 15, 30)], ["a", "c"]),
        # a chunk inside a kept one, and one around it
        ([Hit("a", "n.md", 5, 8), Hit("b", "n.md", 6, 7), Hit("c", "n.md", 1, 20)], ["a"]),
        # order of the kept hits is the ranking order
        (
            [
                Hit("x", "m.md", 1, 3),
                Hit("a", "n.md", 1, 10),
                Hit("y", "m.md", 2, 4),
                Hit("b", "n.md", 20, 25),
            ],
            ["x", "a", "b"],
        ),
    ],
)
def test_dedupe_overlapping(hits: list[Hit], kept: list[str]) -> None:
    assert [h.name for h in dedupe_overlapping(hits, _span)] == kept


@pytest.mark.parametrize(
    ("scores", "threshold", "kept"),
    [
        ([3.0, 2.0, 1.0], None, [3.0, 2.0, 1.0]),
        ([3.0, 2.0, 1.0], 0.0, [3.0, 2.0, 1.0]),
        ([3.0, 2.0, 1.0], 2.0, [3.0, 2.0]),  # a score equal to the threshold stays
        ([3.0, 2.0, 1.0], 2.5, [3.0]),
        ([3.0, 2.0, 1.0], 10.0, []),
        ([0.03, 0.5, 0.2], 0.1, [0.5, 0.2]),  # order is kept, not re-sorted
        ([], 1.0, []),
    ],
)
def test_apply_threshold(scores: list[float], threshold: float | None, kept: list[float]) -> None:
    hits = [Hit(str(i), "n.md", i, i, score) for i, score in enumerate(scores)]
    assert [h.score for h in apply_threshold(hits, threshold)] == kept


@pytest.mark.parametrize(
    ("query", "text", "expected"),
    [
        ("milk", "Buy oat milk and more MILK.", ["milk"]),  # once, as first written
        ("MILK", "Buy oat Milk.", ["Milk"]),  # the text's case, not the query's
        ("rice milk", "milk, then rice, then milk", ["milk", "rice"]),  # order of the text
        ("what is the plan", "The plan is what we make it.", ["plan"]),  # stop words never highlight
        ("the of and", "the end of it and more", []),
        ("cafe", "Coffee at the Café Nicola.", ["Café"]),  # accent folding, as the keyword side does
        ("café", "a cafe near the river", ["cafe"]),
        ("Wójcik", "Met Tomasz Wojcik and WÓJCIK again", ["Wojcik"]),
        ("2026 budget", "Budget for 2026: 1200 rupees", ["Budget", "2026"]),
        ("postgres-migration", "The postgres cutover; migration in March.", ["postgres", "migration"]),
        ("über", "Straße und Über", ["Über"]),
        ("москва", "Поездка в Москва летом", ["Москва"]),
        ("sreenivas", "I owe Sreenivas's share", ["Sreenivas"]),
        ("tamarind", "no match here", []),
        ("", "anything", []),
        ("milk", "", []),
        ("snake_case", "snake and case", ["snake", "case"]),  # underscores split words, as in keywords
        # stemmed like the keyword side: one highlight per term, as first written
        ("deciding", "He decides; we decided.", ["decides"]),
        ("running shoes", "Shoe shop, then a run", ["Shoe", "run"]),
    ],
)
def test_highlights(query: str, text: str, expected: list[str]) -> None:
    assert highlights(query, text) == expected


def test_highlights_without_stemming_match_whole_words_only() -> None:
    assert highlights("deciding", "He decides, deciding now", analyzer=TextAnalyzer(stemming=False)) == [
        "deciding"
    ]


def test_highlights_of_searches_in_several_threads_are_those_of_one() -> None:
    # the service searches in a thread pool: the remembered texts are reordered and trimmed as they are shown
    analyzer = TextAnalyzer()
    texts = [
        f"note {i} about the allotment and the {i % 7} onions sown in spring" for i in range(TEXTS_KEPT + 300)
    ]
    alone = WordTerms(analyzer)
    expected = [alone.first_holders(text, ("en",)) for text in texts]
    shared = WordTerms(analyzer)
    failures: list[BaseException] = []
    found: dict[int, list[object]] = {}

    def show(worker: int) -> None:
        try:
            order = list(range(len(texts))) * 2  # every thread shows the same texts: they meet on each
            found[worker] = [(i, shared.first_holders(texts[i], ("en",))) for i in order]
        except BaseException as exc:  # collected and asserted below
            failures.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        threads = [threading.Thread(target=show, args=(worker,)) for worker in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert failures == []
    assert all(holders == expected[i] for shown in found.values() for i, holders in shown)  # type: ignore[misc]
