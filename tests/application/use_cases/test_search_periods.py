"""A question naming a period (a season, a holiday, a quarter) on a small vault of its own: the notes of the
period come first, undated notes below them and notes that say they are of other times lower still, a note
partly of the period gets part of the boost, and a chunk's period comes from the days it writes out, then its
note's date, its file name's week or month, or its folder — never from `created:`; a note dated only by its
`date:` property keeps its score for a question about another time."""

from __future__ import annotations

import datetime as dt

import pytest

from backend.application.search.ranking import OTHER_TIME, WRITES_ITS_YEAR, boosted, time_factor
from backend.application.search.service import SearchOptions
from backend.domain.models import ScoredPoint
from backend.domain.periods.question_time import find_time_span
from tests.fakes import FakeEmbedder, FakeHandles, wire

TODAY = dt.date(2025, 11, 15)

VAULT = {
    # undated, and the best match for the words: the whole log
    "Areas/Climbing log.md": "# Climbing log\n\nAutumn is the season for climbing at the crag: climbing at "
    "the crag every autumn.\n",
    # another period, a good match
    "Journal/2025/2025-03-08.md": "Climbing at the crag, it felt like autumn. Climbing again at the crag.\n",
    # autumn 2024: a day from the file name, a week note, a note dated by its frontmatter
    "Journal/2024/2024-10-12.md": "Went climbing at the crag with Lyd.\n",
    "Journal/2024/2024-W45.md": "- Mon: marking\n- Thu: climbing at the crag, slab\n",
    "Trips/Font.md": "---\ndates: 2024-10-26 to 2024-11-02\n---\n# Font\n\nA week of climbing at the crag "
    "in the forest.\n",
    # dated by its folder only: of all 2024, so partly of its autumn
    "Journal/2024/fear.md": "Thinking about fear and climbing at the crag.\n",
    "Resources/Dal.md": "# Red lentil dal\n\nLentils, onion, cumin.\n",
}


@pytest.fixture
def handles() -> FakeHandles:
    return wire(VAULT, embedder=FakeEmbedder(spread=True), options=SearchOptions(today=lambda: TODAY))


def notes(handles: FakeHandles, question: str) -> list[str]:
    hits = handles.search.search(question, top_k=10).hits
    return list(dict.fromkeys(str(h.payload["note_path"]) for h in hits))


def test_a_season_puts_its_notes_first_and_the_undated_and_other_times_below(handles: FakeHandles) -> None:
    question = "climbing at the crag in autumn 2024"
    flat = wire(VAULT, embedder=FakeEmbedder(spread=True), options=SearchOptions(time_boost=0.0))
    # by the words alone, the undated log and a note of another spring lead
    assert notes(flat, question)[:2] == ["Areas/Climbing log.md", "Journal/2025/2025-03-08.md"]

    ranked = notes(handles, question)

    # a day of the season (its file name), a week of it (a week note) and the trip its `dates:` property puts
    # in it (written there, "2024" is a word the question shares) first, the undated log next, and the note
    # of another time below the trip of the season it matched twice as well as
    assert ranked[:5] == [
        "Journal/2024/2024-10-12.md",
        "Journal/2024/2024-W45.md",
        "Trips/Font.md",
        "Areas/Climbing log.md",
        "Journal/2025/2025-03-08.md",
    ]
    span = handles.search.search(question).time_intent
    assert span is not None
    assert (span.text, span.granularity) == ("autumn 2024", "season")


def test_a_note_of_the_whole_year_gets_the_share_of_its_days_in_the_season(handles: FakeHandles) -> None:
    question = "fear and climbing at the crag in autumn 2024"
    flat = wire(VAULT, embedder=FakeEmbedder(spread=True), options=SearchOptions(time_boost=0.0))

    def score(h: FakeHandles) -> float:
        hits = h.search.search(question, top_k=10).hits
        return next(hit.score for hit in hits if hit.payload["note_path"] == "Journal/2024/fear.md")

    # 91 days of autumn 2024 in the 366 of 2024 the folder dates the note by
    assert score(handles) == pytest.approx(score(flat) * (1 + 91 / 366))


def test_this_year_is_the_pinned_days_year() -> None:
    question = "climbing at the crag this year"

    def scores(options: SearchOptions) -> dict[str, float]:
        handles = wire(VAULT, embedder=FakeEmbedder(spread=True), options=options)
        return {str(h.payload["note_path"]): h.score for h in handles.search.search(question, top_k=10).hits}

    plain = scores(SearchOptions(time_boost=0.0))
    now = scores(SearchOptions(today=lambda: TODAY))
    then = scores(SearchOptions(today=lambda: dt.date(2024, 12, 1)))

    spring_2025, font_2024, log = "Journal/2025/2025-03-08.md", "Trips/Font.md", "Areas/Climbing log.md"
    assert now[spring_2025] == pytest.approx(2 * plain[spring_2025])
    assert now[font_2024] == pytest.approx(plain[font_2024] / 2)
    assert then[spring_2025] == pytest.approx(plain[spring_2025] / 2)
    assert then[font_2024] == pytest.approx(2 * plain[font_2024])
    assert now[log] == pytest.approx(plain[log])  # undated: of no year, and of no other year either
    assert then[log] == pytest.approx(plain[log])


