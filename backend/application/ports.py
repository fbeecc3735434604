"""The ports the use cases depend on. Adapters live in `infrastructure`."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import Any, Protocol, runtime_checkable

from backend.domain.links import LinkEnds, LinkRecord, NoteRecord
from backend.domain.models import (
    ChunkEntry,
    DenseVectors,
    FileProblem,
    IndexIdentity,
    NoteFile,
    ParsedNote,
    PointFilter,
    PointRecord,
    ScoredPoint,
    SparseVector,
)
from backend.domain.notes.memory import MemoryRecord


@runtime_checkable
class Embedder(Protocol):
    """Turns text into dense vectors. Implementations must be safe to call from worker threads."""

    @property
    def model_name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order."""
        ...

    def embed_query(self, text: str) -> list[float]: ...

    def health(self) -> bool:
        """True when the embedder can answer now (cheap; used by status and degraded mode)."""
        ...

    def close(self) -> None: ...


@runtime_checkable
class CountsEmbeddings(Protocol):
    """An embedder that counts its work: the embedding cache (what a remote model costs is its texts)."""

    def embedding_counts(self) -> tuple[int, int]:
        """(texts sent to the model, texts the cache answered) since the embedder was made."""
        ...


class ChunkStore(Protocol):
    """One Qdrant collection of chunk points with named vectors `dense` (cosine) and `sparse` (IDF).

    Point ids are UUID strings. Every method raises `IndexUnavailableError` when the store cannot be
    reached and `StoreError` for any other store failure; adapters never leak client exceptions.
    """

    def identity(self) -> IndexIdentity | None:
        """The embedder the collection was built with, or None if the collection does not exist."""
        ...

    def create(self, identity: IndexIdentity) -> None:
        """Create the collection (dense vectors only when `identity.dimension` is set) and record
        `identity` with it. Drops an existing collection of the same name first."""
        ...

    def upsert(self, points: Sequence[PointRecord]) -> None: ...

    def add_dense(self, vectors: Sequence[DenseVectors]) -> None:
        """Give points already written their dense vectors, leaving each payload and keyword vector as it
        is. A point that does not exist raises `StoreError`, and the points before it may have been given
        theirs: add vectors only to points known to be written."""
        ...

    def delete_by_note(self, note_path: str) -> None:
        """Remove every point whose payload `note_path` equals `note_path`."""
        ...

    def delete_chunks_from(self, note_path: str, first_stale: int) -> None:
        """Remove the note's points whose `chunk_index` is `first_stale` or more: what is left of a longer
        version of the note once its new chunks (0 .. first_stale - 1) have been written over the old."""
        ...

    def inventory(self) -> list[ChunkEntry]:
        """Every point, as id, note path, chunk index, content hash and whether it has a dense vector.
        Reads only those payload fields: what consistency checks compare with the note records."""
        ...

    def note_vectors(self, note_path: str) -> list[tuple[dict[str, Any], list[float]]]:
        """The payload and dense vector of every point of the note that has one (to reuse on a rename)."""
        ...

    def query(
        self,
        *,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        limit: int,
        prefetch_limit: int,
        point_filter: PointFilter | None = None,
        rrf_k: int = 60,
        rrf_weights: tuple[float, float] = (1.0, 1.0),
        fusion: str = "rrf",
    ) -> list[ScoredPoint]:
        """Dense only, sparse only, or both fused inside Qdrant in one call.

        At least one of `dense` / `sparse` must be given. Results are best first, with payloads.
        `fusion`: "rrf" (Reciprocal Rank Fusion; `rrf_weights` (dense, keyword) scale each side's reciprocal
        ranks) or "dbsf" (distribution-based score fusion, unweighted): `backend.domain.ranking.fusion`
        computes both the same way.
        """
        ...

    def rank_sides(
        self,
        *,
        dense: Sequence[float],
        sparse: SparseVector,
        limit: int,
        point_filter: PointFilter | None = None,
    ) -> tuple[list[tuple[Hashable, float]], list[tuple[Hashable, float]]]:
        """The dense side's and the keyword side's best `limit` point ids, each with its own side's score,
        best first, in one store call and without payloads: what a fusion done outside the engine ranks
        before it reads the payloads of the few it keeps (`payloads`). An empty `sparse` gives an empty
        keyword side. The ids are text (as `ScoredPoint.id`): a search hashes, compares and keeps every
        one it ranks, and the engine's own id objects (qdrant-edge's UUIDs, hashed in Python) cost it twice
        the fusion."""
        ...

    def payloads(self, ids: Sequence[Hashable]) -> dict[Hashable, dict[str, Any]]:
        """The payload of each of these points (ids as `rank_sides` gave them, or their strings), keyed by
        the ids given; an id no longer stored is left out."""
        ...

    def optimize(self) -> None:
        """Lay the stored chunks out for searching, where the store does not by itself (the embedded engine:
        an int8 copy of each dense vector, scanned first). Blocking, and it may hold the interpreter for a
        second or two on a large vault: only before the service answers."""
        ...

    def warm(
        self,
        stop: Callable[[], bool] | None = None,
        each_page: Callable[[list[dict[str, Any]]], None] | None = None,
    ) -> int:
        """Read stored payloads into the memory searches read them from, ahead of the searches, as far as
        that memory goes or until `stop()` (asked between reads) is true; how many were read (0 for a store
        that keeps nothing or holds all in memory). `each_page`: given every page of payloads read (copies,
        outside any lock of the store), for what a search computes from them to be ready too."""
        ...

    def keyword_terms(self, ids: Sequence[Hashable]) -> dict[Hashable, frozenset[int]]:
        """The term indices of the keyword vector each of these points was indexed with (ids as
        `payloads` takes them), keyed by the ids given; an id no longer stored is left out."""
        ...

    def count(self, point_filter: PointFilter | None = None) -> int: ...

    def scroll(
        self, *, point_filter: PointFilter | None = None, limit: int = 256, offset: str | None = None
    ) -> tuple[list[ScoredPoint], str | None]:
        """A page of points (score 0) with payloads, and the offset of the next page or None."""
        ...

    def export(self, *, limit: int = 256, offset: str | None = None) -> tuple[list[PointRecord], str | None]:
        """A page of points as they are stored (id, payload, sparse vector, dense vector when the point has
        one), and the offset of the next page or None: what a copy to another store writes back."""
        ...

    def close(self) -> None:
        """Flush and release the store; safe to call twice."""
        ...


