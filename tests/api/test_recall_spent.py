"""Asked what was spent, the recall does not quote a note whose sums were only reckoned or quoted beside the
ledger of what was paid: on personal-dev, "total spent on the boat in 2025" quoted the day the boatyard
"reckons about £2,300" beside the ledger's rows. Asked for the quote itself, that day is what answers. Through
the HTTP API on a small vault of real files, by keyword alone and with the default model (slow)."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

from backend.application.recall.gate import ONLY_ESTIMATED
from tests.api.conftest import quoted_and_fates as recall
from tests.api.conftest import vault_client

LEDGER = "Money/Boat spend.md"
RECKONED = "Journal/2025-03-14.md"
VAULT = {
    LEDGER: "---\ntags: [money, boat]\n---\n# Boat spend\n\nWhat the boat cost us, month by month.\n\n"
    "## 2025\n| month | item | £ |\n|---|---|---|\n| Jan | electrics, two lithium batteries | 2,835 |\n"
    "| Mar | boatyard: dry dock, blacking, welds | 2,210 |\n| Oct | boat insurance renewal | 310 |\n"
    "| | **2025 total spent on the boat** | **5,355** |\n",
    RECKONED: "---\ndate: 2025-03-14\n---\nDrove over to the boatyard after school to see the boat. Pete "
    "wants to weld three spots before the blacking.\n\nNew total he reckons is about £2,300 instead of the "
    "£1,450 he quoted. Swallowed and said yes. #boat\n",
    "Journal/2025-03-29.md": "---\ndate: 2025-03-29\n---\nAllotment in the morning, the bees are flying.\n",
}
client = vault_client(VAULT, today=dt.date(2025, 11, 15))


def test_asked_what_was_spent_a_reckoned_sum_is_not_quoted_beside_the_ledger(client: TestClient) -> None:
    quoted, fates = recall(client, "total spent on the boat in 2025")
    assert LEDGER in quoted
    assert RECKONED not in quoted
    assert fates[RECKONED] == ONLY_ESTIMATED


def test_asked_for_the_quote_the_reckoned_sum_is_quoted(client: TestClient) -> None:
    quoted, fates = recall(client, "what did Pete quote for the blacking and the welds?")
    assert RECKONED in quoted
    assert ONLY_ESTIMATED not in fates.values()