def test_an_index_written_before_periods_were_stored_goes_by_the_date() -> None:
    span = find_time_span("in autumn 2024", TODAY)
    assert span is not None
    old = ScoredPoint(id="a", score=0.5, payload={"note_path": "n.md", "date": "2024-10-12"})
    elsewhen = ScoredPoint(id="b", score=0.5, payload={"note_path": "m.md", "date": "2025-10-12"})
    undated = ScoredPoint(id="c", score=0.5, payload={"note_path": "u.md", "date": None})

    assert boosted(old, span, 1.0).score == pytest.approx(1.0)
    assert boosted(elsewhen, span, 1.0).score == pytest.approx(0.25)
    assert boosted(undated, span, 1.0).score == pytest.approx(0.5)


def test_a_chunk_is_of_the_days_it_writes_not_of_when_its_note_was_made() -> None:
    """A project note made in February (`created:`, as templates write it) logs a decision taken in March: its
    decision section is of March, and a question about March finds it above March's journal days that only
    share a word with the question."""
    vault = {
        "Projects/Database migration.md": "---\ncreated: 2026-02-10\n---\n# Database migration\n\n"
        "## Options\n\nPostgres or staying on MySQL for the database.\n\n## Decision\n\n"
        "Decided at the 2026-03-12 kickoff: move the database to Postgres.\n",
        "Journal/2026/2026-03-14.md": "Finished the chapter about deciding in advance what to fail at.\n",
        "Journal/2026/2026-03-09.md": "Bought a keyboard at midnight; must decide by the 23rd.\n",
    }
    handles = wire(vault, embedder=FakeEmbedder(spread=True), options=SearchOptions(today=lambda: TODAY))
    question = "What did I decide in March 2026 about the database?"
    hits = handles.search.search(question, top_k=10).hits
    assert (hits[0].payload["note_path"], hits[0].payload["heading_context"]) == (
        "Projects/Database migration.md",
        "Database migration > Decision",
    )
    periods = {str(h.payload["heading_context"]): h.payload["periods"] for h in hits}
    assert periods["Database migration > Decision"] == ["2026-03-12"]
    assert periods["Database migration > Options"] == []  # `created:` says when the file was made


def with_and_without_the_period(
    vault: dict[str, str], question: str
) -> tuple[dict[str, float], dict[str, float]]:
    """Each note's score for `question` without the period rule, then with it (today pinned)."""

    def scores(options: SearchOptions) -> dict[str, float]:
        handles = wire(vault, embedder=FakeEmbedder(spread=True), options=options)
        return {
            str(hit.payload["note_path"]): hit.score for hit in handles.search.search(question, top_k=10).hits
        }

    return scores(SearchOptions(time_boost=0.0)), scores(SearchOptions(today=lambda: TODAY))


def test_a_year_a_name_only_mentions_raises_the_note_but_never_lowers_it() -> None:
    """A note named by its first words ("In 2010 the drought hit the forest") mentions 2010: a question about
    2010 prefers it, one about 2014 leaves it as it scored, where a journal day of another time (named by
    its day) is lowered."""
    vault = {
        "In 2010 the drought hit the forest hard.md": "The drought dried the forest and its rivers.\n",
        "Journal/2013-06-02.md": "The drought in the forest, seen from the rivers.\n",
        "Resources/Dal.md": "# Red lentil dal\n\nLentils, onion, cumin.\n",  # the bottom of the list, at 0
    }
    named, day = "In 2010 the drought hit the forest hard.md", "Journal/2013-06-02.md"
    plain, later = with_and_without_the_period(vault, "the drought in the forest in 2014")
    assert plain[named] > 0
    assert later[named] == pytest.approx(plain[named])
    assert later[day] == pytest.approx(plain[day] / 2)
    plain, then = with_and_without_the_period(vault, "the drought in the forest in 2010")
    assert then[named] == pytest.approx(2 * plain[named])


