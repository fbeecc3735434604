"""`GraphStore` over a `QdrantEngine`: the note graph as two payload-only collections, notes and links.

Written once for both engines. Reads of a collection that was never created find nothing; writes to it
raise `IndexNotReadyError`. The payload of a note and of a link is decided here, with the filters that find
links (each field a filter reads has a payload index on the links collection).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from backend.domain.errors import IndexNotReadyError
from backend.domain.index.ids import link_point_id, note_point_id
from backend.domain.links import LinkEnds, LinkKind, LinkRecord, NoteRecord
from backend.domain.notes.link_resolution import name_key
from backend.infrastructure.qdrant.engine import (
    LINKS_COLLECTION,
    NOTES_COLLECTION,
    Collection,
    FieldMatch,
    Page,
    PayloadFilter,
    QdrantEngine,
    StoredPoint,
)
from backend.infrastructure.qdrant.link_ends_cache import LinkEndsCache, each_link_once, split_by_note

GRAPH_PAGE = 4096  # records per scroll call; a related-notes lookup fits one page in any real vault
_BULK = 1024  # payload-only points of a few hundred bytes per write: far below the 32 MB request limit

# Payload keys of a link point.
LINK_SOURCE = "source"
LINK_POSITION = "position"
LINK_TARGET = "target"
LINK_TARGET_KEY = "target_key"  # `name_key` of the target: finds the links to re-resolve by file name
LINK_KIND = "kind"
LINK_LINE = "line"
LINK_TEXT = "text"
LINK_ANCHOR = "anchor"
LINK_RESOLVED_PATH = "resolved_path"
# 0/1, not a bool: qdrant-edge 0.9 matches nothing on a boolean MatchValue.
LINK_RESOLVED = "resolved"
LINK_IS_ATTACHMENT = "is_attachment"

# Payload key of a note point that a write sets alone (the rest of a note's payload: `note_payload`).
NOTE_DENSE_READY = "dense_ready"

LINK_KEYWORD_FIELDS = (LINK_SOURCE, LINK_RESOLVED_PATH, LINK_TARGET_KEY, LINK_KIND)
LINK_INTEGER_FIELDS = (LINK_RESOLVED, LINK_POSITION)
_LINK_ENDS = [LINK_SOURCE, LINK_RESOLVED_PATH, LINK_IS_ATTACHMENT]  # what related notes read of a link
# notes whose link ends are kept between searches (link_ends_cache.py): every note of the Zettelkasten, read
# in at start (`warm`: its 13,410 notes and 30,563 links between them in 0.6 s, 9.8 MB)
LINK_CACHE = 32768


class QdrantGraphStore:
    def __init__(
        self,
        engine: QdrantEngine,
        *,
        notes_collection: str = NOTES_COLLECTION,
        links_collection: str = LINKS_COLLECTION,
        page_size: int = GRAPH_PAGE,
        link_cache: int = LINK_CACHE,
    ) -> None:
        self._engine = engine
        self._page = page_size
        # notes are only read by id or all at once: no payload index
        self._notes = Collection(notes_collection, vectors=False, batch=_BULK)
        self._links = Collection(
            links_collection,
            LINK_KEYWORD_FIELDS,
            LINK_INTEGER_FIELDS,
            vectors=False,
            batch=_BULK,
            reindex_on_open=True,
        )
        engine.declare(self._notes, self._links)
        self._kept = LinkEndsCache(link_cache)

    @property
    def engine(self) -> QdrantEngine:
        return self._engine

    # -- lifecycle -------------------------------------------------------------------------------

    def ensure(self) -> None:
        with self._engine.managing("open the note graph"), self._links_written():
            self._engine.ensure(self._notes)
            self._engine.ensure(self._links)

    def reset(self) -> None:
        with self._engine.managing("reset the note graph"), self._links_written():
            self._engine.create([self._notes, self._links])

    def close(self) -> None:
        self._engine.close()

    # -- writes ----------------------------------------------------------------------------------

    def put_note(self, note: NoteRecord, links: Sequence[LinkRecord]) -> None:
        with self._engine.writing("store a note"), self._links_written():
            if links:
                self._engine.upsert(self._links, [_link_point(link) for link in links])
            # After the upsert, so a reader never sees the note with fewer links than either version has.
            self._engine.delete_where(self._links, links_beyond(note.path, len(links)))
            self._engine.upsert(self._notes, [_note_point(note)])

    def mark_dense_ready(self, paths: Sequence[str]) -> None:
        if not paths:
            return
        with self._engine.writing("mark notes dense"):
            # by id filter: a note deleted meanwhile is skipped; its links are not touched
            self._engine.set_payload(
                self._notes, [({NOTE_DENSE_READY: 1}, [note_point_id(p) for p in paths])]
            )

    def delete_note(self, path: str) -> None:
        with self._engine.writing("delete a note"), self._links_written():
            self._engine.delete_ids(self._notes, [note_point_id(path)])
            self._engine.delete_where(self._links, links_from(path))

    def put_many(self, notes: Sequence[NoteRecord], links: Sequence[LinkRecord]) -> None:
        with self._engine.writing("store notes", check_disk=False), self._links_written():
            for start in range(0, len(links), _BULK):  # a bulk copy goes in slices: bounded memory per write
                self._engine.upsert(self._links, [_link_point(link) for link in links[start : start + _BULK]])
            for start in range(0, len(notes), _BULK):  # after the links, as in put_note
                self._engine.upsert(self._notes, [_note_point(note) for note in notes[start : start + _BULK]])

    def update_resolution(self, links: Sequence[LinkRecord]) -> None:
        if not links:
            return
        with self._engine.writing("update links"), self._links_written():
            self._engine.set_payload(self._links, resolution_groups(links))

    @contextmanager
    def _links_written(self) -> Iterator[None]:
        """Around a write (inside `writing`): what related notes kept of the links is dropped after it."""
        try:
            yield
        finally:
            self._kept.clear()

    # -- reads -----------------------------------------------------------------------------------

    def get_notes(self, paths: Sequence[str]) -> dict[str, NoteRecord]:
        if not paths:
            return {}
        ids = [note_point_id(path) for path in dict.fromkeys(paths)]
        try:
            with self._engine.reading("read notes"):
                payloads = self._engine.retrieve(self._notes, ids)
        except IndexNotReadyError:
            return {}
        notes = [note_from_payload(p) for p in payloads.values() if p]
        return {note.path: note for note in notes}

    def all_notes(self) -> list[NoteRecord]:
        payloads = self._scroll(self._notes, None, "list notes")
        return sorted((note_from_payload(p) for p in payloads), key=lambda note: note.path)

    def all_links(self) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, None, "list links"))

    def outlinks(self, source: str) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, links_from(source), "read links"))

    def backlinks(self, target_path: str) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, links_to(target_path), "read links"))

    def note_links_touching(self, paths: Sequence[str]) -> list[LinkEnds]:
        if not paths:
            return []
        asked = list(dict.fromkeys(paths))
        epoch = self._kept.epoch
        known, missing = self._kept.found(asked)
        if missing:
            # three fields, not the whole link: a hub among the results brings thousands of backlinks
            payloads = self._scroll(self._links, links_touching(missing), "read links", payload=_LINK_ENDS)
            read = split_by_note(missing, _note_link_ends(payloads))
            self._kept.keep(epoch, read)
            known.update(read)
        return each_link_once(asked, known)

    def warm(self) -> int:
        epoch = self._kept.epoch
        notes = [str(p["path"]) for p in self._scroll(self._notes, None, "list notes", payload=["path"])]
        wanted = notes[: self._kept.capacity]
        if not wanted:
            return 0
        # all of them, even those with no link: a note not kept is a store call for the search asking
        payloads = self._scroll(self._links, None, "read links", payload=_LINK_ENDS)
        read = split_by_note(wanted, _note_link_ends(payloads))
        return self._kept.keep(epoch, read)

    def unresolved_links(self) -> list[LinkRecord]:
        return sorted_links(self._scroll(self._links, links_counted(False, None), "read links"))

    def links_to_names(self, names: Sequence[str]) -> list[LinkRecord]:
        if not names:
            return []
        return sorted_links(self._scroll(self._links, links_named(names), "read links"))

    def count_links(self, *, resolved: bool | None = None, kind: str | None = None) -> int:
        flt = links_counted(resolved, kind)
        try:
            with self._engine.reading("count links"):
                return self._engine.count(self._links, flt)
        except IndexNotReadyError:
            return 0

    def _scroll(
        self, collection: Collection, flt: PayloadFilter | None, action: str, payload: bool | list[str] = True
    ) -> list[dict[str, Any]]:
        """Every matching payload (or its `payload` fields), one scroll call per `page_size` records."""
        found: list[dict[str, Any]] = []
        offset: Any = None
        try:
            with self._engine.reading(action):
                while True:
                    records, offset = self._engine.scroll(collection, Page(self._page, offset, flt, payload))
                    found.extend(p for p in (r.payload for r in records) if p)
                    if offset is None:
                        return found
        except IndexNotReadyError:
            return []


def _note_link_ends(payloads: Iterable[dict[str, Any]]) -> Iterator[LinkEnds]:
    """The ends of the links between two notes among these payloads (`_LINK_ENDS`): attachments and links
    to notes not created yet left out."""
    for p in payloads:
        if not p.get(LINK_IS_ATTACHMENT) and p.get(LINK_RESOLVED_PATH) is not None:
            yield LinkEnds(str(p[LINK_SOURCE]), str(p[LINK_RESOLVED_PATH]))


# -- filters -----------------------------------------------------------------------------------------


def links_from(source: str) -> PayloadFilter:
    return PayloadFilter(must=(FieldMatch(LINK_SOURCE, (source,)),))


def links_to(target_path: str) -> PayloadFilter:
    return PayloadFilter(must=(FieldMatch(LINK_RESOLVED_PATH, (target_path,)),))


def links_touching(paths: Iterable[str]) -> PayloadFilter:
    # no "resolved" condition: the few unresolved links are dropped as read, and one condition fewer
    # for every link read was 15% faster at 150k links
    unique = tuple(dict.fromkeys(paths))
    return PayloadFilter(should=(FieldMatch(LINK_SOURCE, unique), FieldMatch(LINK_RESOLVED_PATH, unique)))


def links_named(names: Iterable[str]) -> PayloadFilter:
    return PayloadFilter(must=(FieldMatch(LINK_TARGET_KEY, tuple(dict.fromkeys(names))),))


def links_beyond(source: str, keep: int) -> PayloadFilter:
    """The source's links from position `keep` on: what is stale once it has `keep` links."""
    return PayloadFilter(must=(FieldMatch(LINK_SOURCE, (source,)), FieldMatch(LINK_POSITION, at_least=keep)))


