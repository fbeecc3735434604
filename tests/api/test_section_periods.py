"""A chunk is of the time it speaks of: in a running note kept by year (a ledger, a log with "## 2024" and
"## 2025"), each section is of the year its heading labels it with, as a note named "Budget 2025" is. So a
question naming the year finds the ledger's section of it before the days of that year that only touch the
topic, and the recall quotes it. Through the HTTP API on a small vault of real files with today pinned, by
keyword alone and with the default model (slow)."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

from tests.api.conftest import quoted_and_fates as recall
from tests.api.conftest import vault_client

LEDGER = """---
tags: [money, boat]
---
# Boat spend

## 2024

| month | item | £ |
|---|---|---|
| Feb | licence | 1,040 |
| Oct | stove | 450 |
| | **total spent** | **1,490** |

## 2025

| month | item | £ |
|---|---|---|
| Jan | batteries and inverter | 2,835 |
| Mar | dry dock | 2,210 |
| | **total spent** | **5,045** |
"""
VAULT = {
    "Money/Boat spend.md": LEDGER,
    # days of 2025 on the boat, stating no total spent
    "Journal/2025-03-14.md": "---\ndate: 2025-03-14\n---\nThe boat in dry dock: the yard revised its "
    "estimate, maybe £300 more. Scraped the hull all day.\n",
    "Journal/2025-06-14.md": "---\ndate: 2025-06-14\n---\nOn the boat all weekend. Swapped the toilet for a "
    "cassette one.\n",
    "Journal/2024-11-23.md": "---\ndate: 2024-11-23\n---\nStove fitted on the boat, and it's glorious.\n",
    "Money/Budget.md": "# Budget\n\nMortgage, food, the kids' clubs; the boat's mooring comes out monthly.\n",
}
TODAY = dt.date(2025, 11, 15)


client = vault_client(VAULT, today=TODAY)


def test_a_section_labelled_with_the_year_asked_is_of_that_year(client: TestClient) -> None:
    question = "total spent on the boat in 2025"
    answer = client.post("/search", json={"query": question, "top_k": 5, "explain": True}).json()
    first = answer["results"][0]

    assert (first["note_path"], first["heading_context"]) == ("Money/Boat spend.md", "Boat spend > 2025")
    assert first["why"]["time_reason"] == "of the period asked"
    quoted, _ = recall(client, question)
    assert quoted[0] == "Money/Boat spend.md"


def test_the_section_of_another_year_is_of_that_year(client: TestClient) -> None:
    answer = client.post("/search", json={"query": "boat spend in 2024", "top_k": 5, "explain": True}).json()
    first = answer["results"][0]

    assert (first["note_path"], first["heading_context"]) == ("Money/Boat spend.md", "Boat spend > 2024")
    assert first["why"]["time_reason"] == "of the period asked"
