"""A note's properties as the keyword side reads them: what the person wrote in them, not when the file was
made, its names and tags (said elsewhere), nor where it was saved from."""

from __future__ import annotations

import datetime as dt

from backend.domain.models import SparseVector
from backend.domain.notes.note_properties import property_texts
from backend.domain.text.sparse import DocumentFields, SparseEncoder


def test_what_the_person_wrote_in_properties_is_read_as_name_and_value() -> None:
    front = {
        "author": "Oliver Burkeman",
        "finished": dt.date(2024, 3, 17),
        "rating": 5,
        "attendees": ["Fiona", "[[Bernadette Kaye|Bernie]]", "[[Callum]]"],
        "practitioner": "Ailsa (physio)",
    }
    assert property_texts(front) == (
        "author Oliver Burkeman",
        "finished 2024-03-17",
        "rating 5",
        "attendees Fiona Bernie Callum",
        "practitioner Ailsa (physio)",
    )


def test_names_tags_stamps_addresses_and_layout_are_not() -> None:
    front = {
        "title": "Four Thousand Weeks",
        "aliases": ["4000 weeks"],
        "tags": ["book"],
        "date": dt.date(2024, 3, 17),
        "created": "2024-05-01",
        "date_modified": "2024-06-01",
        "updated": dt.date(2025, 1, 2),
        "source": "https://www.example.com/article",
        "cssclasses": ["wide"],
        "draft": True,
        "nested": {"a": 1},
    }
    assert property_texts(front) == ()


def _holds(vector: SparseVector, encoder: SparseEncoder, word: str) -> bool:
    return all(index in vector.indices for index in encoder.encode_query(word).indices)


def test_the_keyword_side_finds_a_note_by_its_properties() -> None:
    encoder = SparseEncoder()
    fields = DocumentFields(
        body="Read it in the run-up to Easter, when I was drowning in marking.",
        title="Four Thousand Weeks",
        properties=property_texts({"author": "Oliver Burkeman", "finished": dt.date(2024, 3, 17)}),
    )
    vector = encoder.encode_document(fields)
    assert _holds(vector, encoder, "Burkeman")
    assert _holds(vector, encoder, "finished")
    assert not _holds(encoder.encode_document(DocumentFields(body=fields.body)), encoder, "Burkeman")
