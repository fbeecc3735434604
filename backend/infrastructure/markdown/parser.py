"""Markdown note text -> `ParsedNote`: frontmatter, title, tags, aliases, date, headings, links, block ids.

Notes are written by people and plugins, so nothing in a note raises: anything malformed is
recorded in `ParsedNote.problems` as "kind: detail" and the note is indexed from what is left.

Line numbers follow the text as `Path.read_text()` returns it: lines end at "\\n" ("\\r\\n" and
"\\r" count as one line break too), the first line is 1.

This module puts the note together; the parts are read where their rules live: the frontmatter in
`frontmatter`, the body's tokens (comments hidden) in `tokens`, links in
`links`, and headings, inline tags and block ids in `body`.
"""

from __future__ import annotations

from collections.abc import Iterable

from backend.domain.models import ParsedNote
from backend.domain.notes.line_ranges import as_indexed
from backend.infrastructure.markdown.body import block_ids, headings, inline_tags
from backend.infrastructure.markdown.frontmatter import (
    frontmatter_aliases,
    frontmatter_tags,
    load_frontmatter,
    metadata,
    note_date,
    note_periods,
    split_frontmatter,
)
from backend.infrastructure.markdown.links import frontmatter_links, read_links
from backend.infrastructure.markdown.tokens import body_tokens


def parse_note(rel_path: str, text: str) -> ParsedNote:
    text = as_indexed(text)
    problems: list[str] = []
    frontmatter_text, body, body_start_line = split_frontmatter(text, problems)
    front = load_frontmatter(frontmatter_text, problems) if frontmatter_text is not None else {}
    tokens = body_tokens(body)
    stem = _stem(rel_path)
    title = front.get("title")
    inline = _dedupe_casefold(inline_tags(tokens))
    periods = note_periods(front, stem, rel_path.rpartition("/")[0])
    return ParsedNote(
        path=rel_path,
        # a Templater command left as the title (`title: <% tp.file.title %>`) names nothing: the file does
        title=title.strip() if isinstance(title, str) and title.strip() and "<%" not in title else stem,
        body=body,
        body_start_line=body_start_line,
        tags=_dedupe_casefold([*frontmatter_tags(front), *inline]),
        inline_tags=inline,
        aliases=_dedupe_casefold(frontmatter_aliases(front)),
        date=note_date(front, stem, problems),
        periods=periods.periods,
        stated_periods=periods.stated,
        own_time=periods.own_time,
        headings=headings(tokens, body_start_line),
        metadata=metadata(front, problems),
        problems=tuple(problems),
        links=(*frontmatter_links(front, frontmatter_text or ""), *read_links(tokens, body_start_line)),
        block_ids=block_ids(tokens),
    )


def _stem(rel_path: str) -> str:
    name = rel_path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _dedupe_casefold(values: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        key = value.casefold()
        if value and key not in seen:
            seen.add(key)
            kept.append(value)
    return tuple(kept)
