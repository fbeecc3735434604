"""A period a question compares against is not the period it asks about: "how did the year 11 mocks compare
with last year" asks of this year against last, so last year's notes neither rise for being of it nor look
surer (a meeting of last November naming the mock timetable was quoted for it on personal-dev, a question
the vault cannot answer). Through the HTTP API on a small vault of real files with today pinned, by keyword
alone and with the default model (slow)."""

from __future__ import annotations

import datetime as dt

from fastapi.testclient import TestClient

from tests.api.conftest import vault_client

MEETING = "Meetings/2024-11-14 Science dept meeting.md"
VAULT = {
    MEETING: "---\ndate: 2024-11-14\n---\n# Science dept meeting\n\n- Year 11 mock timetable: week of 6 "
    "January, chemistry paper 1 only.\n- Reprographics: the printing budget was overspent.\n",
    "Meetings/2025-09-04 Science dept meeting.md": "---\ndate: 2025-09-04\n---\n# Science dept meeting\n\n"
    "- New timetable for Year 10 practicals.\n- Fume cupboard in C4 repaired.\n",
    "Journal/2025-10-02.md": "---\ndate: 2025-10-02\n---\nMarked the Year 9 tests, made soup, walked to the "
    "allotment.\n",
}
client = vault_client(VAULT, today=dt.date(2025, 11, 15))


def _meeting(client: TestClient, question: str) -> tuple[dict, dict]:
    answer = client.post("/search", json={"query": question, "top_k": 5, "explain": True}).json()
    (hit,) = [r for r in answer["results"] if r["note_path"] == MEETING]
    return answer, hit


def test_a_period_compared_against_neither_lifts_nor_vouches_for_its_notes(client: TestClient) -> None:
    asked, of_it = _meeting(client, "how did the year 11 mocks go last year")
    assert asked["time_intent"] is not None
    assert of_it["why"]["time_factor"] == 2.0

    compared, against = _meeting(client, "how did the year 11 mocks compare with last year")
    assert compared["time_intent"] is None
    assert against["why"]["time_factor"] in (None, 1.0)
    assert against["why"]["confidence_features"]["of the period asked"] == 0.0
    assert against["confidence"] < of_it["confidence"]