def links_counted(resolved: bool | None, kind: str | None) -> PayloadFilter | None:
    must: list[FieldMatch] = []
    if resolved is not None:
        must.append(FieldMatch(LINK_RESOLVED, (int(resolved),)))
    if kind is not None:
        must.append(FieldMatch(LINK_KIND, (str(LinkKind(kind).value),)))
    return PayloadFilter(must=tuple(must)) if must else None


# -- payloads ----------------------------------------------------------------------------------------


def _note_point(note: NoteRecord) -> StoredPoint:
    return StoredPoint(note_point_id(note.path), note_payload(note))


def _link_point(link: LinkRecord) -> StoredPoint:
    return StoredPoint(link_point_id(link.source, link.position), link_payload(link))


def note_payload(note: NoteRecord) -> dict[str, Any]:
    return {
        "path": note.path,
        "title": note.title,
        "aliases": list(note.aliases),
        "tags": list(note.tags),
        "date": note.date,
        "mtime": note.mtime,
        "size": note.size,
        "content_hash": note.content_hash,
        "problems": list(note.problems),
        NOTE_DENSE_READY: int(note.dense_ready),  # an int: qdrant-edge does not match booleans
        "link_count": note.link_count,
        "chunk_count": note.chunk_count,
        "acronyms": [list(pair) for pair in note.acronyms],
    }


