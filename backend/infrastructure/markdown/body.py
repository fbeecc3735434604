"""What a note body's tokens say besides links: its headings, its inline tags and its block ids."""

from __future__ import annotations

import re

from markdown_it.token import Token

from backend.domain.models import Heading
from backend.infrastructure.markdown.tokens import HIDDEN

# Obsidian: a tag starts after whitespace or at a line start, and holds letters, digits, _ - /.
_INLINE_TAG = re.compile(r"(?:(?<=\s)|^)#([\w/-]+)", re.MULTILINE)
# Placeholder for inline content that must not start or end a tag (code spans, escaped "#").
_OPAQUE = "\x00"
# Obsidian block id: "^" + letters, digits and dashes, ending the line, after a space or alone.
_BLOCK_ID = re.compile(r"(?:^|\s)\^([A-Za-z0-9-]+)$")


def clean_tag(raw: str) -> str:
    """A tag as Obsidian names it, or "" when `raw` is none (frontmatter tags obey the same rule)."""
    tag = raw.strip().lstrip("#").strip().rstrip("/")
    # Obsidian: a tag needs at least one non-digit ("#123" is not a tag).
    return "" if tag.isdigit() else tag


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


def inline_tags(tokens: list[Token]) -> list[str]:
    # Only inline tokens carry prose: fences, indented code and HTML blocks never produce tags.
    tags: list[str] = []
    for token in tokens:
        if token.type == "inline":
            for match in _INLINE_TAG.finditer(_inline_text(token)):
                tag = clean_tag(match.group(1))
                if tag:
                    tags.append(tag)
    return tags


def headings(tokens: list[Token], body_start_line: int) -> tuple[Heading, ...]:
    found: list[Heading] = []
    for index, token in enumerate(tokens):
        # Top level only: a heading inside a callout or list item is not part of the note outline.
        if token.type == "heading_open" and token.level == 0 and token.map is not None:
            inline = tokens[index + 1]
            content = inline.content.replace(HIDDEN, "")
            text = " ".join(part.strip() for part in content.split("\n")).strip()
            found.append(Heading(level=int(token.tag[1:]), text=text, line=token.map[0] + body_start_line))
    return tuple(found)


def block_ids(tokens: list[Token]) -> tuple[str, ...]:
    found: dict[str, None] = {}  # ordered set
    for index, token in enumerate(tokens):
        # Paragraphs only (also inside lists, quotes and callouts); code and headings hold no block ids.
        if token.type == "inline" and index > 0 and tokens[index - 1].type == "paragraph_open":
            for line in token.content.split("\n"):
                match = _BLOCK_ID.search(line.rstrip())
                if match:
                    found.setdefault(match.group(1))
    return tuple(found)
