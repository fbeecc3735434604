"""The recall gate's rules on entries as a search presents them, where they meet. Asked what happened, an
entry whose lines on the question are unticked tasks stays out beside one that tells more, after the rules
that leave entries out for what they lack; alone, or beside entries holding none of the question's words, it
stays. The person's own words come first where one of them can answer: one lacking the measure asked for
does not keep a saved note out. Asked what was spent, an entry whose sums are all reckoned or quoted stays out
beside one stating a sum paid; asked for the quote, or alone, it stays. Asked for the sum of something, an
entry whose sums stand apart from it stays out beside one at least as likely that writes a sum with it (on
the sum's line or table row, or under a title, alias, tag or heading naming all of it)."""

from __future__ import annotations

import datetime as dt
from dataclasses import replace

import pytest

from backend.application.recall.gate import ONLY_ESTIMATED, ONLY_PLANNED, SUM_APART, Gate
from backend.application.search.presenting import ResultView
from backend.application.search.question import Question
from backend.bootstrap import build_analyzer
from backend.config import load_settings
from backend.domain.ranking.result_rules import WordTerms
from backend.domain.text.text_analysis import TextAnalyzer
from tests.application.result_views import result_view

PLAN = "Meetings/2024-09-05.md"
FINDINGS = "Meetings/2025-03-27.md"


@pytest.fixture(scope="module")
def analyzer() -> TextAnalyzer:
    return build_analyzer(load_settings(embedding_provider="none"), ("en",))


def _view(path: str, content: str, confidence: float = 0.8, saved_from: str | None = None) -> ResultView:
    return result_view(path, content, confidence, saved_from=saved_from)


def _picked(analyzer: TextAnalyzer, asked: str, views: list[ResultView]) -> tuple[list[str], dict[str, str]]:
    """What the recall's gate for `asked` keeps of `views`, and why it leaves out the others: the odds rule
    off, only the rules on what the question asks pick."""
    question = Question.plain(asked, analyzer)
    gate = Gate.asked_by(
        question, WordTerms(analyzer), by_odds=False, latest=question.latest, today=dt.date(2025, 11, 15)
    )
    left_out: dict[str, str] = {}
    return [v.note_path for v in gate.picked(views, left_out)], left_out


@pytest.mark.parametrize(
    "plan",
    [
        "Actions\n- [ ] me: chemical stock check with Bernie by 20 Sept",
        "  + [ ] me: chemical stock check with Bernie",
        "> [!todo]\n> - [ ] me: chemical stock check with Bernie",
        "- [>] chemical stock check with Bernie, moved to October",
    ],
    ids=["list", "indented plus", "callout", "deferred"],
)
def test_beside_the_findings_the_plan_stays_out(analyzer: TextAnalyzer, plan: str) -> None:
    views = [_view(PLAN, plan, 0.9), _view(FINDINGS, "Bernie's chemical stock check found magnesium low.")]
    kept, left_out = _picked(analyzer, "What did Bernie find in the chemical stock check?", views)
    assert (kept, left_out) == ([FINDINGS], {PLAN: ONLY_PLANNED})


def test_beside_an_entry_holding_none_of_the_questions_words_the_plan_stays(analyzer: TextAnalyzer) -> None:
    views = [
        _view(PLAN, "- [ ] me: chemical stock check with Bernie"),
        _view("Journal/2025-03-29.md", "Allotment in the morning, the bees are flying."),
    ]
    kept, left_out = _picked(analyzer, "What did Bernie find in the chemical stock check?", views)
    assert kept == [PLAN, "Journal/2025-03-29.md"]
    assert left_out == {}


def test_the_plan_stays_when_the_entry_telling_more_is_left_out_for_what_it_lacks(
    analyzer: TextAnalyzer,
) -> None:
    # asked for a time of day, the journal states none (measures.py): the plan holds the only one
    views = [
        _view("Home/Boiler.md", "- [ ] plumber coming round Tuesday 10am to fix the boiler"),
        _view("Journal/2025-03-04.md", "The plumber came on Tuesday, boiler fixed, new pump."),
    ]
    kept, left_out = _picked(analyzer, "What time did the plumber come round to fix the boiler?", views)
    assert kept == ["Home/Boiler.md"]
    assert ONLY_PLANNED not in left_out.values()


def test_an_own_note_lacking_the_measure_does_not_keep_the_saved_one_out(analyzer: TextAnalyzer) -> None:
    # "your own words first" where one of them can answer: the meal plan states no temperature
    clipped = _view(
        "Clippings/Focaccia.md", "Focaccia: bake at 220°C for 20 minutes.", 0.9, "https://bbc.co.uk"
    )
    views = [clipped, _view("Food/Meal plan.md", "Friday: focaccia and soup for the oven night.", 0.7)]
    kept, left_out = _picked(analyzer, "How hot should the oven be for the focaccia?", views)
    assert kept == ["Clippings/Focaccia.md"]
    assert "Clippings/Focaccia.md" not in left_out


def test_what_a_sum_is_of_may_be_named_by_the_notes_alias(analyzer: TextAnalyzer) -> None:
    table = "| date | what | £ |\n|---|---|---|\n| 3 Nov | train tickets | 40 |"
    ledger = replace(_view("Money/Ledger - Lydia.md", table), aliases=["Lyd"])
    kept, left_out = _picked(analyzer, "How much does Lyd owe me?", [ledger])
    assert kept == ["Money/Ledger - Lydia.md"]
    assert left_out == {}


