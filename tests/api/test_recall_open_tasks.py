"""Asked what happened, the recall does not quote a note that only planned it beside one that tells more:
last September's meeting, whose action list names the stock check and Bernie, beside the March meeting that
gives what she found (personal-dev quoted both). Alone, the plan is quoted: it is what the notes know. Asked
who was to do it, the plan is what answers. Through the HTTP API
on a small vault of real files, by keyword alone and with the default model (slow)."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

from backend.application.recall.gate import ONLY_PLANNED
from tests.api.conftest import quoted_and_fates as recall
from tests.api.conftest import vault_client

PLAN = "Meetings/2024-09-05 Science dept meeting.md"
FINDINGS = "Meetings/2025-03-27 Chemistry team meeting.md"
VAULT = {
    PLAN: "---\ndate: 2024-09-05\n---\n# Science dept meeting\n\n**1. Budget**: chemistry down to £1,850. "
    "Everyone to check stock before ordering anything.\n\nActions\n- [ ] me: chemical stock check with "
    "Bernie by 20 Sept\n- [ ] Oz: physics kit list\n- [ ] Fiona: book the fume cupboard repair in C4\n",
    FINDINGS: "---\ndate: 2025-03-27\n---\n# Chemistry team meeting\n\nBernie's chemical stock check, what "
    "she found:\n\n- Copper(II) oxide: about 400g, enough for the Y9 salts pilot.\n- Magnesium ribbon: two "
    "rolls, low: order in April.\n",
    "Journal/2025-03-29.md": "---\ndate: 2025-03-29\n---\nAllotment in the morning, the bees are flying. "
    "Made soup.\n",
}
client = vault_client(VAULT, today=dt.date(2025, 11, 15))


def test_asked_what_happened_a_note_only_planning_it_is_not_quoted(client: TestClient) -> None:
    quoted, fates = recall(client, "what did Bernie find in the chemical stock check?")
    assert quoted == [FINDINGS]
    assert fates[PLAN] == ONLY_PLANNED


def test_asked_what_happened_a_plan_alone_is_quoted_it_is_what_the_notes_know(client: TestClient) -> None:
    quoted, fates = recall(client, "what happened with the fume cupboard repair in C4?")
    assert quoted == [PLAN]
    assert ONLY_PLANNED not in fates.values()


def test_asked_who_was_to_do_it_the_plan_is_quoted(client: TestClient) -> None:
    quoted, fates = recall(client, "who was doing the chemical stock check with Bernie?")
    assert PLAN in quoted
    assert ONLY_PLANNED not in fates.values()