ALICE = "People/Alice.md"
FOUNDED, FLOODED, DAY_OF_1993 = (
    "The university was founded.md",
    "The river flooded.md",
    "Journal/1993-01-05.md",
)
POLYTECHNIC = {
    # `created:`, as templates leave it, says when the file was made: no time the note states
    FOUNDED: "---\ncreated: 2023-05-02\n---\nThe university was founded on 1 August 1963. In 1992 the "
    "polytechnic beside it became a university too.\n",
    FLOODED: "When did the polytechnic become a university? The river flooded it on 3 March 1963.\n",
    # a journal day of its own (its name): of that day, whatever year it writes
    DAY_OF_1993: "The polytechnic that became a university in 1992 held its first exams.\n",
    # a property's day (her birthday) is what the note holds, not the time it is of
    ALICE: "---\nbirthday: 1940-01-02\n---\nAlice taught at the polytechnic from 3 March 1963; in 1992 she "
    "saw it become a university.\n",
    "Resources/Dal.md": "# Red lentil dal\n\nLentils, onion, cumin.\n",
    "Resources/Bread.md": "# Bread\n\nFlour, water, salt, yeast.\n",  # the bottom of the list, at 0
}


@pytest.mark.parametrize(
    ("asked", "factors"),
    [
        ("1992", {FOUNDED: 1.0, FLOODED: 0.5, DAY_OF_1993: 0.5, ALICE: 1.0}),
        ("1963", {FOUNDED: 2.0}),
        # a year written says nothing of a month of it: asked about December 1992, its day of 1963 counts
        ("December 1992", {FOUNDED: 0.5, ALICE: 0.5}),
    ],
)
def test_a_chunk_writing_the_year_asked_keeps_its_score_whatever_other_days_it_writes(
    asked: str, factors: dict[str, float]
) -> None:
    """A paragraph telling of a university founded on 1 August 1963 that says what happened in 1992 speaks of
    1992: asked about 1992 it keeps its score, where a paragraph writing only a day of 1963 is lowered, and a
    journal day of 1993 writing 1992 too (a note of its own day is of that day); asked about 1963 it is raised
    as before, and about a month of 1992 lowered as before."""
    question = f"when did the polytechnic become a university in {asked}"
    plain, ruled = with_and_without_the_period(POLYTECHNIC, question)
    for note, factor in factors.items():
        assert plain[note] > 0
        assert ruled[note] == pytest.approx(factor * plain[note]), note


def test_the_last_couple_of_weeks_are_the_days_up_to_today() -> None:
    """ "What have I been up to over the last couple of weeks?" is answered by the journal days of the
    fourteen days up to today (pinned), above a better-matching day of a month ago."""
    vault = {
        "Journal/2025-10-12.md": "Been up to marking these weeks.\n",
        "Journal/2025-11-03.md": "Up to the allotment, then the bees.\n",
        "Journal/2025-11-14.md": "Been up to the boat to fix the stove.\n",
        "Resources/Dal.md": "# Red lentil dal\n\nLentils, onion, cumin.\n",
    }
    question = "what have I been up to over the last couple of weeks?"
    flat = wire(vault, embedder=FakeEmbedder(spread=True), options=SearchOptions(time_boost=0.0))
    assert notes(flat, question)[0] == "Journal/2025-10-12.md"

    handles = wire(vault, embedder=FakeEmbedder(spread=True), options=SearchOptions(today=lambda: TODAY))

    assert notes(handles, question)[:2] == ["Journal/2025-11-14.md", "Journal/2025-10-12.md"]
    span = handles.search.search(question).time_intent
    assert span is not None
    assert (span.start, span.end) == (dt.date(2025, 11, 2), TODAY)


@pytest.mark.parametrize(
    ("question", "narrowed"),
    [
        ("climbing at the crag in autumn 2024", True),  # notes of the period that speak to it
        ("climbing at the crag in autumn 2019", False),  # no note of that period
        ("climbing at the crag last autumn", False),  # autumn 2024 too, but read against today
        ("climbing at the crag", False),  # no period
    ],
)
def test_a_vault_narrows_to_a_period_only_with_notes_of_it_that_speak_to_the_question(
    handles: FakeHandles, question: str, narrowed: bool
) -> None:
    # beside another vault, one that narrows answers first (vault_merge.merged_by_confidence)
    assert handles.search.search(question, top_k=10).narrowed.kinds == int(narrowed)


def test_an_index_built_before_notes_recorded_their_own_time_goes_by_the_note_s_date() -> None:
    span = find_time_span("in 1992", TODAY)
    assert span is not None
    text = "Founded on 1 August 1963. In 1992 it became a university."
    paragraph = {"periods": ["1963-08-01"], "period_stated": True, "content": text, "date": None}
    day = {**paragraph, "date": "1963-08-01"}
    assert time_factor(paragraph, span, 1.0) == (1.0, WRITES_ITS_YEAR)
    assert time_factor(day, span, 1.0) == (0.5, OTHER_TIME)
