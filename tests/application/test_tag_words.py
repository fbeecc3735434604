"""Tags are words too: a question in plain words finds the notes tagged with them, however the tag is
written, and an acronym tag by the expansion the vault itself gives. Real files, the embedded store, the
fake embedder (bag of words: a note's embedded text must hold the question's words to be near it)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from backend.domain.models import SearchMode
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness
from tests.vault_files import write, write_notes

# Each note is tagged one way and none says "mental" or "health" in its text.
TAGGED = {
    "Journal/run-together.md": "Cried in the car after work. #mentalhealth\n",
    "Journal/camel.md": "---\ntags: [MentalHealth]\n---\nLong walk by the river to clear my head.\n",
    "Journal/hyphen.md": "Skipped the staff party, stayed in. #mental-health\n",
    "Journal/underscore.md": "---\ntags: [mental_health]\n---\nTherapy session moved to Thursday.\n",
    "Journal/nested.md": "Started the journalling habit again. #health/mental\n",
    "Journal/sections.md": (
        "# Sunday\n\n## Morning\n\nLong walk by the river. #MentalHealth\n\n"
        "## Evening\n\nCooked dal and read a novel.\n"
    ),
}
OTHERS = {
    "Recipes/Dal.md": "# Dal\n\nRed lentils, cumin, a tin of tomatoes. #cooking\n",
    "Boat/Engine.md": "---\ntags: [boat]\n---\nThe engine needs a new impeller before spring.\n",
    "Work/Database.md": "The database is slow on Mondays; the index needs a rebuild. #work\n",
}


def _paths(harness: Harness, query: str, mode: SearchMode, top_k: int = 10) -> list[str]:
    hits = harness.search.search(query, top_k=top_k, mode=mode).hits
    return list(dict.fromkeys(str(hit.payload["note_path"]) for hit in hits))


@pytest.fixture
def tagged(tmp_path: Path, make_harness: Callable[..., Harness]) -> Harness:
    vault = write_notes(tmp_path / "vault", {**TAGGED, **OTHERS})
    harness = make_harness(vault, FakeEmbedder(), keyword_first_min=1000)
    harness.index.open()
    harness.indexer.sync()
    return harness


def test_every_way_of_writing_a_tag_is_found_by_its_words_on_the_keyword_side(tagged: Harness) -> None:
    found = _paths(tagged, "mental health", SearchMode.KEYWORD)
    assert sorted(found) == sorted(TAGGED)  # each form, and nothing else


def test_a_note_found_by_its_tag_holds_the_question_s_words_for_its_confidence(tagged: Harness) -> None:
    outcome = tagged.search.search("mental health", top_k=10, mode=SearchMode.KEYWORD)
    shown = {
        str(hit.payload["note_path"]): seen for hit, seen in zip(outcome.hits, outcome.evidence, strict=True)
    }
    # "#mentalhealth" holds both words of the question, as "#mental-health" does
    assert (shown["Journal/run-together.md"].covered, shown["Journal/run-together.md"].query_terms) == (2, 2)
    assert shown["Journal/hyphen.md"].covered == 2


def test_a_question_that_writes_the_tag_finds_every_form_of_it(tagged: Harness) -> None:
    found = _paths(tagged, "#MentalHealth", SearchMode.KEYWORD)
    assert set(TAGGED) - {"Journal/nested.md"} <= set(found)  # nested: a tag "mental" under "health"


def test_a_tag_written_in_a_note_joins_every_chunk_s_embedded_text_as_words(tagged: Harness) -> None:
    # dense only: the evening's text is dal and a novel; the note's #MentalHealth says "Mental Health"
    hits = tagged.search.search("mental health", top_k=20, mode=SearchMode.DENSE).hits
    ranked = [(str(hit.payload["note_path"]), tuple(hit.payload["heading_path"])) for hit in hits]
    evening = ranked.index(("Journal/sections.md", ("Sunday", "Evening")))
    unrelated = {*OTHERS, "Journal/run-together.md"}  # its text says "mentalhealth", not the two words
    assert all(evening < i for i, (path, _) in enumerate(ranked) if path in unrelated)


def test_words_joined_in_a_question_meet_tags_only_never_a_word_of_the_text(tagged: Harness) -> None:
    # "data base" joined is "database": a tag could be written so, the text's word is not a tag
    assert _paths(tagged, "data base", SearchMode.KEYWORD) == []
    assert _paths(tagged, "the new impeller", SearchMode.KEYWORD) == ["Boat/Engine.md"]


ACRONYM = {
    "Health/GP visit.md": "Dr Patel thinks it is generalised anxiety disorder (GAD). Sertraline, 50 mg.\n",
    "Journal/2025-02-12.md": "Bad night again, heart racing at 3am. #GAD\n",
    "Journal/2025-02-13.md": "Quiet day at the allotment, the bees were out. #bees\n",
}


@pytest.fixture
def acronym_vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", ACRONYM)


def test_an_acronym_tag_is_found_by_the_expansion_a_note_gives_and_follows_edits(
    acronym_vault: Path, make_harness: Callable[..., Harness]
) -> None:
    harness = make_harness(acronym_vault, FakeEmbedder(), keyword_first_min=1000)
    harness.index.open()
    harness.indexer.sync()
    question = "generalised anxiety disorder"
    assert "Journal/2025-02-12.md" in _paths(harness, question, SearchMode.KEYWORD)
    assert "Journal/2025-02-13.md" not in _paths(harness, question, SearchMode.KEYWORD)

    # the definition is edited away: the tag is only "GAD" again
    write(acronym_vault, "Health/GP visit.md", "Dr Patel thinks it is anxiety. Sertraline, 50 mg.\n")
    harness.indexer.refresh(["Health/GP visit.md"])
    assert "Journal/2025-02-12.md" not in _paths(harness, question, SearchMode.KEYWORD)

    # another note defines it, the other way round
    write(acronym_vault, "Health/Glossary.md", "GAD (generalised anxiety disorder): worry most days.\n")
    harness.indexer.refresh(["Health/Glossary.md"])
    assert "Journal/2025-02-12.md" in _paths(harness, question, SearchMode.KEYWORD)

    # and is deleted
    (acronym_vault / "Health/Glossary.md").unlink()
    harness.indexer.refresh(["Health/Glossary.md"])
    assert "Journal/2025-02-12.md" not in _paths(harness, question, SearchMode.KEYWORD)


def test_a_question_saying_the_acronym_also_finds_the_words_it_stands_for(
    acronym_vault: Path, make_harness: Callable[..., Harness]
) -> None:
    """The other way round: "GAD" in a question asks for the expansion the vault gives it too, so a note
    that writes the words out (and never the acronym) is found; an acronym the vault does not define is just
    a word."""
    write(acronym_vault, "Health/Leaflet.md", "The leaflet on generalised anxiety disorder helped a bit.\n")
    write(acronym_vault, "Boat/Locks.md", "Worked the locks at Tinsley; the flight took all afternoon.\n")
    harness = make_harness(acronym_vault, FakeEmbedder(), keyword_first_min=1000)
    harness.index.open()
    harness.indexer.sync()
    assert "Health/Leaflet.md" in _paths(harness, "how is my GAD", SearchMode.KEYWORD)
    assert "Health/Leaflet.md" not in _paths(harness, "how is my PTSD", SearchMode.KEYWORD)

    write(acronym_vault, "Health/GP visit.md", "Dr Patel thinks it is anxiety. Sertraline, 50 mg.\n")
    harness.indexer.refresh(["Health/GP visit.md"])  # no note defines GAD any more
    assert "Health/Leaflet.md" not in _paths(harness, "how is my GAD", SearchMode.KEYWORD)


def test_acronym_definitions_survive_a_restart(
    acronym_vault: Path, make_harness: Callable[..., Harness], tmp_path: Path
) -> None:
    first = make_harness(acronym_vault, FakeEmbedder(), keyword_first_min=1000, data=tmp_path / "d")
    first.index.open()
    first.indexer.sync()
    first.close()
    again = make_harness(acronym_vault, FakeEmbedder(), keyword_first_min=1000, data=tmp_path / "d")
    again.index.open()  # the notes are read back from the index, not from the vault
    assert "Journal/2025-02-12.md" in _paths(again, "generalised anxiety disorder", SearchMode.KEYWORD)
