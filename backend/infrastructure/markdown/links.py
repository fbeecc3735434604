"""Links in a note's body: the wikilink inline rule for markdown-it, and reading `Link`s off the tokens.

Wikilinks are an extra markdown-it inline rule, which puts them on the same footing as Markdown
links: never inside code spans, code blocks, HTML, or escaped. Each link and image token records
where in its inline source it starts, so a link knows its line.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from itertools import accumulate
from typing import Any
from urllib.parse import unquote

from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from backend.domain.links import Link, LinkKind

# Obsidian link paths cannot contain [ ] and never span lines; a "\|" (escaped for a table) still
# separates the path from the shown text.
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# Anything with a URL scheme (http:, mailto:, obsidian:, file:, C:...) or a network path leaves the vault.
_EXTERNAL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//)")
_LINK_TOKENS = ("link_open", "image")
_PROPERTY_DEPTH = 20  # as deep as frontmatter metadata is read


def wikilink_rule(state: StateInline, silent: bool) -> bool:
    if state.src[state.pos] not in "![":
        return False
    match = _WIKILINK.match(state.src, state.pos)
    if match is None:
        return False
    if not silent:
        token = state.push("wikilink", "", 0)
        token.content = match.group(0)
        token.meta["position"] = state.pos
    state.pos = match.end()
    return True


def with_position(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
    """`rule` that also records where in the inline source its link or image starts (for its line)."""

    def positioned(state: StateInline, silent: bool) -> bool:
        start, count = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if not silent:
            for token in state.tokens[count:]:
                if token.type in _LINK_TOKENS:
                    token.meta.setdefault("position", start)
                    break
        return True

    return positioned


def read_links(tokens: list[Token], body_start_line: int) -> tuple[Link, ...]:
    """Every in-vault link of the body, in reading order, each with its file line."""
    links: list[Link] = []
    row: list[tuple[Token, list[Link]]] | None = None  # the cells of the table row being read
    for token in tokens:
        if token.type == "tr_open":
            row = []
        elif token.type == "tr_close" and row is not None:
            links.extend(_row_links(row, body_start_line))
            row = None
        elif token.type == "inline" and token.map is not None and token.children:
            found = _inline_links(token, body_start_line)
            if row is None:
                links.extend(found)
            else:
                row.append((token, found))
    return tuple(links)


def _inline_links(token: Token, body_start_line: int) -> list[Link]:
    links: list[Link] = []
    newlines = [index for index, char in enumerate(token.content) if char == "\n"]
    first_line = body_start_line + (token.map[0] if token.map else 0)
    children = token.children or []
    for index, child in enumerate(children):
        if child.type not in ("wikilink", *_LINK_TOKENS):
            continue
        line = first_line + bisect_left(newlines, child.meta.get("position", 0))
        if child.type == "wikilink":
            found = _wikilink(child.content, line)
        elif child.type == "image":
            found = _markdown_link(child.attrGet("src"), child.content, LinkKind.EMBED, line)
        else:
            found = _markdown_link(
                child.attrGet("href"), _label(children[index + 1 :]), LinkKind.MARKDOWN, line
            )
        if found is not None:
            links.append(found)
    return links


def _row_links(cells: list[tuple[Token, list[Link]]], body_start_line: int) -> list[Link]:
    """A table row's links, plus wikilinks whose unescaped "|" the table took for a cell border.

    Obsidian wants "\\|" there, but "![[image.png|300]]" written on the line under a table (which
    makes it a table row) is common, and the link is still meant."""
    contents = [cell.content for cell, _ in cells]
    cell_ends = list(accumulate(len(content) + 1 for content in contents))
    crossing: dict[int, list[Link]] = {}
    for match in _WIKILINK.finditer("|".join(contents)):
        first, last = bisect_right(cell_ends, match.start()), bisect_right(cell_ends, match.end() - 1)
        if first == last or any("`" in content for content in contents[first : last + 1]):
            continue  # whole within a cell (already found), or maybe code
        link = _wikilink(match.group(0), body_start_line + (cells[first][0].map or (0,))[0])
        if link is not None:
            crossing.setdefault(first, []).append(link)
    links: list[Link] = []
    for index, (_, found) in enumerate(cells):
        links += found + crossing.get(index, [])
    return links


def _wikilink(source: str, line: int) -> Link | None:
    match = _WIKILINK.fullmatch(source)
    if match is None:
        return None
    path, has_text, text = match.group(2).partition("|")
    target, _, anchor = path.removesuffix("\\").partition("#")
    if not target.strip() and not anchor.strip():
        return None
    return Link(
        target=target.strip(),
        kind=LinkKind.EMBED if match.group(1) else LinkKind.WIKILINK,
        line=line,
        text=text.strip() or None if has_text else None,
        anchor=anchor.strip() or None,
    )


def _markdown_link(href: Any, text: str, kind: LinkKind, line: int) -> Link | None:
    if not isinstance(href, str) or not href or _EXTERNAL.match(href):
        return None
    path, _, anchor = href.partition("#")
    target, anchor = unquote(path).strip(), unquote(anchor).strip()
    if not target and not anchor:
        return None
    return Link(target=target, kind=kind, line=line, text=text.strip() or None, anchor=anchor or None)


def _label(children: list[Token]) -> str:
    """The text shown for a Markdown link: its children up to the closing token."""
    parts: list[str] = []
    for child in children:
        if child.type == "link_close":
            break
        if child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif child.type in ("text", "text_special", "code_inline", "wikilink", "image"):
            parts.append(child.content)
    return "".join(parts)


def frontmatter_links(front: dict[str, Any], source: str) -> tuple[Link, ...]:
    """The wikilinks written in the properties' text values (`categories: "[[People]]"`, a list of them, one
    inside a sentence), as Obsidian counts them for the graph and backlinks, each on its frontmatter line.
    `source`: the frontmatter as written, between its `---` lines (file line 2 onwards)."""
    written: list[str] = []
    _collect_wikilinks(front, written, [1000])
    if not written:
        return ()
    lines = source.split("\n")
    unseen = {index: [m.group(0) for m in _WIKILINK.finditer(line)] for index, line in enumerate(lines)}
    links: list[Link] = []
    for source_link in written:
        line = next((i for i, found in unseen.items() if source_link in found), None)
        if line is not None:
            unseen[line].remove(source_link)
        link = _wikilink(source_link, 2 + line if line is not None else 1)
        if link is not None:
            links.append(link)
    return tuple(links)


def _collect_wikilinks(value: Any, found: list[str], budget: list[int], depth: int = 0) -> None:
    # bounded in values and depth: frontmatter is untrusted, and YAML aliases can refer to themselves
    budget[0] -= 1
    if budget[0] < 0 or depth > _PROPERTY_DEPTH:
        return
    if isinstance(value, str):
        found.extend(match.group(0) for match in _WIKILINK.finditer(value))
    elif isinstance(value, dict):
        for item in value.values():
            _collect_wikilinks(item, found, budget, depth + 1)
    elif isinstance(value, list | tuple):
        for item in value:
            _collect_wikilinks(item, found, budget, depth + 1)
