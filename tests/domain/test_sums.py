"""A question asking for a sum of money, and a passage that can give one (the recall's sum rule)."""

from __future__ import annotations

import pytest

from backend.domain.recall.sums import (
    asks_for_sum,
    asks_what_was_spent,
    gives_sum,
    only_estimated,
    sum_subject,
)


@pytest.mark.parametrize(
    "question",
    [
        "how much did the solar panels on the boat cost",
        "what did the hygienist cost in 2025",
        "how much does Lyd owe me right now",
        "How much is the chemistry budget this year?",
        "total spent on the boat in 2025",
        "how much a month do the kids' clubs cost us",
        "how much do I charge for a 12oz jar of honey",
        "what's the price of the mooring",
        "How much money was to go to DuMont under the merger plan?",
    ],
)
def test_questions_asking_what_something_cost_ask_for_a_sum(question: str) -> None:
    assert asks_for_sum(question)


@pytest.mark.parametrize(
    "question",
    [
        "what did I decide about the budget meeting",
        "How much time was left in the game when Denver scored?",
        "how much heavier is oxygen 18 than oxygen 16",
        "what solar panels did I plan for the boat",
        "wie viel hat das Boot gekostet",  # another language: never narrowed
        "the last time I went climbing with Lyd",
        # money's words asking for no money: time and effort spent, attention paid, a battery charged
        "how much time do I spend on email each week?",
        "how much effort did I spend on the thesis?",
        "what did I spend the afternoon doing?",
        "what should I pay attention to in the contract?",
        "how much do I charge the lithium battery to?",
        "what does the cost function look like in my ML notes?",
    ],
)
def test_other_questions_do_not(question: str) -> None:
    assert not asks_for_sum(question)


@pytest.mark.parametrize(
    "passage",
    [
        "The lithium battery and the 2kW inverter: £2,150 fitted.",
        "| date | £ |\n|---|---|\n| 19 Nov 24 | 60 |\n| **total** | **252** |",  # the currency heads a column
        "Lyd owes me 40 quid for the hut.",
        "Pitch fee EUR 15 a day",
        "jars at 50p off",
        "$7.5 million to DuMont",
        # as people write them across Europe and Asia
        "1 450 kr for the ferry",
        "paid 300 SEK",
        "2.400 zł deposit",
        "Rs 500 for the auto",
        "₺120 at the bazaar",
        "3,000 INR a month",
    ],
)
def test_figures_with_a_currency_mark_give_a_sum(passage: str) -> None:
    assert gives_sum(passage)


@pytest.mark.parametrize(
    "passage",
    [
        "about 3 panels at 400W, an MPPT controller 100/50",  # figures, no money
        "The budget meeting moved to Tuesday; bring the pound cake.",  # money words, no figure
        "Room 12 at 3pm",
        "try 3 times before calling the plumber",  # "try" is no Turkish lira here
    ],
)
def test_a_passage_without_a_figure_and_a_currency_gives_none(passage: str) -> None:
    assert not gives_sum(passage)


@pytest.mark.parametrize(
    ("question", "period", "subject"),
    [
        ("what did the hygienist cost in 2025", "2025", {"did", "the", "hygienist", "in"}),
        ("total spent on the boat in 2025", "2025", {"on", "the", "boat", "in"}),
        ("how much do I owe Sreenivas?", "", {"do", "I", "Sreenivas"}),
        (
            "how much do I charge for a 12oz jar of honey",
            "",
            {"do", "I", "for", "a", "12oz", "jar", "of", "honey"},
        ),
        ("how much did I spend in March", "March", {"did", "I", "in"}),  # of nothing named: any sum
        ("what is the rent", "", {"is", "the"}),
    ],
)
def test_what_a_sum_asked_for_is_of(question: str, period: str, subject: set[str]) -> None:
    assert set(sum_subject(question, period).replace("?", " ").split()) == subject


@pytest.mark.parametrize(
    ("question", "spent"),
    [
        ("total spent on the boat in 2025", True),
        ("what did the new battery and inverter setup cost", True),
        ("how much have I paid for physio altogether", True),
        ("how much did I spend on the kids' clubs?", True),
        # the quote, the budget or what is to come is asked for itself
        ("what did Boatyard Pete quote for the blacking", False),
        ("how much is the chemistry budget this year", False),
        ("what will the new roof cost", False),
        ("how much does Lyd owe me right now", False),
        ("how much did I spend the afternoon on the accounts", False),  # time spent, not money
    ],
)
def test_a_question_asks_what_was_spent_or_for_the_quote_itself(question: str, spent: bool) -> None:
    assert asks_what_was_spent(question) is spent


@pytest.mark.parametrize(
    ("text", "estimated"),
    [
        ("New total he reckons is about £2,300 instead of £1,450. Swallowed and said yes.", True),
        ("Pete quoted £1,450 for the blacking.\nDry dock booked for 8 March.", True),
        ("Budget for the saloon: £400", True),
        ("Ordered the composting toilet. £1,050 gulp", False),
        ("| Mar | Ashby's — dry dock, blacking | 2,210 |", False),  # a ledger's row: its £ is in the head
        ("He reckons it'll be £2,300.\nPaid the £100 deposit today.", False),  # one sum paid
        ("He reckons the hull is sound.", False),  # no sum at all
        # a sum said paid is paid, whatever the line says of a quote, an expectation or a budget
        ("Paid Ashby's £1,050 for the blacking, as quoted.", False),
        ("Paid £2,310 in the end, more than I expected.", False),
        ("Spent £300 on the saloon, under budget.", False),
        ("| May | inverter, bought at the quoted price | 640 |", False),
    ],
)
def test_a_passage_whose_every_sum_is_reckoned_or_quoted_is_only_estimated(
    text: str, estimated: bool
) -> None:
    assert only_estimated(text) is estimated
