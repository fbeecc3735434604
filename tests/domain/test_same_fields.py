"""`from_same_fields`: a value made of another's fields of the same names, the rest given."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel

from backend.domain.links import Link, LinkKind, LinkRecord
from backend.domain.models import from_same_fields


@dataclass(frozen=True)
class Asked:
    query: str
    top_k: int

    def point_filter(self) -> str:
        return "a method, never a field's value"


@dataclass(frozen=True)
class Query:
    query: str
    top_k: int = 5
    point_filter: str | None = None


class Shown(BaseModel):
    query: str
    top_k: int


def test_the_fields_both_declare_are_carried_and_what_is_given_wins() -> None:
    assert from_same_fields(Query, Asked("tomatoes", 3)) == Query("tomatoes", 3)
    assert from_same_fields(Query, Asked("tomatoes", 3), top_k=10) == Query("tomatoes", 10)
    assert from_same_fields(Shown, Asked("tomatoes", 3)) == Shown(query="tomatoes", top_k=3)
    assert from_same_fields(Asked, Shown(query="tomatoes", top_k=3)) == Asked("tomatoes", 3)


def test_a_method_named_like_a_field_is_not_taken_for_its_value() -> None:
    assert from_same_fields(Query, Asked("tomatoes", 3)).point_filter is None


def test_a_field_named_like_the_helpers_own_arguments_is_given_as_any_other() -> None:
    link = Link("Note", LinkKind.WIKILINK, 3, text="t")
    record = from_same_fields(
        LinkRecord, link, source="a.md", position=0, resolved_path=None, is_attachment=False
    )
    assert record == LinkRecord("a.md", 0, "Note", LinkKind.WIKILINK, 3, "t", None, None, False)