def note_from_payload(payload: dict[str, Any]) -> NoteRecord:
    return NoteRecord(
        path=str(payload["path"]),
        title=str(payload.get("title", "")),
        aliases=tuple(payload.get("aliases") or ()),
        tags=tuple(payload.get("tags") or ()),
        date=payload.get("date"),
        mtime=float(payload.get("mtime") or 0.0),
        size=int(payload.get("size") or 0),
        content_hash=str(payload.get("content_hash") or ""),
        problems=tuple(payload.get("problems") or ()),
        dense_ready=bool(payload.get(NOTE_DENSE_READY, 1)),
        link_count=_count(payload.get("link_count")),
        chunk_count=_count(payload.get("chunk_count")),
        acronyms=_pairs(payload.get("acronyms")),
    )


def _pairs(value: object) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, list):
        return ()
    return tuple(
        (str(pair[0]), str(pair[1])) for pair in value if isinstance(pair, list | tuple) and len(pair) == 2
    )


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def resolution_payload(link: LinkRecord) -> dict[str, Any]:
    """The fields `update_resolution` overwrites."""
    return {
        LINK_RESOLVED_PATH: link.resolved_path,
        LINK_RESOLVED: int(link.resolved),
        LINK_IS_ATTACHMENT: link.is_attachment,
    }


