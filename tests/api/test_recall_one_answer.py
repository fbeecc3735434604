"""The recall quotes the note that answers, and only it: a neighbour on its topic far less likely to answer
is left out beside it, a question asking for the last time of something gets the newest day that answers,
and a note that says another replaced it is never quoted (it ranks below its replacement). Through the
HTTP API on a small vault of real files with today pinned, with the default model (MiniLM, slow) and by
keyword alone (the weights every uncalibrated model uses: a note can raise them by repeating the question's
words, so by them no entry is left out for being less likely than another); /search's explain data says the
same as /context does."""

from __future__ import annotations

import datetime as dt

import pytest
from fastapi.testclient import TestClient

from backend.application.recall.context import REPLACED
from backend.application.recall.entries import QUOTED
from backend.application.recall.gate import (
    EARLIER_OF_SERIES,
    EARLIER_TIME,
    FAR_LESS_LIKELY,
    NO_SUM,
    NOT_ITS_SUM,
)
from backend.domain.ranking.confidence import RECALL_FLOOR
from tests.api.conftest import quoted_and_fates as recall
from tests.api.conftest import recall_preview as preview
from tests.api.conftest import vault_client

VAULT = {
    "Projects/Honey prices.md": "# Honey prices\n\nWhat I charge for a jar of honey: £6 for a 12oz jar at "
    "the market, £4 for the small jar. I charge the shop £4.50 a jar.\n",
    # on the topic, holding some of the question's words, answering none of it
    "Projects/Honey labels.md": "# Honey labels\n\nLabels for the honey jars I sell at the market: name and "
    "address, weight, best before date, country of origin. Ordered 200 from the printer.\n",
    "Projects/Honey market stall.md": "# Honey market stall\n\n## Decision\n\nDecided: I will sell honey at "
    "the Saturday market from May, a stall shared with Gareth. The market charges a pitch fee of £15.\n",
    "Journal/2024-10-29.md": "---\ndate: 2024-10-29\n---\nClimbing with Lyd in Font, the final day of the "
    "trip. Lyd sent her project.\n",
    "Journal/2025-06-28.md": "---\ndate: 2025-06-28\n---\nWent climbing with Lyd at Stanage. Lyd led the "
    "classic, I seconded.\n",
    "Journal/2025-10-30.md": "---\ndate: 2025-10-30\n---\nWent climbing with Lyd at the wall after work, "
    "short session, my shoulder held up.\n",
    "Projects/Electrics - first draft.md": "---\nstatus: superseded\n---\n# Electrics — first draft\n\n"
    "Replaced by [[Electrics]]. The battery and inverter setup: two AGM batteries and a 1kW inverter, cost "
    "£900.\n",
    "Meetings/2024-09-05 Science dept.md": "---\ndate: 2024-09-05\n---\n# Science dept\n\nFirst week back "
    "at school: the new timetable, the lab rota, the year 9 practicals.\n",
    "Journal/2024-09-21.md": "---\ndate: 2024-09-21\n---\nDinner at Mum's, then the allotment.\n",
    "Projects/Electrics.md": "# Electrics\n\nReplaces [[Electrics - first draft]].\n\n## What it cost\n\n"
    "The lithium battery and the 2kW inverter: £2,150 fitted, in January.\n",
    # the topic of a question about a price, holding figures but no sum of money
    "Projects/Boat solar ideas.md": "# Boat solar ideas\n\nSolar panels on the boat roof: about 3 panels at "
    "400W, an MPPT controller 100/50. Not buying the panels until 2026.\n",
    # a note a school year, copied and renamed each September
    "Family/Club fees 2024-25.md": "# Club fees 2024-25\n\nRory's football club fees: £20 a month. Esme's "
    "swimming club fees: £40 a month.\n",
    "Family/Club fees 2025-26.md": "# Club fees 2025-26\n\nRory's football club fees: £24 a month. Esme's "
    "swimming club fees: £46 a month.\n",
    "Family/Kids clubs.md": "# Kids clubs\n\n| who | club | when |\n|---|---|---|\n| Rory | football | Sat "
    "9:30 |\n| Esme | swimming | Tue 17:15 |\n",
    # on the topic of a question it cannot answer: sizes, no pressure
    "Car/Tire sizes.md": "# Tire sizes\n\n2009 Honda Element: 215/70 R 16\n\n2013 Toyota RAV4: 225/65 R 17\n",
    # a sum of money, and a health visit: not the sum of a question about the hygienist
    "Health/Physio 2025-04-08.md": "---\ndate: 2025-04-08\ncost: 48\n---\n# Physio\n\nShoulder check, "
    "cleared to climb. Paid £48 for the appointment.\n",
    "Health/Dentist 2024-05-21.md": "---\ndate: 2024-05-21\n---\nRoutine check and the hygienist at "
    "Broomhill Dental: hygienist £56, check-up £26.80.\n",
    "Journal/2025-07-05.md": "---\ndate: 2025-07-05\n---\nRory's football team had their end of season "
    "party. Rory got a football medal and wore it to bed.\n",
    # the boat's own numbers, and its survey: readings, a standard, a sum, no number that names the boat
    "Boat/Marigold details.md": "# Marigold details\n\n- 57ft trad stern, built 1989\n"
    "- CRT index no. 508821\n- Mooring warden Keith, 07700 900412\n",
    "Boat/Marigold survey.md": "# Marigold survey\n\nMarigold's hull: sides 5.4-5.9mm, baseplate 9.1mm. "
    "Wiring not to BS 7671. Index of defects below; knocked £2,000 off the price.\n",
}
TODAY = dt.date(2025, 11, 15)


