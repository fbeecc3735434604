"""A question asking for a measure (a time of day, a temperature, a pressure, a score, a distance, a weight,
an identifying number), and a passage that can give one (the recall's measure rule)."""

from __future__ import annotations

import pytest

from backend.domain.recall.measures import MEASURES, Measure, gives, measure_asked


@pytest.mark.parametrize(
    ("question", "measure"),
    [
        ("what time is Rory's football now", "time of day"),
        ("What time does the pool open?", "time of day"),
        ("at what time did Lyd arrive", "time of day"),
        ("what temperature do the honey flapjacks go in at", "temperature"),
        ("how hot should the oven be", "temperature"),
        ("What tire pressure should I run on the Honda Element?", "pressure"),
        ("what was my blood pressure at the GP", "pressure"),
        ("What score did I get on the RHCSA exam?", "score"),
        ("How many points did the Broncos score in the final three minutes?", "score"),
        ("what grade did Esme get for her guitar exam", "score"),
        ("How far is Jacksonville from Miami?", "distance"),
        ("how heavy are the AGM batteries", "weight"),
        ("how much honey did the hives weigh in August", "weight"),
        ("marigold CRT index number", "number"),
        ("what's Keith's number", "number"),
        ("what is my National Insurance number?", "number"),
        ("which account no. do the honey payments go to", "number"),
    ],
)
def test_questions_asking_for_a_figure_ask_for_its_measure(question: str, measure: str) -> None:
    asked = measure_asked(question)
    assert asked is not None
    assert asked.name == measure


@pytest.mark.parametrize(
    "question",
    [
        "What time framd does the Seven Years War cover?",  # XQuAD: a span, not a time of day
        "what time period is the castle from",
        "when is football",
        "what did I decide about the battery setup",
        "how much did the solar panels cost",  # a sum: sums.py
        "Ambulatory blood pressure monitoring is inaccurate at diagnosing hypertension.",  # a claim
        "how far along is the boat electrics project",  # progress, not a distance
        "how far did I get with the Portuguese course",
        # the same words asking for no figure of that measure
        "how far back do my journal notes go?",
        "how far should I push the launch deadline?",
        "what grade is Rory in?",  # a school year
        "what grade was the problem I did at Font?",  # a climb's grade: "6b"
        "how hot is the chilli sauce?",  # how spicy
        "what pressure was Esme under at school?",
        # a count, or a number of a figure or two (a house, a room, a bus) or of letters (a registration)
        "what is the number of hives at the allotment",
        "how many books did I finish in 2024",
        "which room number is the dentist in",
        "what's the van's registration number",
        "What is John's number one goal in his basketball career?",  # LoCoMo: a rank
    ],
)
def test_other_questions_ask_for_none(question: str) -> None:
    assert measure_asked(question) is None


@pytest.mark.parametrize(
    ("measure", "text"),
    [
        ("time of day", "| Rory | football U8s | Sat 9:30 |"),
        ("time of day", "pick up at 6pm, or half past six"),
        ("temperature", "Oven 180°C (fan 160), 25 minutes."),
        ("temperature", "gas mark 4"),
        ("pressure", "Front 32 psi, rear 30 psi."),
        ("pressure", "BP 135/85 at the GP, fine."),
        ("score", "Passed! 210/300, needed 210."),
        ("score", "Got 85% on the practice exam"),
        ("distance", "Jacksonville is 340 miles north of Miami."),
        ("weight", "Each battery is 30kg."),
        # bare, after a word that says what the figure is
        ("time of day", "Got there at 6, pitched the tent in the rain."),
        ("time of day", "Football is Saturday mornings now."),
        ("temperature", "Bake at 180 for 25 minutes."),
        ("pressure", "Pumped the tyres to 35 before the trip."),
        ("score", "Got 72 on the mock, two marks off an A."),
        ("distance", "Ran a 5k round the park."),
        ("weight", "The swarm weighed about 2 kilos."),
        ("pressure", "35psi front, 38psi rear."),  # the unit against the figure
        ("score", "Esme got a B+ in the chemistry mock."),  # a letter grade
        ("score", "Rory's team won 3-1 on Saturday."),
        ("distance", "About 40 kms of gravel."),
        ("number", "- CRT index no. **508821**"),
        ("number", "Keith is the mooring warden, 07700 900412"),  # in groups
        ("number", "Sort code 12-34-56"),
        ("number", "NI: AB123456C"),  # figures among letters
        ("number", "Gym membership no. 4417, renews in May"),  # short, written as a number
        ("number", "Order #4417 from Screwfix"),
        ("number", "Booking ref: XK4T2"),
    ],
)
def test_a_figure_written_as_people_write_it_gives_the_measure(measure: str, text: str) -> None:
    assert gives(_named(measure), text)


@pytest.mark.parametrize(
    ("measure", "text"),
    [
        ("time of day", "Sports day Thursday, Rory came 4th in the sack race."),
        ("time of day", "we split the rent 60:40"),
        ("pressure", "2009 Honda Element: 215/70 R 16"),  # a tire size
        ("score", "4. Failed mount in /etc/fstab. 5. Configure a repository file."),
        ("temperature", "Flapjacks: oats, butter, honey, a pinch of salt."),
        ("weight", "Two AGM batteries, heavy, in the engine bay."),
        ("score", "Esme got a bit wet at the match and a cold after it."),  # "a", not a grade
        # a boat's survey: readings, a standard, a sum, a day, no number that names the boat
        ("number", "Sides 5.4–5.9mm, wiring not to BS 7671, £2,000 off, 240V, surveyed 2023-10-12."),
        ("number", "Bought her for £42,500 in Oct 2023."),
        ("number", "Took the number 73 bus to the dentist, room no. 4."),  # a bus, a room
    ],
)
def test_a_note_on_the_topic_without_the_figure_gives_none(measure: str, text: str) -> None:
    assert not gives(_named(measure), text)


def _named(name: str) -> Measure:
    return next(measure for measure in MEASURES if measure.name == name)
