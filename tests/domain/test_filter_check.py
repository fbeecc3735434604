"""A filter that matches no indexed note is named, with the closest names the index holds; one that matches
is never mentioned; filters that match only apart are said to."""

from __future__ import annotations

from backend.domain.links import NoteRecord
from backend.domain.models import PointFilter
from backend.domain.notes.note_listing import has_tag
from backend.domain.ranking.filter_check import unmatched_filters

NOTES = [
    NoteRecord(
        path="Projects/Database migration.md", title="Database migration", tags=("work",), date="2026-03-01"
    ),
    NoteRecord(path="Recipes/Tomato rasam.md", title="Tomato rasam", tags=("recipe", "south-indian")),
    NoteRecord(path="Finance/Ledgers/Sreenivas.md", title="Sreenivas", tags=("finance/ledger",)),
]


def said(point_filter: PointFilter, *, answered: bool = False) -> list[str]:
    return unmatched_filters(point_filter, NOTES, answered=answered)


def test_filters_that_match_are_not_mentioned() -> None:
    assert said(PointFilter(folders=("Projects", "Finance/Ledgers/"), tags=("work", "recipe"))) == []
    assert said(PointFilter(folders=("Recipes", "Finance/Ledgers/"), tags=("work",))) == [
        "no indexed note matches all the filters together (each matches some notes)"
    ]
    assert said(PointFilter(folders=("Finance",), tags=("finance/ledger",))) == []
    assert said(PointFilter(folders=("/",))) == []  # the vault root: no condition
    assert said(PointFilter(date_from="2026-01-01", date_to="2026-12-31")) == []
    assert said(PointFilter()) == []


def test_an_unknown_folder_tag_or_path_is_named_with_the_closest_names() -> None:
    assert said(PointFilter(folders=("Nonexistent",))) == [
        "no indexed note is under the folder 'Nonexistent'"
    ]
    assert said(PointFilter(folders=("projects",))) == [
        "no indexed note is under the folder 'projects' (did you mean 'Projects'?)"
    ]
    assert said(PointFilter(tags=("Work", "recipes", "finance/ledgers"))) == [
        "no indexed note has the tag 'recipes' (did you mean 'recipe'?)",
        "no indexed note has the tag 'finance/ledgers' (did you mean 'finance/ledger'?)",
    ]
    assert said(PointFilter(note_paths=("Recipes/Tomato rasam",))) == [
        "no indexed note has the path 'Recipes/Tomato rasam' (did you mean 'Recipes/Tomato rasam.md'?)"
    ]
    assert said(PointFilter(date_from="2030-01-01")) == ["no indexed note is dated on or after 2030-01-01"]


def test_with_results_only_the_unknown_value_among_several_is_named() -> None:
    # one folder and results: it matched, nothing to scan; two tags and results: one of them may not exist
    assert said(PointFilter(folders=("Projects",)), answered=True) == []
    assert said(PointFilter(tags=("work", "wrok")), answered=True) == [
        "no indexed note has the tag 'wrok' (did you mean 'work'?)"
    ]


def test_a_tag_is_found_in_any_case_and_with_its_nested_tags_as_obsidian_finds_it() -> None:
    assert said(PointFilter(tags=("Finance",))) == []  # finance/ledger
    assert said(PointFilter(tags=("#FINANCE/Ledger", "WORK"))) == []
    assert said(PointFilter(tags=("Fin",))) == ["no indexed note has the tag 'Fin'"]  # a prefix is no tag
    assert [r.path for r in NOTES if has_tag(r, "finance")] == ["Finance/Ledgers/Sreenivas.md"]