client = vault_client(VAULT, today=TODAY)


def by_meaning(client: TestClient) -> bool:
    return client.post("/search", json={"query": "honey", "top_k": 1}).json()["mode"] == "hybrid"


def test_a_neighbour_far_less_likely_is_not_quoted_beside_the_answer(client: TestClient) -> None:
    question = "how much do I charge for a jar of honey"
    quoted, fates = recall(client, question)

    if not by_meaning(client):
        assert FAR_LESS_LIKELY not in fates.values()  # by keyword alone only the floor gates
        return
    assert quoted == ["Projects/Honey prices.md"]
    # both neighbours cleared the floor: only beside the answer are they left out
    assert fates["Projects/Honey labels.md"] == FAR_LESS_LIKELY
    assert fates["Projects/Honey market stall.md"] == FAR_LESS_LIKELY
    assert preview(client, question)["Projects/Honey labels.md"] == FAR_LESS_LIKELY
    # asked without a floor, the caller wants what was found: the neighbours are given
    body = {"query": question, "max_chars": 1500, "max_chunks": 3}
    given = client.post("/context", json=body).json()["sources"]
    assert {"Projects/Honey labels.md", "Projects/Honey prices.md"} <= {s["note_path"] for s in given}


def test_entries_of_like_odds_are_quoted_together(client: TestClient) -> None:
    quoted, _ = recall(client, "went climbing with Lyd")

    assert set(quoted) >= {"Journal/2025-06-28.md", "Journal/2025-10-30.md"}


def test_the_last_time_of_something_is_the_newest_day_that_answers(client: TestClient) -> None:
    question = "last time I went climbing with Lyd"
    quoted, fates = recall(client, question)

    assert quoted == ["Journal/2025-10-30.md"]
    assert fates["Journal/2025-06-28.md"] == EARLIER_TIME
    assert preview(client, question)["Journal/2025-06-28.md"] == EARLIER_TIME
    # a question naming its own period asks about that period, not the latest
    quoted, _ = recall(client, "last time I went climbing with Lyd in June 2025")
    assert quoted[0] == "Journal/2025-06-28.md"


def test_a_word_naming_no_topic_asks_nothing_of_a_note_of_the_period(client: TestClient) -> None:
    """ "school stuff from september 2024" asks about school: a note of that September that speaks of school
    speaks to the question ("stuff" names nothing it must also hold); a day of it that does not, does not."""
    quoted, fates = recall(client, "school stuff from september 2024")

    assert quoted[0] == "Meetings/2024-09-05 Science dept.md"
    if not by_meaning(client):  # by meaning, in a vault of ten notes every chunk stands above the background
        assert fates.get("Journal/2024-09-21.md", "below the floor") == "below the floor"


def test_a_note_that_says_it_was_replaced_ranks_below_its_replacement_and_is_never_quoted(
    client: TestClient,
) -> None:
    question = "what did the battery and inverter setup cost"
    response = client.post("/search", json={"query": question, "top_k": 10, "explain": True})
    hits = response.json()["results"]
    paths = [hit["note_path"] for hit in hits]

    # the draft holds more of the question's words, and still comes after the plan that replaced it
    assert paths.index("Projects/Electrics.md") < paths.index("Projects/Electrics - first draft.md")
    draft = next(hit for hit in hits if hit["note_path"] == "Projects/Electrics - first draft.md")
    assert any("replaced it" in rule for rule in draft["why"]["rules"])
    quoted, fates = recall(client, question)
    assert quoted == ["Projects/Electrics.md"]
    assert fates["Projects/Electrics - first draft.md"] == REPLACED
    assert fates["Projects/Electrics.md"] == QUOTED


