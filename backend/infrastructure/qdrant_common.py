"""What the Qdrant adapters share: vector names, filter normalisation, the identity record, the payload
of the note graph, and the error mapping of qdrant-edge.

The two libraries (qdrant-client and qdrant-edge) have different model classes, so each adapter turns a
`FilterSpec` (chunks) or `PayloadFilter` (notes and links) into its own conditions; everything that decides
*what* is matched and stored lives here, once. qdrant-client is not imported here: it takes most of a second
to import, and the embedded (qdrant-edge) set-up never needs it.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import os
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from backend.domain.errors import (
    IndexCorruptedError,
    IndexUnavailableError,
    KnowledgeBridgeError,
    StorageFullError,
    StoreError,
)
from backend.domain.ids import link_point_id
from backend.domain.link_resolution import name_key
from backend.domain.links import LinkKind, LinkRecord, NoteRecord
from backend.domain.models import ChunkEntry, IndexIdentity, PointFilter, PointRecord, SparseVector
from backend.domain.payload import CHUNK_INDEX, CONTENT_HASH, DATE_NUM, FOLDERS, NOTE_PATH, TAGS, date_num

DENSE = "dense"
SPARSE = "sparse"

# The collections of one index (a generation adds its suffix or folder: index_catalog.py), named once here.
CHUNKS_COLLECTION = "obsidian_chunks"
NOTES_COLLECTION = "obsidian_notes"
LINKS_COLLECTION = "obsidian_links"

# Keys of the identity record (collection metadata for qdrant-client, a JSON file for qdrant-edge).
IDENTITY_MODEL = "embedding_model"
IDENTITY_DIMENSION = "dimension"
IDENTITY_KEYWORDS = "keyword_encoding"
IDENTITY_WINDOWS = "dense_windows"


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """A `PointFilter` reduced to the exact payload matches Qdrant evaluates (all AND-ed)."""

    note_paths: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()  # exact values of the payload `folders` list
    tags: tuple[str, ...] = ()
    date_num_from: int | None = None  # inclusive YYYYMMDD
    date_num_to: int | None = None


@dataclass(frozen=True, slots=True)
class FieldMatch:
    """A payload field equal to any of `values`, or (with `at_least`/`at_most`) a number in that range."""

    key: str
    values: tuple[str | int, ...] = ()
    at_least: int | None = None
    at_most: int | None = None

    @property
    def is_range(self) -> bool:
        return self.at_least is not None or self.at_most is not None


@dataclass(frozen=True, slots=True)
class PayloadFilter:
    """The one engine-neutral filter of every collection: all of `must`, and (when given) at least one of
    `should`. Each engine translates it in one function (`client_filter`, `edge_filter`)."""

    must: tuple[FieldMatch, ...] = ()
    should: tuple[FieldMatch, ...] = ()


def chunk_filter(spec: FilterSpec | None) -> PayloadFilter | None:
    if spec is None:
        return None
    must = [
        FieldMatch(key, values)
        for key, values in ((NOTE_PATH, spec.note_paths), (FOLDERS, spec.folders), (TAGS, spec.tags))
        if values
    ]
    if spec.date_num_from is not None or spec.date_num_to is not None:
        must.append(FieldMatch(DATE_NUM, at_least=spec.date_num_from, at_most=spec.date_num_to))
    return PayloadFilter(must=tuple(must))


def normalise_filter(point_filter: PointFilter | None) -> FilterSpec | None:
    """None when nothing restricts the result.

    Folders: the payload lists every ancestor folder, so "notes under `a/b`" is an exact match on `a/b`;
    surrounding slashes are dropped, and asking for the vault root (`/` or ``) removes the folder condition.
    Raises ValueError for a date that is not an ISO day.
    """
    if point_filter is None or point_filter.is_empty:
        return None
    folders = tuple(dict.fromkeys(folder.strip().strip("/") for folder in point_filter.folders))
    if "" in folders:
        folders = ()
    spec = FilterSpec(
        note_paths=tuple(dict.fromkeys(point_filter.note_paths)),
        folders=folders,
        tags=tuple(dict.fromkeys(point_filter.tags)),
        date_num_from=_day_num(point_filter.date_from),
        date_num_to=_day_num(point_filter.date_to),
    )
    if spec == FilterSpec():
        return None
    return spec


def _day_num(day: str | None) -> int | None:
    if not day:
        return None
    try:
        dt.date.fromisoformat(day[:10])
    except ValueError as exc:
        raise ValueError(f"not an ISO day (YYYY-MM-DD): {day!r}") from exc
    return date_num(day)


INVENTORY_FIELDS = [NOTE_PATH, CHUNK_INDEX, CONTENT_HASH]  # the payload an inventory reads
INVENTORY_PAGE = 4096


def chunk_entry(point_id: object, payload: dict[str, Any] | None, has_dense: bool) -> ChunkEntry:
    payload = payload or {}
    index = payload.get(CHUNK_INDEX)
    return ChunkEntry(
        id=str(point_id),
        note_path=str(payload.get(NOTE_PATH, "")),
        chunk_index=index if isinstance(index, int) and not isinstance(index, bool) else -1,
        content_hash=str(payload.get(CONTENT_HASH, "")),
        has_dense=has_dense,
    )


def identity_record(identity: IndexIdentity) -> dict[str, Any]:
    return {
        IDENTITY_MODEL: identity.embedding_model,
        IDENTITY_DIMENSION: identity.dimension,
        IDENTITY_KEYWORDS: identity.keyword_encoding,
        IDENTITY_WINDOWS: identity.dense_windows,
    }


def identity_from_record(record: object) -> IndexIdentity | None:
    """None for anything that is not a well-formed record (missing, foreign or damaged)."""
    if not isinstance(record, dict):
        return None
    model = record.get(IDENTITY_MODEL)
    dimension = record.get(IDENTITY_DIMENSION)
    if not isinstance(model, str) or not model:
        return None
    if dimension is not None and (isinstance(dimension, bool) or not isinstance(dimension, int)):
        return None
    keywords = record.get(IDENTITY_KEYWORDS)
    windows = record.get(IDENTITY_WINDOWS)  # absent before windows existed: one vector per chunk
    return IndexIdentity(
        embedding_model=model,
        dimension=dimension,
        keyword_encoding=keywords if isinstance(keywords, str) else "",
        dense_windows=windows if isinstance(windows, int) and not isinstance(windows, bool) else 0,
    )


def check_query_vectors(
    identity: IndexIdentity | None, dense: Sequence[float] | None, sparse: SparseVector | None
) -> None:
    """Reject requests Qdrant would fail on, with a message a person can act on."""
    if dense is None and sparse is None:
        raise StoreError("a query needs a dense vector, a sparse vector or both")
    if dense is not None:
        check_dense(identity, len(dense))


def check_dense(identity: IndexIdentity | None, length: int) -> None:
    if identity is None:
        return  # unknown here; the store itself will object if the vector does not fit
    if identity.dimension is None:
        raise StoreError(
            "this index is keyword-only (built without an embedding model) and has no dense vectors",
            suggestion="Search with mode=keyword, or rebuild the index with an embedding model.",
        )
    if length != identity.dimension:
        raise StoreError(
            f"dense vector has {length} dimensions but the index was built with "
            f"{identity.embedding_model} ({identity.dimension} dimensions)",
            suggestion="Use the embedding model the index was built with, or rebuild the index.",
        )


def describe_error(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


# -- qdrant-edge errors ----------------------------------------------------------------------------


# Words of qdrant-edge errors that mean its files are damaged (a shard, segment or WAL that cannot be read
# back), or that the disk is full. Matched on the text: qdrant-edge raises bare `Exception`s.
_DAMAGED = (
    "failed to load segment",
    "deserialize",
    "decode",
    "decompress",
    "out of bounds",
    "can't init wal",
    "invalid utf-8",
    "unexpected end of file",
    "checksum",
    "corrupt",
)
_DISK_FULL = (
    "no space left on device",
    "os error 28",
    "disk quota exceeded",
    "file too large",
    "os error 27",
)


def is_engine_panic(exc: BaseException) -> bool:
    """A Rust panic inside qdrant-edge surfaces as pyo3's `PanicException`, a BaseException: on files it
    reads back that is damage (seen with a garbled payload index), never something to retry."""
    return type(exc).__name__ == "PanicException"


def edge_error(action: str, exc: BaseException) -> KnowledgeBridgeError:
    """The domain error for a qdrant-edge failure: damaged files, a full disk, or anything else."""
    text = describe_error(exc) if is_engine_panic(exc) else str(exc)
    lowered = text.lower()
    if any(sign in lowered for sign in _DISK_FULL):
        return StorageFullError(f"could not {action}: the disk holding the index is full ({text})")
    if is_engine_panic(exc) or any(sign in lowered for sign in _DAMAGED):
        return IndexCorruptedError(f"could not {action}: the index files are damaged ({text})")
    return StoreError(f"could not {action}: {text}")


@contextmanager
def edge_errors_mapped(action: str) -> Iterator[None]:
    """qdrant-edge raises bare `Exception` (and panics, as BaseException): none of it reaches the caller."""
    try:
        yield
    except KnowledgeBridgeError:
        raise
    except Exception as exc:
        raise edge_error(action, exc) from exc
    except BaseException as exc:
        if not is_engine_panic(exc):
            raise  # KeyboardInterrupt, SystemExit
        raise edge_error(action, exc) from exc


def edge_load_error(shard_dir: Path, exc: BaseException) -> KnowledgeBridgeError:
    text = str(exc)
    if not is_engine_panic(exc) and ("WouldBlock" in text or "lock" in text.lower()):
        return IndexUnavailableError(
            f"the index at {shard_dir} is in use by another process: {text}",
            suggestion="Stop the other Knowledge Bridge process using this data directory, then retry.",
        )
    error = edge_error(f"open the index at {shard_dir}", exc)
    if type(error) is StoreError:
        # a shard that exists but cannot be loaded is damaged, whatever the engine's words for it
        return IndexCorruptedError(error.detail)
    return error


def ensure_edge_shard_free(shard_dir: Path) -> None:
    """Refuse to delete a shard that is open (here or in another process): its files would vanish under it.

    An open shard holds an exclusive flock on its `wal` folder (qdrant-edge 0.9; the contract tests catch a
    change). Asking for that lock reads and writes nothing: loading the shard to find out would replay its
    log, which fails on a damaged shard and, on a full disk, gets the process killed (see disk_space.py).
    A shard without a log folder (half-created) holds nothing.
    """
    wal = shard_dir / "wal"
    try:
        fd = os.open(wal, os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise IndexUnavailableError(
            f"the index at {shard_dir} is in use",
            suggestion="Stop the other Knowledge Bridge process using this data directory, then retry.",
        ) from None
    finally:
        os.close(fd)  # also releases the probe's own lock


# -- the note graph: two payload-only collections ------------------------------------------------

GRAPH_PAGE = 4096  # records per scroll call; a related-notes lookup fits one page in any real vault

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

LINK_KEYWORD_FIELDS = (LINK_SOURCE, LINK_RESOLVED_PATH, LINK_TARGET_KEY, LINK_KIND)
LINK_INTEGER_FIELDS = (LINK_RESOLVED, LINK_POSITION)


def links_from(source: str) -> PayloadFilter:
    return PayloadFilter(must=(FieldMatch(LINK_SOURCE, (source,)),))


def links_to(target_path: str) -> PayloadFilter:
    return PayloadFilter(must=(FieldMatch(LINK_RESOLVED_PATH, (target_path,)),))


def links_touching(paths: Iterable[str]) -> PayloadFilter:
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
        "dense_ready": int(note.dense_ready),  # an int: qdrant-edge does not match booleans
        "link_count": note.link_count,
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
        dense_ready=bool(payload.get("dense_ready", 1)),
        link_count=_count(payload.get("link_count")),
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


def point_record(point_id: Any, vector: Any, payload: dict[str, Any] | None) -> PointRecord:
    """A stored point as the store port exports it, from either library's point (both name their sparse
    vector's parts `indices` and `values`)."""
    vectors = vector if isinstance(vector, dict) else {}
    sparse = vectors.get(SPARSE)
    dense, windows = split_dense(vectors.get(DENSE))
    return PointRecord(
        id=str(point_id),
        sparse=SparseVector(tuple(sparse.indices), tuple(float(v) for v in sparse.values))
        if sparse is not None
        else SparseVector((), ()),
        payload=dict(payload or {}),
        dense=dense,
        windows=windows,
    )


