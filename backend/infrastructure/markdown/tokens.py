"""A note body -> markdown-it tokens: the parser configured as Obsidian reads notes, and comment hiding.

Obsidian `%%comments%%` are hidden before parsing (whole comment lines become empty, the rest of a
comment becomes opaque filler), so nothing in them counts: no tags, links, headings or block ids. The
lines stay where they were, so every token still maps to its line in the file.
"""

from __future__ import annotations

import re
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.rules_inline import image, link
from markdown_it.token import Token

from backend.domain.notes.comments import Comments, find_comments
from backend.infrastructure.markdown.links import wikilink_rule, with_position

# Stands in for each character of a comment that shares its line with visible text: not whitespace
# and not punctuation, so it neither starts a tag nor changes emphasis or link syntax around it.
HIDDEN = "\ue000"
_NOT_NEWLINE = re.compile(r"[^\n]")


def body_tokens(body: str) -> list[Token]:
    """The block and inline tokens of `body`, with its comments hidden."""
    return _markdown().parse(_hide_comments(body, find_comments(body)))


@lru_cache(maxsize=1)
def _markdown() -> MarkdownIt:
    # text_join off: escaped characters stay separate tokens, so "\#word" is not mistaken for a tag.
    md = MarkdownIt("commonmark").enable(["table", "strikethrough"]).disable("text_join")
    md.inline.ruler.before("link", "wikilink", wikilink_rule)
    md.inline.ruler.at("link", with_position(link))
    md.inline.ruler.at("image", with_position(image))
    return md


def _hide_comments(body: str, comments: Comments) -> str:
    """`body` with the same lines, and nothing of its comments left to parse."""
    if comments.is_empty:
        return body
    parts: list[str] = []
    last = 0
    for start, end in comments.spans:
        parts.append(body[last:start])
        parts.append(_NOT_NEWLINE.sub(HIDDEN, body[start:end]))
        last = end
    parts.append(body[last:])
    lines = "".join(parts).split("\n")
    return "\n".join("" if index in comments.hidden_lines else line for index, line in enumerate(lines))
