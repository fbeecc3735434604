"""Remembered facts: an agent keeps a fact (key, value, the vault note it comes from) and finds it again by
meaning and by words, next to search results.

Facts live in a store of their own (`MemoryStore`), never in the vault and never in the index generations a
rebuild replaces, so they survive restarts and rebuilds. Their vectors are made with the index's embedder and
keyword encoding; when those change, the facts are re-encoded from their stored text when the store opens
(facts are few: this is cheap). A fact stored while the embedder was down is found by its words until a later
call embeds it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.application.notes.reading import NoteReader
from backend.application.ports import Embedder, MemoryStore
from backend.application.serving.serving_index import ServingIndex
from backend.domain.errors import (
    IndexNotReadyError,
    IndexUnavailableError,
    MemoryNotFoundError,
)
from backend.domain.index.index_texts import file_stem
from backend.domain.models import IndexIdentity
from backend.domain.notes.memory import MemoryRecord, key_words, memory_key, memory_text, memory_value
from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.sparse import DocumentFields, SparseEncoder

log = logging.getLogger(__name__)

HEAL_INTERVAL_SECONDS = 30.0  # how often a search may probe the embedder for facts still without vectors


@dataclass(frozen=True, slots=True)
class MemoryView:
    """A fact as an agent sees it: its value with secrets redacted, and whether its source still exists."""

    key: str
    value: str
    source: str
    source_exists: bool
    created_at: float
    updated_at: float
    sensitive_categories: list[str]
    redactions: int
    score: float | None = None  # set for search hits


MemoryHit = MemoryView


@dataclass(frozen=True, slots=True)
class MemorySearch:
    hits: list[MemoryView]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class MemoryPage:
    facts: list[MemoryView]
    total: int
    next_offset: int | None


class MemoryService:
    def __init__(
        self,
        *,
        store: MemoryStore,
        embedder: Embedder | None,
        encoder: SparseEncoder,
        identity: IndexIdentity,
        index: ServingIndex,
        notes: NoteReader,
        policy: ContentPolicy,
        min_similarity: float = 0.4,
        rrf_k: int = 60,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._embedder = embedder if identity.dimension is not None else None
        self._encoder = encoder
        self._identity = identity
        self._index = index
        self._notes = notes
        self._policy = policy
        self._min_similarity = min_similarity
        self._rrf_k = rrf_k
        self._clock = clock
        self._lock = threading.RLock()
        self._opened = False
        self._pending = False  # some fact waits for its dense vector
        self._next_heal = 0.0

    # -- use cases --------------------------------------------------------------------------------

    def remember(self, key: str, value: str, source: str) -> tuple[MemoryView, bool]:
        """Store (or replace) the fact; True when the key is new. `source` must be an indexed note."""
        key, value = memory_key(key), memory_value(value)
        # the note as a read takes it (its path, with or without .md, its title or alias when one note answers
        # to it), with the same errors, before anything is written; the fact keeps the note's own path
        source = self._notes.find(source).path
        with self._lock:
            self._open()
            existing = self._store.get(key)
            now = round(self._clock() * 1_000_000) / 1_000_000  # what the store keeps: microseconds
            record = MemoryRecord(
                key=key,
                value=value,
                source=source,
                created_at=existing.created_at if existing else now,
                updated_at=now,
            )
            stored = self._write(record)
        return self._view(stored), existing is None

    def get(self, key: str) -> MemoryView:
        with self._lock:
            self._open()
            record = self._store.get(memory_key(key))
        if record is None:
            raise MemoryNotFoundError(f"no remembered fact with key {key!r}")
        return self._view(record)

    def list(self, *, limit: int = 100, offset: int = 0) -> MemoryPage:
        with self._lock:
            self._open()
            records = self._store.all()
        page = records[offset : offset + limit]
        following = offset + len(page)
        return MemoryPage(
            [self._view(r) for r in page], len(records), following if following < len(records) else None
        )

    def forget(self, key: str) -> None:
        with self._lock:
            self._open()
            if not self._store.delete(memory_key(key)):
                raise MemoryNotFoundError(f"no remembered fact with key {key!r}")

    def search(self, query: str, *, limit: int = 3) -> MemorySearch:
        """Facts matching `query`: by words, and by meaning when the embedder answers (a fact counts as
        meaning-close from MEMORY_MIN_SIMILARITY cosine similarity)."""
        warnings: list[str] = []
        dense = None
        health = self._index.embedder_health
        if health is not None:
            # the index's embedder health: the same probe, failure and hold as searches and indexing
            dense = health.query(query) if health.worth_trying() else None
            if dense is None:
                warnings.append(f"remembered facts matched by words only: {health.describe()}")
        sparse = self._encoder.encode_query(query)
        with self._lock:
            self._open()
            if dense is not None:
                self._heal()
            found = self._store.search(
                dense=dense,
                sparse=sparse,
                limit=limit,
                min_similarity=self._min_similarity,
                rrf_k=self._rrf_k,
            )
        return MemorySearch([self._view(record, score) for record, score in found], warnings)

    def close(self) -> None:
        self._store.close()

    # -- helpers ----------------------------------------------------------------------------------

    def _open(self) -> None:
        """Create the store on first use, or re-encode every fact when the embedder or keyword encoding
        changed since they were stored. Call with the lock held."""
        if self._opened:
            return
        stored = self._store.identity()
        if stored is None:
            self._store.create(self._identity)
        elif not stored.matches(self._identity):
            facts = self._store.all()
            log.info(
                "re-encoding %d remembered facts for %s (were %s)",
                len(facts),
                self._identity.embedding_model,
                stored.embedding_model,
            )
            self._store.create(self._identity)
            for fact in facts:
                self._write(fact)
        self._pending = any(not fact.dense_ready for fact in self._store.all())
        self._opened = True

    def _write(self, record: MemoryRecord) -> MemoryRecord:
        dense = None
        health = self._index.embedder_health
        if health is not None:
            vectors = health.documents([memory_text(record)]) if health.worth_trying() else None
            if vectors is None:
                log.warning("remembering %r without dense vector for now: %s", record.key, health.describe())
            else:
                dense = vectors[0]
        record = MemoryRecord(
            record.key,
            record.value,
            record.source,
            record.created_at,
            record.updated_at,
            dense_ready=self._embedder is None or dense is not None,
        )
        fields = DocumentFields(
            body=record.value, title=key_words(record.key), headings=(file_stem(record.source),)
        )
        self._store.put(record, sparse=self._encoder.encode_document(fields), dense=dense)
        if not record.dense_ready:
            self._pending = True
        return record

    def _heal(self) -> None:
        """Embed facts stored while the embedder was down (at most every HEAL_INTERVAL_SECONDS)."""
        now = time.monotonic()
        if not self._pending or now < self._next_heal:
            return
        self._next_heal = now + HEAL_INTERVAL_SECONDS
        waiting = [fact for fact in self._store.all() if not fact.dense_ready]
        healed = [self._write(fact) for fact in waiting]
        self._pending = any(not fact.dense_ready for fact in healed)

    def _view(self, record: MemoryRecord, score: float | None = None) -> MemoryView:
        try:
            note = self._index.note_record(record.source)
        except (IndexNotReadyError, IndexUnavailableError):
            note = None
        cleaned = self._policy.clean(record.value)
        return MemoryView(
            key=record.key,
            value=cleaned.text,
            source=record.source,
            source_exists=note is not None,
            created_at=record.created_at,
            updated_at=record.updated_at,
            sensitive_categories=self._policy.categories_of(cleaned.text, tags=note.tags if note else ()),
            redactions=cleaned.redactions,
            score=score,
        )