def link_payload(link: LinkRecord) -> dict[str, Any]:
    return {
        LINK_SOURCE: link.source,
        LINK_POSITION: link.position,
        LINK_TARGET: link.target,
        LINK_TARGET_KEY: name_key(link.target),
        LINK_KIND: link.kind.value,
        LINK_LINE: link.line,
        LINK_TEXT: link.text,
        LINK_ANCHOR: link.anchor,
        **resolution_payload(link),
    }


def link_from_payload(payload: dict[str, Any]) -> LinkRecord:
    # Both libraries drop a key that is set to None by a payload update, hence `.get`.
    return LinkRecord(
        source=str(payload[LINK_SOURCE]),
        position=int(payload[LINK_POSITION]),
        target=str(payload.get(LINK_TARGET, "")),
        kind=LinkKind(payload[LINK_KIND]),
        line=int(payload.get(LINK_LINE) or 0),
        text=payload.get(LINK_TEXT),
        anchor=payload.get(LINK_ANCHOR),
        resolved_path=payload.get(LINK_RESOLVED_PATH),
        is_attachment=bool(payload.get(LINK_IS_ATTACHMENT, False)),
    )


def sorted_links(payloads: Iterable[dict[str, Any] | None]) -> list[LinkRecord]:
    """Links in a stable order: by source note, then as written in it."""
    links = [link_from_payload(p) for p in payloads if p]
    return sorted(links, key=lambda link: (link.source, link.position))


def resolution_groups(links: Sequence[LinkRecord]) -> list[tuple[dict[str, Any], list[str]]]:
    """Point ids of `links` grouped by identical new resolution: one payload update per group, since a
    re-resolution after a note appears typically sends many links to the same path."""
    groups: dict[tuple[str | None, bool], tuple[dict[str, Any], list[str]]] = {}
    for link in links:
        key = (link.resolved_path, link.is_attachment)
        groups.setdefault(key, (resolution_payload(link), []))[1].append(
            link_point_id(link.source, link.position)
        )
    return list(groups.values())
