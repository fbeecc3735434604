"""Markdown note text -> `ParsedNote`: frontmatter, title, tags, aliases, date, headings, links, block ids.

Notes are written by people and plugins, so nothing in a note raises: anything malformed is
recorded in `ParsedNote.problems` as "kind: detail" and the note is indexed from what is left.

Line numbers follow the text as `Path.read_text()` returns it: lines end at "\\n" ("\\r\\n" and
"\\r" count as one line break too), the first line is 1.

Obsidian `%%comments%%` are hidden before parsing (whole comment lines become empty, the rest of a
comment becomes opaque filler), so nothing in them counts: no tags, links, headings or block ids.
Wikilinks are an extra markdown-it inline rule, which puts them on the same footing as Markdown
links: never inside code spans, code blocks, HTML, or escaped.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable
from functools import lru_cache
from itertools import accumulate
from typing import Any
from urllib.parse import unquote

import yaml
from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline, image, link
from markdown_it.token import Token

from backend.domain.comments import Comments, find_comments
from backend.domain.links import Link, LinkKind
from backend.domain.models import Heading, ParsedNote
from backend.domain.time_intent import parse_day

FRONTMATTER_MAX_BYTES = 64 * 1024
# Aliases make YAML a DAG: walking a "billion laughs" tree naively never ends, so conversion
# stops after this many values and the extra metadata is dropped.
METADATA_MAX_NODES = 5_000
METADATA_MAX_DEPTH = 20

_PROMOTED_KEYS = frozenset({"title", "aliases", "alias", "tags", "tag", "date", "created"})
_FENCE_OPEN = "---"
_FENCE_CLOSE = ("---", "...")
# Obsidian: a tag starts after whitespace or at a line start, and holds letters, digits, _ - /.
_INLINE_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]+)", re.MULTILINE)
_ISO_DAY = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$")
_NAME_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")
# Placeholder for inline content that must not start or end a tag (code spans, escaped "#").
_OPAQUE = "\x00"
# Stands in for each character of a comment that shares its line with visible text: not whitespace
# and not punctuation, so it neither starts a tag nor changes emphasis or link syntax around it.
_HIDDEN = "\ue000"
_NOT_NEWLINE = re.compile(r"[^\n]")
# Obsidian link paths cannot contain [ ] and never span lines; a "\|" (escaped for a table) still
# separates the path from the shown text.
_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+)\]\]")
# Anything with a URL scheme (http:, mailto:, obsidian:, file:, C:...) or a network path leaves the vault.
_EXTERNAL = re.compile(r"^(?:[A-Za-z][A-Za-z0-9+.-]*:|//)")
# Obsidian block id: "^" + letters, digits and dashes, ending the line, after a space or alone.
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)$")
_LINK_TOKENS = ("link_open", "image")


class _FrontmatterLoader(yaml.SafeLoader):
    """SafeLoader that keeps an impossible timestamp (`date: 2024-02-30`) as its text.

    Stock PyYAML raises ValueError there, which would throw away the whole frontmatter; as a string
    it becomes one `invalid_date` problem instead. Pure Python on purpose: the libyaml loader
    composes nodes recursively in C, where hostile nesting could overflow the stack instead of
    raising RecursionError.
    """

    def construct_lenient_timestamp(self, node: yaml.ScalarNode) -> Any:
        try:
            return self.construct_yaml_timestamp(node)
        except ValueError:
            return self.construct_scalar(node)

    yaml_constructors = {
        **yaml.SafeLoader.yaml_constructors,
        "tag:yaml.org,2002:timestamp": construct_lenient_timestamp,
    }


class _TooComplexError(Exception):
    pass


_DROP = object()  # marks a value with no JSON form


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # text_join off: escaped characters stay separate tokens, so "\#word" is not mistaken for a tag.
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("text_join")
    md.inline.ruler.before("link", "wikilink", _wikilink_rule)
    md.inline.ruler.at("link", _with_position(link))
    md.inline.ruler.at("image", _with_position(image))
    return md


def _wikilink_rule(state: StateInline, silent: bool) -> bool:
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


def _with_position(rule: Callable[[StateInline, bool], bool]) -> Callable[[StateInline, bool], bool]:
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


def parse_note(rel_path: str, text: str) -> ParsedNote:
    text = text.replace("\r\n", "\n").replace("\r", "\n").removeprefix("\ufeff")
    problems: list[str] = []
    frontmatter_text, body, body_start_line = _split_frontmatter(text, problems)
    front = _load_frontmatter(frontmatter_text, problems) if frontmatter_text is not None else {}
    tokens = _markdown().parse(_hide_comments(body, find_comments(body)))
    stem = _stem(rel_path)
    title = front.get("title")
    return ParsedNote(
        path=rel_path,
        title=title.strip() if isinstance(title, str) and title.strip() else stem,
        body=body,
        body_start_line=body_start_line,
        tags=_dedupe_casefold([*_frontmatter_tags(front), *_inline_tags(tokens)]),
        aliases=_dedupe_casefold(_frontmatter_aliases(front)),
        date=_note_date(front, stem, problems),
        headings=_headings(tokens, body_start_line),
        metadata=_metadata(front, problems),
        problems=tuple(problems),
        links=_links(tokens, body_start_line),
        block_ids=_block_ids(tokens),
    )


def _hide_comments(body: str, comments: Comments) -> str:
    """`body` with the same lines, and nothing of its comments left to parse."""
    if comments.is_empty:
        return body
    parts: list[str] = []
    last = 0
    for start, end in comments.spans:
        parts.append(body[last:start])
        parts.append(_NOT_NEWLINE.sub(_HIDDEN, body[start:end]))
        last = end
    parts.append(body[last:])
    lines = "".join(parts).split("\n")
    return "\n".join("" if index in comments.hidden_lines else line for index, line in enumerate(lines))


def _stem(rel_path: str) -> str:
    name = rel_path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _split_frontmatter(text: str, problems: list[str]) -> tuple[str | None, str, int]:
    """(frontmatter text or None, body, 1-based file line of the body)."""
    first_end = text.find("\n")
    first_line = text if first_end < 0 else text[:first_end]
    if first_line.rstrip() != _FENCE_OPEN:
        return None, text, 1
    lines = text.split("\n")
    for index in range(1, len(lines)):
        if lines[index].rstrip() in _FENCE_CLOSE:
            return "\n".join(lines[1:index]), "\n".join(lines[index + 1 :]), index + 2
    problems.append("frontmatter_unclosed: no closing '---' line; the whole file is read as body")
    return None, text, 1


def _load_frontmatter(source: str, problems: list[str]) -> dict[str, Any]:
    size = len(source.encode("utf-8"))
    if size > FRONTMATTER_MAX_BYTES:
        problems.append(f"frontmatter_too_large: {size} bytes (limit {FRONTMATTER_MAX_BYTES}); ignored")
        return {}
    try:
        data = yaml.load(source, Loader=_FrontmatterLoader)
    except Exception as exc:  # untrusted text: PyYAML raises YAMLError, RecursionError, ValueError...
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        problems.append(f"frontmatter_invalid_yaml: {detail[:200]}")
        return {}
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(f"frontmatter_not_mapping: got {type(data).__name__}; ignored")
        return {}
    return {str(key): value for key, value in data.items() if isinstance(key, str | int | float | bool)}


def _first_present(front: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        if front.get(key) is not None:
            return front[key]
    return None


def _frontmatter_aliases(front: dict[str, Any]) -> list[str]:
    value = _first_present(front, "aliases", "alias")
    items = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return [item.strip() for item in items if isinstance(item, str) and item.strip()]


def _frontmatter_tags(front: dict[str, Any]) -> list[str]:
    value = _first_present(front, "tags", "tag")
    if isinstance(value, str):
        items: list[Any] = re.split(r"[,\s]+", value)
    elif isinstance(value, list):
        items = value
    else:
        return []
    return [tag for tag in (_clean_tag(item) for item in items if isinstance(item, str)) if tag]


def _clean_tag(raw: str) -> str:
    tag = raw.strip().lstrip("#").strip().rstrip("/")
    # Obsidian: a tag needs at least one non-digit ("#123" is not a tag).
    return "" if tag.isdigit() else tag


def _dedupe_casefold(values: Iterable[str]) -> tuple[str, ...]:
    seen: set[str] = set()
    kept: list[str] = []
    for value in values:
        key = value.casefold()
        if value and key not in seen:
            seen.add(key)
            kept.append(value)
    return tuple(kept)


def _inline_text(token: Token) -> str:
    """The prose of an inline token with code spans and escapes made opaque to the tag pattern."""
    parts: list[str] = []
    for child in token.children or ():
        if child.type == "text":
            parts.append(child.content)
        elif child.type == "text_special":
            parts.append(_OPAQUE if child.info == "escape" and child.content == "#" else child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif child.type in ("code_inline", "html_inline", "image", "wikilink"):
            parts.append(_OPAQUE)
    return "".join(parts)


def _inline_tags(tokens: list[Token]) -> list[str]:
    # Only inline tokens carry prose: fences, indented code and HTML blocks never produce tags.
    tags: list[str] = []
    for token in tokens:
        if token.type == "inline":
            for match in _INLINE_TAG.finditer(_inline_text(token)):
                tag = _clean_tag(match.group(1))
                if tag:
                    tags.append(tag)
    return tags


def _headings(tokens: list[Token], body_start_line: int) -> tuple[Heading, ...]:
    headings: list[Heading] = []
    for index, token in enumerate(tokens):
        # Top level only: a heading inside a callout or list item is not part of the note outline.
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            inline = tokens[index + 1]
            content = inline.content.replace(_HIDDEN, "")
            text = " ".join(part.strip() for part in content.split("\n")).strip()
            headings.append(Heading(level=int(token.tag[1:]), text=text, line=token.map[0] + body_start_line))
    return tuple(headings)


def _links(tokens: list[Token], body_start_line: int) -> tuple[Link, ...]:
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


def _block_ids(tokens: list[Token]) -> tuple[str, ...]:
    found: dict[str, None] = {}  # ordered set
    for index, token in enumerate(tokens):
        # Paragraphs only (also inside lists, quotes and callouts); code and headings hold no block ids.
        if token.type == "inline" and index > 0 and tokens[index - 1].type == "paragraph_open":
            for line in token.content.split("\n"):
                match = _BLOCK_ID.search(line.rstrip())
                if match:
                    found.setdefault(match.group(1))
    return tuple(found)


def _iso_day(value: Any) -> str | None:
    """ISO day for a YAML date/datetime or a "YYYY-MM-DD..." string; None when not a valid day."""
    if isinstance(value, dt.datetime):
        return value.date().isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, str):
        match = _ISO_DAY.match(value.strip())
        if match:
            try:
                return dt.date(*(int(part) for part in match.groups())).isoformat()
            except ValueError:
                return None
        # a day written out, as chat exports and some templates do: "1:56 pm on 8 May, 2023"
        day = parse_day(value[:200])
        return day.isoformat() if day is not None else None
    return None


def _note_date(front: dict[str, Any], stem: str, problems: list[str]) -> str | None:
    for key in ("date", "created"):
        value = front.get(key)
        if value is None or value == "":
            continue
        day = _iso_day(value)
        if day is not None:
            return day
        problems.append(f"invalid_date: {key}={str(value)[:60]!r} is not a YYYY-MM-DD day")
    for match in _NAME_DAY.finditer(stem):
        day = _iso_day(match.group(0))
        if day is not None:
            return day
    return None


def _metadata(front: dict[str, Any], problems: list[str]) -> dict[str, Any]:
    budget = [METADATA_MAX_NODES]
    kept: dict[str, Any] = {}
    try:
        for key, value in front.items():
            if key not in _PROMOTED_KEYS:
                converted = _json_safe(value, budget, 0)
                if converted is not _DROP:
                    kept[key] = converted
    except _TooComplexError:
        problems.append(
            f"frontmatter_too_complex: more than {METADATA_MAX_NODES} values or "
            f"{METADATA_MAX_DEPTH} levels; metadata dropped"
        )
        return {}
    return kept


def _json_safe(value: Any, budget: list[int], depth: int) -> Any:
    """A JSON-serialisable copy of a YAML value, or `_DROP` when it has no JSON form."""
    budget[0] -= 1
    if budget[0] < 0 or depth > METADATA_MAX_DEPTH:
        raise _TooComplexError
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else _DROP
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    if isinstance(value, list | tuple | set):
        items = [_json_safe(item, budget, depth + 1) for item in value]
        kept = [item for item in items if item is not _DROP]
        # Sets have no order; sort so the same note always yields the same payload.
        return sorted(kept, key=repr) if isinstance(value, set) else kept
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if isinstance(key, str | int | float | bool | dt.date):
                converted = _json_safe(item, budget, depth + 1)
                if converted is not _DROP:
                    out[str(key)] = converted
        return out
    return _DROP