class Vault(Protocol):
    """Read-only access to the notes. Never reads outside the vault root."""

    @property
    def root(self) -> str: ...

    def scan(self, folder: str = "") -> tuple[list[NoteFile], list[FileProblem]]:
        """Every indexable note (sorted by path), and files skipped with a reason; `folder` (vault-relative)
        limits it to that subtree."""
        ...

    def stat(self, rel_path: str) -> NoteFile | None:
        """The note at `rel_path` as it is now, or None when it is gone or not a note we index."""
        ...

    def list_files(self) -> list[str]:
        """Every non-hidden file a link can point to (notes and attachments), vault-relative."""
        ...

    def has_file(self, rel_path: str) -> bool:
        """Whether `list_files` would list `rel_path` now."""
        ...

    def problem(self, rel_path: str) -> str | None:
        """Why the note at `rel_path` cannot be read now (not a regular file, a symlink out of the vault,
        unreadable), or None when it is readable or simply gone."""
        ...

    def read_text(self, rel_path: str) -> tuple[str, list[str]]:
        """The note's text and any problems met reading it (e.g. invalid UTF-8 replaced).

        Raises OSError when the file vanished or cannot be read.
        """
        ...


class NoteParser(Protocol):
    def __call__(self, rel_path: str, text: str) -> ParsedNote: ...