def is_multivector(identity: IndexIdentity | None) -> bool:
    """An index with dense windows stores each chunk's dense side as a multivector compared by MAX_SIM:
    the chunk's own vector first, then its windows' (a one-block chunk: its own vector alone)."""
    return identity is not None and identity.dimension is not None and identity.dense_windows > 0


def stored_dense(point: PointRecord, identity: IndexIdentity | None) -> list[float] | list[list[float]]:
    """The value of a point's dense vector as the index lays it out."""
    assert point.dense is not None
    if is_multivector(identity):
        return [list(point.dense), *(list(window) for window in point.windows)]
    return list(point.dense)


def dense_query(vector: Sequence[float], identity: IndexIdentity | None) -> list[float] | list[list[float]]:
    """A query vector as the index compares it: a one-vector multivector under MAX_SIM, so a chunk scores
    the cosine of its best window."""
    query = [float(x) for x in vector]
    return [query] if is_multivector(identity) else query


def split_dense(value: Any) -> tuple[tuple[float, ...] | None, tuple[tuple[float, ...], ...]]:
    """A stored dense value back into the chunk's own vector and its windows' (either layout)."""
    if value is None or len(value) == 0:
        return None, ()
    if isinstance(value[0], (int, float)):
        return tuple(float(x) for x in value), ()
    rows = [tuple(float(x) for x in row) for row in value]
    return rows[0], tuple(rows[1:])
