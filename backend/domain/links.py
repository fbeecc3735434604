"""Links between notes as Obsidian sees them: what a note writes, and where that leads in the vault."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple


class LinkKind(StrEnum):
    WIKILINK = "wikilink"  # [[Note]], [[Note|text]], [[Note#Heading]], [[Note#^block]]
    EMBED = "embed"  # ![[Note]], ![[image.png]]
    MARKDOWN = "markdown"  # [text](Other%20Note.md)


@dataclass(frozen=True, slots=True)
class Link:
    """A link as written in a note (before resolution)."""

    target: str  # the link path as written, URL-decoded, without "#anchor" or "|text"; "" = same note
    kind: LinkKind
    line: int  # 1-based line in the file
    text: str | None = None  # shown text: "|text" of a wikilink, or the [text] of a Markdown link
    anchor: str | None = None  # "Heading", "Heading#Sub" or "^blockid" after the "#"


@dataclass(frozen=True, slots=True)
class LinkRecord:
    """A link with its resolution: what the `obsidian_links` collection stores."""

    source: str  # vault path of the linking note
    position: int  # index of the link among the source's links; (source, position) identifies it
    target: str  # as written (Link.target)
    kind: LinkKind
    line: int
    text: str | None
    anchor: str | None
    resolved_path: str | None  # vault path of the note or attachment it leads to; None = not created yet
    is_attachment: bool  # the target is not a Markdown note (image, pdf, ...)

    @property
    def resolved(self) -> bool:
        return self.resolved_path is not None


class LinkEnds(NamedTuple):
    """A resolved link between two notes by its two ends, all that counting related notes needs: a
    search reads these for every link touching its results (a hub's backlinks too), so they stay light."""

    source: str
    target: str


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """One note's identity, what the notes collection stores."""

    path: str
    title: str
    aliases: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    date: str | None = None
    mtime: float = 0.0
    size: int = 0
    content_hash: str = ""
    problems: tuple[str, ...] = ()
    dense_ready: bool = (
        True  # False: written with keyword vectors only (the embedder failed); dense to follow
    )
    link_count: int | None = None  # links stored with the note; None: written before this was recorded
    # chunk points written with it: 0 for a note with no text (nothing to find it by); None: written before
    # this was recorded, when every note had one
    chunk_count: int | None = None
    # acronyms the note defines, each with its expansion ("GAD", "generalised anxiety disorder"): a question
    # in the expansion's words also asks for the tag (backend/domain/text/tag_words.py)
    acronyms: tuple[tuple[str, str], ...] = ()
