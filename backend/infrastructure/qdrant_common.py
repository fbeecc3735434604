"""What both Qdrant adapters share: vector names, filter normalisation, the identity record.

The two libraries (qdrant-client and qdrant-edge) have different model classes, so each adapter turns a
`FilterSpec` into its own conditions; everything that decides *what* is matched lives here, once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from backend.domain.errors import StoreError
from backend.domain.models import IndexIdentity, PointFilter, SparseVector
from backend.domain.payload import date_num

DENSE = "dense"
SPARSE = "sparse"

# Keys of the identity record (collection metadata for qdrant-client, a JSON file for qdrant-edge).
IDENTITY_MODEL = "embedding_model"
IDENTITY_DIMENSION = "dimension"


@dataclass(frozen=True, slots=True)
class FilterSpec:
    """A `PointFilter` reduced to the exact payload matches Qdrant evaluates (all AND-ed)."""

    note_paths: tuple[str, ...] = ()
    folders: tuple[str, ...] = ()  # exact values of the payload `folders` list
    tags: tuple[str, ...] = ()
    date_num_from: int | None = None  # inclusive YYYYMMDD
    date_num_to: int | None = None


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


def identity_record(identity: IndexIdentity) -> dict[str, Any]:
    return {IDENTITY_MODEL: identity.embedding_model, IDENTITY_DIMENSION: identity.dimension}


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
    return IndexIdentity(embedding_model=model, dimension=dimension)


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