def test_a_note_stating_no_sum_is_not_quoted_for_what_something_cost(client: TestClient) -> None:
    question = "how much did the solar panels on the boat cost"
    quoted, fates = recall(client, question)

    # the panels' note clears the floor (its words are the question's) but holds wattages, not a price
    assert quoted == []
    assert fates["Projects/Boat solar ideas.md"] == NO_SUM
    assert preview(client, question)["Projects/Boat solar ideas.md"] == NO_SUM
    # asked about the panels without asking a price, the note is the answer
    quoted, _ = recall(client, "what solar panels did I plan for the boat")
    assert quoted == ["Projects/Boat solar ideas.md"]


def test_a_sum_of_something_else_is_not_quoted_for_what_a_thing_cost(client: TestClient) -> None:
    question = "what did the hygienist cost in 2025"
    quoted, fates = recall(client, question)

    # the physio visit of 2025 states a sum, and is not the hygienist's
    assert "Health/Physio 2025-04-08.md" not in quoted
    if by_meaning(client):  # by keyword alone it is below the floor already
        assert fates["Health/Physio 2025-04-08.md"] == NOT_ITS_SUM
        assert preview(client, question)["Health/Physio 2025-04-08.md"] == NOT_ITS_SUM
    # asked what the physio cost, its sum is the answer
    quoted, _ = recall(client, "what did the physio cost in 2025")
    assert quoted[0] == "Health/Physio 2025-04-08.md"


def test_asked_about_today_last_years_copy_of_a_series_is_not_quoted(client: TestClient) -> None:
    """Two school years' notes both overlap this calendar year: the period cannot tell them apart."""
    question = "how much are Rory's football club fees now"
    quoted, fates = recall(client, question)

    assert quoted[0] == "Family/Club fees 2025-26.md"
    assert fates["Family/Club fees 2024-25.md"] == EARLIER_OF_SERIES
    assert preview(client, question)["Family/Club fees 2024-25.md"] == EARLIER_OF_SERIES
    # asked about that year by its number, it is the answer
    quoted, _ = recall(client, "how much were Rory's football club fees in 2024-25")
    assert "Family/Club fees 2024-25.md" in quoted


def test_a_question_asking_for_a_time_of_day_is_given_a_note_that_states_one(client: TestClient) -> None:
    quoted, fates = recall(client, "what time is Rory's football club")

    # the fees notes hold more of the question's words; the table of the clubs states the time
    assert quoted == ["Family/Kids clubs.md"]
    assert fates["Family/Club fees 2025-26.md"] == "states no time of day, and the question asks for one"
    # a question asking when in the year, not in the day, is not narrowed so
    quoted, _ = recall(client, "when was Rory's football end of season party")
    assert quoted[0] == "Journal/2025-07-05.md"


def test_a_note_on_the_topic_without_the_figure_asked_for_is_not_an_answer(client: TestClient) -> None:
    quoted, fates = recall(client, "what tire pressure should I run on the Honda Element")

    assert quoted == []
    assert fates["Car/Tire sizes.md"] == "states no pressure, and the question asks for one"
    quoted, _ = recall(client, "what size tires does the Honda Element take")
    assert quoted == ["Car/Tire sizes.md"]


def test_a_question_asking_for_a_number_is_given_the_note_that_writes_it(client: TestClient) -> None:
    quoted, fates = recall(client, "marigold CRT index number")

    assert quoted == ["Boat/Marigold details.md"]
    # by meaning the survey is far less likely already; by keyword as likely, it states no number
    if not by_meaning(client):
        assert fates["Boat/Marigold survey.md"] == "states no number, and the question asks for one"
    quoted, _ = recall(client, "what did the marigold survey find")
    assert "Boat/Marigold survey.md" in quoted


@pytest.mark.parametrize(
    "question",
    [
        "how much do I charge for a jar of honey",
        "went climbing with Lyd",
        "last time I went climbing with Lyd",
        "what did the battery and inverter setup cost",
        "how much did the solar panels on the boat cost",
        "how much are Rory's football club fees now",
        "what time is Rory's football club",
        "what did the hygienist cost in 2025",
        "what did the physio cost in 2025",
        "what tire pressure should I run on the Honda Element",
    ],
)
def test_the_page_says_what_the_recall_does(client: TestClient, question: str) -> None:
    """The recall preview of /search (the page's) names the entries /context quotes, and says of each hit
    /context weighed what /context made of it."""
    response = client.post("/search", json={"query": question, "top_k": 10, "explain": True})
    results = response.json()["results"]
    said = {f"{r['note_path']}:{r['start_line']}-{r['end_line']}": r["why"]["recall"] for r in results}
    body = {
        "query": question,
        "max_chars": 1500,
        "max_chunks": 3,
        "min_confidence": RECALL_FLOOR,
        "quoted": True,
    }
    block = client.post("/context", json={**body, "explain": True}).json()

    assert [label for label, verdict in said.items() if verdict["quoted"]] == [
        s["attribution"] for s in block["sources"]
    ]
    for entry in block["explain"]["considered"]:
        assert said[entry["attribution"]]["reason"] == entry["reason"]
