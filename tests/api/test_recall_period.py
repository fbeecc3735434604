"""A question naming a period gets the entries of that period: beside them, a note dated wholly at another
time is not quoted, however near its topic. A plan is told before the time it is for, and "the week before
August 3" is not August 3: those questions keep the notes of other days. Through the HTTP API on a small
vault of real files with today pinned, by keyword alone and with the default model (slow)."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

from backend.application.recall.gate import OTHER_TIME
from tests.api.conftest import quoted_and_fates as recall
from tests.api.conftest import recall_preview as preview
from tests.api.conftest import vault_client

VAULT = {
    # the visit that set the plan: on the topic of any question about the shoulder's recovery
    "Health/Physio 2024-11-19.md": "---\ndate: 2024-11-19\n---\n# Physio\n\nShoulder recovery plan after the "
    "rotator cuff strain: band exercises daily, no climbing for six weeks. Shoulder recovery check in "
    "the new year.\n",
    "Journal/2025-03-22.md": "---\ndate: 2025-03-22\n---\nShoulder going well: first climbing session "
    "since November, easy routes only.\n",
    "Health/Physio 2025-04-08.md": "---\ndate: 2025-04-08\n---\n# Physio\n\nShoulder check: full range "
    "back, strength nearly there. Cleared to climb.\n",
    "Journal/2025-02-10.md": "---\ndate: 2025-02-10\n---\nPlanned the summer: sail the boat to Oxford in "
    "July, then walking in Portugal in August.\n",
    "Trips/Portugal 2025-08.md": "---\ndate: 2025-08-16\n---\n# Portugal\n\nWalking in Portugal this "
    "summer, as planned: the Rota Vicentina, hot, very good.\n",
    "Journal/2025-07-31.md": "---\ndate: 2025-07-31\n---\nThis week the kids did Rory's football camp "
    "and Esme's swimming gala.\n",
    "Journal/2025-08-03.md": "---\ndate: 2025-08-03\n---\nQuiet Sunday: the kids at Mum's, the allotment "
    "in the morning.\n",
}
TODAY = dt.date(2025, 11, 15)


client = vault_client(VAULT, today=TODAY)


def test_a_note_of_another_time_is_not_quoted_beside_the_period_asked(client: TestClient) -> None:
    question = "shoulder recovery in the first half of 2025"
    quoted, fates = recall(client, question)

    assert "Journal/2025-03-22.md" in quoted
    assert "Health/Physio 2024-11-19.md" not in quoted
    assert fates["Health/Physio 2024-11-19.md"] == OTHER_TIME
    # the page's recall preview says the same
    assert preview(client, question)["Health/Physio 2024-11-19.md"] == OTHER_TIME
    # asked without a period, the November visit is an answer like the others
    quoted, _ = recall(client, "what is the plan for my shoulder recovery")
    assert "Health/Physio 2024-11-19.md" in quoted


def test_a_plan_is_quoted_from_before_the_time_it_is_for(client: TestClient) -> None:
    quoted, fates = recall(client, "where did I plan to go walking in the summer of 2025")

    assert "Journal/2025-02-10.md" in quoted
    assert OTHER_TIME not in fates.values()


def test_a_time_before_a_day_is_not_that_day(client: TestClient) -> None:
    quoted, fates = recall(client, "what did the kids do the week before August 3, 2025")

    assert "Journal/2025-07-31.md" in quoted
    assert OTHER_TIME not in fates.values()
