"""Filters that match nothing, said in words: a folder, tag or path no indexed note has, a date range no note
falls in, or filters that each match but never together. An empty answer then says why, with the closest
names the index does hold, instead of a bare "no results".

The rules are those of the searches and listings: a folder matches the notes under it, a tag matches in any
case and with the tags nested under it (`note_listing.has_tag`, Obsidian's rule), a path matches exactly.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from backend.domain.index.payload import folders_of
from backend.domain.links import NoteRecord
from backend.domain.models import PointFilter
from backend.domain.notes.note_listing import has_tag

CLOSE_NAMES = 3


def unmatched_filters(
    point_filter: PointFilter | None,
    records: Sequence[NoteRecord],
    *,
    answered: bool,
) -> list[str]:
    """One sentence per part of the filter that matches no indexed note, and one when the parts match only
    apart. `answered`: the search found something, so a part with a single value matched (not checked again:
    the usual search costs nothing here)."""
    if point_filter is None or point_filter.is_empty:
        return []
    folders = [f.strip().strip("/") for f in point_filter.folders]
    folders = [] if "" in folders else folders  # the vault root: no condition at all
    said: list[str] = []
    for values, has, known, what in (
        (point_filter.note_paths, _path_rule, _paths, "has the path"),
        (folders, _folder_rule, _folders, "is under the folder"),
        (point_filter.tags, has_tag, _tags, "has the tag"),
    ):
        if answered and len(values) == 1:
            continue
        for value in values:
            if not any(has(record, value) for record in records):
                said.append(f"no indexed note {what} {value!r}{_closest(value, known(records))}")
    dates = point_filter.date_from or point_filter.date_to
    if dates and not answered and not any(_dated(r, point_filter) for r in records):
        said.append(f"no indexed note is dated {_span(point_filter)}")
    if not said and not answered and _parts(point_filter) > 1:
        together = PointFilter(
            note_paths=point_filter.note_paths,
            folders=tuple(folders),
            tags=point_filter.tags,
            date_from=point_filter.date_from,
            date_to=point_filter.date_to,
        )
        if not any(_matches(r, together) for r in records):
            said.append("no indexed note matches all the filters together (each matches some notes)")
    return said


def _path_rule(record: NoteRecord, path: str) -> bool:
    return record.path == path


def _folder_rule(record: NoteRecord, folder: str) -> bool:
    return record.path.startswith(folder + "/")


def _dated(record: NoteRecord, wanted: PointFilter) -> bool:
    day = (record.date or "")[:10]
    if not day:
        return False
    return not (wanted.date_from and day < wanted.date_from) and not (wanted.date_to and day > wanted.date_to)


def _matches(record: NoteRecord, wanted: PointFilter) -> bool:
    return (
        (not wanted.note_paths or record.path in wanted.note_paths)
        and (not wanted.folders or any(_folder_rule(record, f) for f in wanted.folders))
        and (not wanted.tags or any(has_tag(record, t) for t in wanted.tags))
        and (not (wanted.date_from or wanted.date_to) or _dated(record, wanted))
    )


def _parts(wanted: PointFilter) -> int:
    return sum(bool(part) for part in (wanted.note_paths, wanted.folders, wanted.tags)) + bool(
        wanted.date_from or wanted.date_to
    )


def _span(wanted: PointFilter) -> str:
    if wanted.date_from and wanted.date_to:
        return f"between {wanted.date_from[:10]} and {wanted.date_to[:10]}"
    if wanted.date_from:
        return f"on or after {wanted.date_from[:10]}"
    return f"on or before {str(wanted.date_to)[:10]}"


def _paths(records: Sequence[NoteRecord]) -> Iterable[str]:
    return (r.path for r in records)


def _folders(records: Sequence[NoteRecord]) -> Iterable[str]:
    return {folder for r in records for folder in folders_of(r.path)}


def _tags(records: Sequence[NoteRecord]) -> Iterable[str]:
    return {tag for r in records for tag in r.tags}


def _closest(value: str, names: Iterable[str]) -> str:
    """` (did you mean 'Projects'?)`: the same name in another case first, then names spelt alike."""
    names = sorted(set(names))
    same = [name for name in names if name.casefold() == value.casefold()]
    by_folded = {name.casefold(): name for name in names}
    alike = difflib.get_close_matches(value.casefold(), list(by_folded), n=CLOSE_NAMES, cutoff=0.6)
    close = list(dict.fromkeys([*same, *(by_folded[name] for name in alike)]))[:CLOSE_NAMES]
    if not close:
        return ""
    return " (did you mean " + ", ".join(repr(name) for name in close) + "?)"