LEDGER = "Money/Boat spend.md"
ESTIMATE = "Journal/2025-03-14.md"


def _spend_views() -> list[ResultView]:
    ledger = (
        "## 2025\n| month | item | £ |\n|---|---|---|\n| Mar | Ashby's — dry dock, blacking, welds | 2,210 |"
    )
    reckoned = "Pete's pressure-washed the boat. New total he reckons is about £2,300 instead of £1,450."
    return [_view(ESTIMATE, reckoned, 0.98), _view(LEDGER, ledger, 0.97)]


def test_asked_what_was_spent_a_reckoned_sum_stays_out_beside_the_ledger(analyzer: TextAnalyzer) -> None:
    kept, left_out = _picked(analyzer, "total spent on the boat in 2025", _spend_views())
    assert (kept, left_out) == ([LEDGER], {ESTIMATE: ONLY_ESTIMATED})


@pytest.mark.parametrize(
    ("asked", "views"),
    [
        # asked for the quote itself, it answers
        ("what did Pete quote for the boat's blacking?", _spend_views()),
        # alone, the reckoned sum is what the notes know of the spend
        ("total spent on the boat in 2025", _spend_views()[:1]),
    ],
    ids=["asked for the quote", "alone"],
)
def test_a_reckoned_sum_stays_when_it_is_what_is_asked_or_all_there_is(
    analyzer: TextAnalyzer, asked: str, views: list[ResultView]
) -> None:
    kept, left_out = _picked(analyzer, asked, views)
    assert ESTIMATE in kept
    assert ONLY_ESTIMATED not in left_out.values()


def test_a_sum_said_paid_stays_whatever_its_line_says_of_a_quote(analyzer: TextAnalyzer) -> None:
    paid = _view(ESTIMATE, "Paid Ashby's £1,050 for the boat's blacking, as quoted.", 0.9)
    inverter = _view("Journal/2025-05-02.md", "Bought the boat's new inverter: £640.", 0.9)
    kept, left_out = _picked(analyzer, "total spent on the boat in 2025", [paid, inverter])
    assert kept == [ESTIMATE, "Journal/2025-05-02.md"]
    assert left_out == {}


PRICES = "Areas/Bees/Honey business.md"
LABELS = "Projects/Honey labels.md"
JAR_PRICE = "how much do I charge for a 12oz jar of honey"


def _honey_views(prices: float = 0.8, labels: float = 0.6) -> list[ResultView]:
    table = "## Prices\n| jar | retail |\n|---|---|\n| 227g / 8oz | £6.50 |\n| 340g / 12oz | £9.00 |"
    printing = "Net weight on 227g / 340g jars.\nLabel size: 60×40mm from Vistaprint, 250 for £14."
    views = [_view(PRICES, table, prices), _view(LABELS, printing, labels)]
    return sorted(views, key=lambda v: -v.confidence)


def test_beside_the_price_of_the_jar_a_sum_of_something_else_stays_out(analyzer: TextAnalyzer) -> None:
    # the labels note names honey in its title and jars in its text, but its sum is the label printing's
    kept, left_out = _picked(analyzer, JAR_PRICE, _honey_views())
    assert (kept, left_out) == ([PRICES], {LABELS: SUM_APART})


@pytest.mark.parametrize(
    ("views", "kept"),
    [(_honey_views(prices=0.5), [LABELS, PRICES]), (_honey_views()[1:], [LABELS])],
    ids=["likelier", "alone"],
)
def test_a_sum_standing_apart_stays_when_likelier_or_alone(
    analyzer: TextAnalyzer, views: list[ResultView], kept: list[str]
) -> None:
    # a preference among entries that answer: never above a likelier one; alone, what the notes know
    assert _picked(analyzer, JAR_PRICE, views) == (kept, {})


def test_a_ledger_under_a_title_naming_what_its_sums_are_of_stays(analyzer: TextAnalyzer) -> None:
    rows = "| month | item | £ |\n|---|---|---|\n| Jan | Nature's Head composting toilet | 1,050 |"
    toilet = _view("Journal/2025-01-05.md", "Ordered the boat's composting toilet, £1,050 gulp.", 0.9)
    views = [toilet, _view(LEDGER, rows, 0.8)]
    assert _picked(analyzer, "total spent on the boat in 2025", views) == ([toilet.chunk_id, LEDGER], {})


def test_a_ledger_named_by_its_alias_stays_as_one_named_by_its_title(analyzer: TextAnalyzer) -> None:
    # the note's name says nothing of the boat; its alias does, as Obsidian finds it by either
    rows = "| month | item | £ |\n|---|---|---|\n| Jan | Nature's Head composting toilet | 1,050 |"
    toilet = _view("Journal/2025-01-05.md", "Ordered the boat's composting toilet, £1,050 gulp.", 0.9)
    ledger = result_view("Money/2025 ledger.md", rows, 0.8, aliases=("Boat spend",))
    kept, left_out = _picked(analyzer, "total spent on the boat in 2025", [toilet, ledger])
    assert (kept, left_out) == ([toilet.chunk_id, ledger.chunk_id], {})
    unnamed = replace(ledger, aliases=[])
    assert _picked(analyzer, "total spent on the boat in 2025", [toilet, unnamed])[0] == [toilet.chunk_id]


def test_the_period_asked_is_not_what_the_sum_is_of_with_the_period_rule_off(analyzer: TextAnalyzer) -> None:
    assert Question.plain("total spent on the boat in 2025", analyzer).sum_of == {"boat"}
