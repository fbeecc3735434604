"""A question that asks for a measure (a time of day, a temperature, a pressure, a score, a distance, a
weight, an identifying number), and a passage that can give one.

Asked "what time is Rory's football now", "what temperature do the flapjacks go in at" or "what tire pressure
should I run on the Honda Element", a person wants the figure; a note on the topic that holds none cannot
give it, however close its words are. Quoted, it reads as an answer: the journal day of Rory's sports day for
the football's time (personal-dev), the tire sizes of every car for the Element's pressure and the notes of a
pre-assessment for the score of the exam (real-dev: questions that vault cannot answer, each given an entry at
0.87-0.95). As with sums of money (sums.py), people write a measure as a figure and its unit, or a form of
its own ("9:30", "6pm", "180°C", "gas mark 4", "32 psi", "120/80", "210/300", "85%"), or bare after a word
that says what it is ("got there at 6", "bake at 180", "pumped them to 35", "got 72"), so a passage can give
one when it holds such a figure anywhere. A number that identifies something (a phone, an account, a licence,
a boat's index number) is a long run of figures, written in groups at most ("07700 900412", "12-34-56"), or
figures among letters ("GB123456789"), or shorter after what says it is one ("membership no. 4417"): the
boat's survey, with its readings in mm and volts, cannot give its CRT index number. The rule only leaves out:
a passage stating one is not made more likely by it. English questions only ("what time frame" and "what
time period" ask for a span).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Measure:
    name: str  # as the reason names it: "states no <name>, and the question asks for one"
    asked: re.Pattern[str]
    given: re.Pattern[str]


def _measure(name: str, asked: str, given: str) -> Measure:
    return Measure(name, re.compile(asked, re.IGNORECASE), re.compile(given, re.IGNORECASE))


_FIGURE = r"\b\d[\d,.]*\s*"
# a figure after one of these is an hour, a setting or a reading ("at 6", "to 35", "around 180")
_AT = r"\b(?:at|around|about|by|from|until|till|to)\s+"
MEASURES = (
    _measure(
        "time of day",
        r"\b(?:at\s+)?what\s+time\s+(?:is|are|was|were|do|does|did|will|would|should|shall|can|of\s+day)\b"
        r"|\bwhat\s+time['’]s\b|\bwhat\s+hour\b",
        r"(?<![\d:])(?:[01]?\d|2[0-3]):[0-5]\d(?![\d:])"  # 9:30, 17:15; not a split of 60:40
        r"|\b(?:1[0-2]|0?[1-9])(?:[.:][0-5]\d)?\s*(?:am|pm|a\.m\.|p\.m\.)(?![a-z])"
        r"|\b(?:noon|midday|midnight|o['’]clock)\b|\b(?:half|quarter)\s+(?:past|to)\s+\w+|\bhalf\s+\d"
        # "got there at 6", "around 7ish", "from 9.30": an hour after its preposition; "Saturday mornings"
        rf"|{_AT}(?:1[0-2]|0?[1-9])(?:[.:][0-5]\d)?(?:ish)?\b(?!\s*(?:%|[£$€]|\d))|\b(?:morning|afternoon|evening)s?\b",
    ),
    _measure(
        "temperature",
        # not how spicy: "how hot is the chilli sauce"
        r"\bwhat\s+temp(?:erature)?s?\b"
        r"|\bhow\s+(?:hot|cold|warm)\b(?![^?.!]*\b(?:chill?ies|chill?is?|curry|curries|sauces?|salsa|peppers?|spic\w*|wings)\b)",
        # "bake at 180", "fan 160": an oven is set by a bare figure
        rf"[°º℃℉]|\bdegrees?\b|\b\d+\s*[cf]\b|\bgas\s+mark\b|(?:{_AT}|\bfan\s+)\d{{2,3}}\b",
    ),
    _measure(
        "pressure",
        # not the pressure a person is under ("what pressure was Esme under at school")
        r"(?:\bwhat\s+(?:\w+\s+){0,3}pressures?\b|\bhow\s+much\s+pressure\b)(?![^?.!]*\bunder\b)",
        # a blood pressure is written bare ("135/85"), a tire size is not one ("215/70 R 16")
        r"(?:(?<=\d)|\b)(?:psi|bar|kpa|mbar|mmhg|atm)\b|(?<![\d/])\d{2,3}\s*/\s*\d{2,3}(?![\d/])(?!\s*z?r\b)"
        rf"|{_AT}\d{{1,3}}(?:\.\d)?\b",  # "pumped them to 35"
    ),
    _measure(
        "score",
        # not a school year ("what grade is Rory in") nor a climb's grade, written "6b", "V4", "E1 5b"
        r"(?:\bwhat\s+(?:\w+\s+)?(?:score|grade|mark)s?\b(?!\s+(?:is|are|was|were)\s+\w+\s+in\b)"
        r"|\bhow\s+many\s+(?:points|marks)\b|\b(?:what|how\s+(?:well\s+)?)\s*did\s+\w+\s+score\b)"
        r"(?![^?.!]*\b(?:routes?|problems?|climbs?|boulders?|crags?|pitch(?:es)?|sends?|project)\b)",
        rf"{_FIGURE}(?:/|out\s+of)\s*\d|{_FIGURE}(?:%|points?\b|pts\b|marks?\b)"
        r"|\b(?:scored?|got|get|with)\s+(?:a\s+|an\s+)?\d"
        r"|\bgrade\s+[a-f1-9]\b"
        # a letter grade or a result ("got a B+", "got an A*", "awarded a merit"), a match ("won 3-1")
        r"|\b(?:got|gets|get|getting|scored|achieved|awarded)\s+(?:an?\s+)?(?:(?-i:[A-E])(?:\*|\+|-)?(?![\w*+-])"
        r"|merit|distinction|pass)"
        r"|\b(?:won|lost|drew|beat\s+\w+)\s+\d{1,2}\s*[-–]\s*\d{1,2}\b",
    ),
    _measure(
        "distance",
        # "how far along is the project", "how far did I get with the course" ask about progress
        # nor how far back the notes go, how far to push a deadline
        r"\bhow\s+far\b(?!\s+(?:along|back|ahead|behind|into|should|would|have|has|do|does)\b)"
        r"(?![^?.!]*\b(?:get|got|gotten)\b)|\bwhat\s+(?:is\s+|was\s+)?(?:the\s+)?distance\b",
        rf"{_FIGURE}(?:k|km|kms|kilomet(?:er|re)s?|miles?|mi|m|met(?:er|re)s?|ft|feet|foot|yards?|nm)\b",
    ),
    _measure(
        "number",
        # what people look up by its number, long enough to be written only as figures; not a house, a room, a
        # seat or a bus (a figure or two), nor a car's registration (letters around two figures)
        r"\b(?:phone|mobile|telephone|landline|index|account|licen[cs]e|policy|reference|serial|membership"
        r"|passport|tracking|order|customer|booking|confirmation|national\s+insurance|ni|nhs|vat|utr|iban"
        r"|imei|vin|chassis|frame|meter|sort)\s+(?:no\b\.?|number|num\b|code|#)"
        # "Keith's number"; not a rank ("John's number one goal")
        r"|\b\w+['’]s\s+(?:phone\s+|mobile\s+)?number\b(?!\s+(?:one|two|three|\d+)\b)",
        # five figures or more, at most a space apart, or a sort code; figures among letters, six or more;
        # shorter, written as a number ("membership no. 4417", "order #4417", "booking ref: XK4T2")
        r"(?<![\w.,])\d(?: ?\d){4,}(?![\w.,])|\b\d\d-\d\d-\d\d\b"
        r"|\b(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{6,}\b"
        r"|(?:\b(?:no\b\.?|number|num\b|ref\b\.?|reference|code)\s*[:#]?\s*|#)(?=[a-z\d-]*\d)[a-z\d][a-z\d-]{2,}\b",
    ),
    _measure(
        "weight",
        r"\bhow\s+heavy\b|\bhow\s+much\s+(?:\w+\s+){0,4}weigh(?:s|ed)?\b|\bwhat\s+(?:\w+\s+)?weight\b",
        rf"{_FIGURE}(?:kg|kilos?|kilograms?|g|grams?|lbs?|pounds?|st|stone|oz|ounces?|tonnes?|tons?)\b"
        r"|\bweigh(?:s|ed)?\s+(?:in\s+at\s+)?(?:about\s+|around\s+)?\d",
    ),
)


def measure_asked(question: str) -> Measure | None:
    """The measure a question asks for (the first of MEASURES it asks), None when it asks for none."""
    return next((measure for measure in MEASURES if measure.asked.search(question)), None)


def gives(measure: Measure, text: str) -> bool:
    return measure.given.search(text) is not None
