"""The read side of the index: what search, note reading, memory and verify need from it.

They depend on this port, not on `IndexHandle`, so changing a reader never means learning the writer's
locking, and a test of a reading rule can hand in any object with these members. `IndexHandle` is the one
implementation: it serves reads while `Indexer` (sync, refresh, rebuild) keeps it up to date.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol

from backend.application.serving.embedder_health import EmbedderHealth
from backend.application.serving.live_index import LiveIndex
from backend.application.serving.note_graph import NoteLinks
from backend.domain.index.index_consistency import StoreDrift
from backend.domain.links import LinkRecord, NoteRecord


class ServingIndex(Protocol):
    @property
    def embedder_health(self) -> EmbedderHealth | None:
        """The embedder's record of failures, shared by searches and indexing (None: keyword only)."""

    @property
    def serving_health(self) -> EmbedderHealth | None:
        """The embedder of the serving generation's vectors: it embeds queries (an index built with another
        model keeps its own until a rebuild switches; None: keyword only)."""

    @property
    def indexed_notes(self) -> int: ...

    @property
    def dense_pending(self) -> int:
        """Notes whose chunks have keyword vectors only, waiting for the embedder."""

    @property
    def complete(self) -> bool:
        """A full pass over the vault has finished at least once."""

    @property
    def keyword_fallback(self) -> str | None:
        """Why searches can only use keywords now, or None."""

    @property
    def dense_fallback(self) -> str | None:
        """Why searches can only use dense vectors now (keyword vectors of another encoding), or None."""

    def check_searchable(self) -> None:
        """Raise the error a search must answer with when the index cannot serve one."""

    def serving(self) -> AbstractContextManager[LiveIndex]:
        """The generation serving now, held so that a rebuild does not switch it away mid-read."""

    def note_record(self, path: str) -> NoteRecord | None: ...

    def note_links(self, path: str) -> NoteLinks: ...

    def note_records(self) -> list[NoteRecord]: ...

    def chunk_count(self) -> int: ...

    def consistency(self) -> tuple[StoreDrift, list[NoteRecord], list[LinkRecord]]:
        """How the stored points add up with the note records, those records and every link."""