class GraphStore(Protocol):
    """Two payload-only Qdrant collections: `obsidian_notes` (one point per note) and `obsidian_links`
    (one point per link, keyed by source note and position). Same error rules as `ChunkStore`."""

    def ensure(self) -> None:
        """Create both collections (and payload indexes) when missing; keep existing data."""
        ...

    def reset(self) -> None:
        """Drop and recreate both collections, empty."""
        ...

    def put_note(self, note: NoteRecord, links: Sequence[LinkRecord]) -> None:
        """Store the note record and make `links` exactly its outgoing links (old ones removed)."""
        ...

    def mark_dense_ready(self, paths: Sequence[str]) -> None:
        """The notes' records say their chunks have dense vectors now (paths not recorded are skipped)."""
        ...

    def delete_note(self, path: str) -> None:
        """Remove the note record and its outgoing links (links *to* it stay, as unresolved or re-resolved
        by the caller)."""
        ...

    def get_notes(self, paths: Sequence[str]) -> dict[str, NoteRecord]:
        """The records of those of `paths` that exist, in one store call."""
        ...

    def all_notes(self) -> list[NoteRecord]: ...

    def all_links(self) -> list[LinkRecord]:
        """Every stored link, by source note and position (consistency checks; searches never need it)."""
        ...

    def outlinks(self, source: str) -> list[LinkRecord]: ...

    def backlinks(self, target_path: str) -> list[LinkRecord]:
        """Links from other notes (or itself) that resolve to `target_path`."""
        ...

    def note_links_touching(self, paths: Sequence[str]) -> list[LinkEnds]:
        """The ends of every resolved link between two notes (attachments aside) whose source or target is
        in `paths`, one entry per link, in no set order, in ONE store call (related notes)."""
        ...

    def warm(self) -> int:
        """Read every note's link ends into the memory `note_links_touching` reads them from, ahead of the
        searches, as far as that memory goes; how many notes' (0 for a store that keeps nothing or holds
        all in memory)."""
        ...

    def unresolved_links(self) -> list[LinkRecord]:
        """Every link to a note not created yet (or a missing attachment), by source note and position."""
        ...

    def links_to_names(self, names: Sequence[str]) -> list[LinkRecord]:
        """Links whose target's file-name key (see `domain.link_resolution.name_key`) is in `names`: the ones
        to re-resolve when a note with one of those names appears, moves or goes."""
        ...

    def update_resolution(self, links: Sequence[LinkRecord]) -> None:
        """Overwrite the resolution fields of already stored links (same source + position)."""
        ...

    def count_links(self, *, resolved: bool | None = None, kind: str | None = None) -> int: ...

    def put_many(self, notes: Sequence[NoteRecord], links: Sequence[LinkRecord]) -> None:
        """Store note records and links as they are, in few store calls: a bulk copy into a graph that does
        not hold these notes yet (unlike `put_note`, older links of these notes are not looked for)."""
        ...

    def close(self) -> None: ...


class IndexCatalog(Protocol):
    """Where the index's collection sets live. A generation is one complete set (chunks, notes, links);
    at most one is active. A rebuild fills a new generation beside the active one, then activates it."""

    def active(self) -> str | None:
        """The active generation; None: no index yet."""
        ...

    def open(self, generation: str) -> tuple[ChunkStore, GraphStore]:
        """Stores for `generation` (collections are created by the stores' own create()/ensure())."""
        ...

    def new_generation(self) -> str:
        """A name never used before in this catalog; leftovers of a crashed build with that name are
        removed."""
        ...

    def activate(self, generation: str) -> None:
        """Atomic and durable: after a crash at any point, active() is the old or the new generation."""
        ...

    def drop(self, generation: str) -> None:
        """Delete its collections (its stores are closed first by the caller); refuses the active one with
        ValueError."""
        ...

    def generations(self) -> list[str]:
        """Every generation with data present, oldest first."""
        ...

    def close(self) -> None:
        """Release what the catalog holds (the shared client); its stores are closed first by the caller."""
        ...

    def vault_owner(self) -> str | None:
        """The vault this index belongs to, as recorded (None: not recorded yet)."""
        ...

    def record_vault_owner(self, vault: str) -> None:
        """Record the vault this index belongs to (durably, beside the generations)."""
        ...

    def describe(self) -> str:
        """Where the index lives, for messages (a folder, or the collections on the server)."""
        ...


class MemoryStore(Protocol):
    """Remembered facts: one Qdrant collection of its own (`obsidian_memory`), outside the index
    generations a rebuild replaces, so facts survive rebuilds. One point per key (named vectors `dense`,
    cosine, when the identity has a dimension, and `sparse`, IDF), the fact in its payload. Same error rules
    as `ChunkStore`."""

    def identity(self) -> IndexIdentity | None:
        """The embedder and keyword encoding the vectors were made with; None before `create`."""
        ...

    def create(self, identity: IndexIdentity) -> None:
        """Create the collection for `identity`, dropping an existing one (facts included: callers read them
        first when they mean to keep them)."""
        ...

    def put(self, record: MemoryRecord, *, sparse: SparseVector, dense: Sequence[float] | None) -> None:
        """Store the fact under its key, replacing any fact with that key."""
        ...

    def get(self, key: str) -> MemoryRecord | None: ...

    def all(self) -> list[MemoryRecord]:
        """Every fact, by key."""
        ...

    def delete(self, key: str) -> bool:
        """Remove the fact; False when there was none."""
        ...

    def search(
        self,
        *,
        dense: Sequence[float] | None,
        sparse: SparseVector | None,
        limit: int,
        min_similarity: float = 0.0,
        rrf_k: int = 60,
    ) -> list[tuple[MemoryRecord, float]]:
        """Facts matching the query, best first: keyword matches (sparse) and facts whose dense similarity is
        at least `min_similarity`, fused with RRF when both are given."""
        ...

    def close(self) -> None: ...
