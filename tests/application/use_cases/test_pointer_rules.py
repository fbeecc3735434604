"""Pointers lead to what they point at (application/search/service.py `_follow_pointers`, on the fakes): a
list of note links whose line describes a note in the question's words puts that note first and itself right
after, brings the note in when it was not a candidate, stays where it is when the link leads nowhere, and
recall quotes the note, not the list."""

from __future__ import annotations

from backend.application.recall.context import ContextQuery
from backend.application.search.service import SearchOptions
from backend.domain.models import ScoredPoint
from tests.fakes import FakeEmbedder, FakeHandles, wire

# named like any note: a pointer is known by its lines' shape, never by a name like "MOC" or "Home"
MAP = "Around the house.md"
MAP_TEXT = (
    "# Around the house\n\n"
    "- [[Boiler service]] — why the heating kept cutting out\n"
    "- [[Garden shed]] — the roof felt and the new door\n"
    "- [[Bike repairs]] — gears, brakes and the squeaky chain\n"
    "- [[Window cleaner]] — comes fortnightly on Tuesdays\n"
)
NOTES = {
    MAP: MAP_TEXT,
    # its own words share none with the question: only the map's line says what it is about
    "House/Boiler service.md": (
        "# Boiler service\n\nThe engineer found a faulty pressure valve on the combi and replaced it in "
        "January for £180.\n"
    ),
    "House/Garden shed.md": "# Garden shed\n\nNew roof felt, and a door from the reclamation yard.\n",
    "House/Bike repairs.md": "# Bike repairs\n\nNew brake pads and a chain; the gears indexed again.\n",
    "Journal/2025-01-04.md": "# Saturday\n\nCold house, the heating again. Read by the fire.\n",
    "Journal/2025-01-11.md": "# Saturday\n\nSwam in the morning. Heating fine all week.\n",
}
QUESTION = "why did the heating keep cutting out?"


def hits(handles: FakeHandles, query: str, **options: object) -> list[ScoredPoint]:
    return handles.search.search(query, **options).hits  # type: ignore[arg-type]


def paths(found: list[ScoredPoint]) -> list[str]:
    return [hit.payload["note_path"] for hit in found]


def test_a_question_in_a_map_line_s_words_puts_the_note_it_describes_first_and_the_map_after_it() -> None:
    handles = wire(NOTES, embedder=FakeEmbedder(spread=True))
    found = hits(handles, QUESTION, top_k=len(NOTES))
    assert paths(found)[0] == "House/Boiler service.md"
    assert MAP in paths(found)[1:]  # after the note (and, a hub, after the other notes it lists)
    assert found[0].via is not None
    assert found[0].via.payload["note_path"] == MAP  # the way it was found
    assert [hit.score for hit in found] == sorted((hit.score for hit in found), reverse=True)
    # without the line, the map and the journal that share the question's words rank above the note
    plain = wire({**NOTES, MAP: MAP_TEXT.replace(" — why the heating kept cutting out", "")}, embedder=None)
    assert paths(hits(plain, QUESTION, top_k=4))[0] != "House/Boiler service.md"


def test_a_described_note_that_is_not_among_the_candidates_is_brought_in() -> None:
    # more notes on the question's words than the store is asked for: the boiler note is not a candidate
    crowd = {f"Journal/2024-12-{day:02d}.md": f"# Day {day}\n\nThe heating was on.\n" for day in range(1, 9)}
    options = SearchOptions(prefetch_limit=4)
    handles = wire({**NOTES, **crowd}, embedder=FakeEmbedder(spread=True), options=options)
    assert "House/Boiler service.md" not in paths(hits(handles, "the heating", top_k=4))
    found = hits(handles, QUESTION, top_k=3)
    assert paths(found)[0] == "House/Boiler service.md"
    assert found[0].via is not None


def test_a_line_linking_to_a_note_not_created_yet_leaves_the_list_where_it_stands() -> None:
    reading = {
        "Reading list.md": (
            "# Reading list\n\n- [[Four Thousand Weeks]] — on finitude and the weeks we are given\n"
            "- [[Deep Work]] — focus without distraction\n- [[Burnout]] — the stress cycle\n"
        ),
        "Journal/2025-02-01.md": "# Saturday\n\nLibrary with the kids, then pancakes.\n",
    }
    question = "that book about finitude and our weeks"
    missing = hits(wire(reading, embedder=FakeEmbedder(spread=True)), question, top_k=2)
    assert paths(missing)[0] == "Reading list.md"
    assert all(hit.via is None for hit in missing)
    book = {"Books/Four Thousand Weeks.md": "# Four Thousand Weeks\n\nOliver Burkeman. Time management.\n"}
    created = hits(wire({**reading, **book}, embedder=FakeEmbedder(spread=True)), question, top_k=2)
    assert paths(created) == ["Books/Four Thousand Weeks.md", "Reading list.md"]


def test_recall_quotes_the_described_note_and_not_the_map_that_led_to_it() -> None:
    handles = wire(NOTES, embedder=FakeEmbedder(spread=True))
    result = handles.context.build(ContextQuery(QUESTION, max_chunks=3))
    quoted = [source.passage.passage.path for source in result.sources]
    assert quoted[0] == "House/Boiler service.md"
    assert MAP not in quoted
    assert "faulty pressure valve" in result.block
    first = result.sources[0].result
    assert first is not None
    assert first.pointed_from is not None
    assert first.pointed_from.note_path == MAP
    # the line that vouches for the note counts for it: at least as likely relevant as the map itself
    found = hits(handles, QUESTION, top_k=len(NOTES))
    pointer = found[paths(found).index(MAP)]
    assert (found[0].confidence or 0.0) >= (pointer.confidence or 0.0) > 0.0
