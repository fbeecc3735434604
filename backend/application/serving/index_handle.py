"""The serving index: the generation searches, note reads, memory and verify read from, and its health.

`IndexHandle` opens the active generation, answers the read questions (`ServingIndex`), leases it to a reader
so a rebuild cannot close it mid-read, and says when the index cannot be written or searched (damaged files,
another model). `Indexer` writes into the generation it serves; a rebuild fills a sibling, adopted at once.

A generation built for another identity (another model, variant, dense windows or keyword encoding: an
upgrade, or a setting changed) is *outdated*. It keeps serving as it was built: queries are embedded by the
model that made its vectors (`serving_health`, loaded through `serving_embedder`) and its keyword vectors
answer while the keyword encoding is the same, so searches stay hybrid while a rebuild re-embeds the vault
into a sibling for the configured identity. Only what cannot be served is left out, with a warning: dense
search when that model cannot be loaded (`keyword_fallback`), keyword search when the encoding changed
(`dense_fallback`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from backend.application.ports import ChunkStore, Embedder, IndexCatalog, Vault
from backend.application.serving.embedder_health import EmbedderHealth
from backend.application.serving.generation_texts import (
    describe_mismatch,
    left_by,
    one_side_only,
    until_switch,
)
from backend.application.serving.live_index import IndexedNote, LiveIndex
from backend.application.serving.note_graph import NoteGraph
from backend.application.serving.serving_reads import ServingReads
from backend.domain.errors import EmbeddingModelMismatchError, IndexCorruptedError, IndexNotReadyError
from backend.domain.links import NoteRecord
from backend.domain.models import FileProblem, IndexIdentity

log = logging.getLogger(__name__)

# The embedder that makes the vectors of an index built for this identity (None: it cannot be loaded here).
ServingEmbedder = Callable[[IndexIdentity], Embedder | None]


class IndexHandle(ServingReads):
    def __init__(
        self,
        *,
        catalog: IndexCatalog,
        vault: Vault,
        identity: IndexIdentity,
        embedder_health: EmbedderHealth | None,
        serving_embedder: ServingEmbedder | None = None,
    ) -> None:
        self._catalog = catalog
        self._vault = vault
        self._identity = identity
        self._health = embedder_health
        self._serving_embedder = serving_embedder
        self._serving_health: EmbedderHealth | None = None  # the outdated generation's model, while it serves
        self.building: IndexHandle | None = None  # the sibling a rebuild is filling now
        # One writer at a time: job batches, watcher changes, a rebuild's switch, a consistent read.
        self.writer = threading.RLock()
        self._live: LiveIndex | None = None
        self._ready = False  # the collection exists and holds this embedder's vectors
        self._mismatch: IndexIdentity | None = None  # what the serving (outdated) generation was built for
        self._corrupted: str | None = None  # why the serving index cannot be trusted; a rebuild clears it
        self._complete = False  # a full pass over the vault has finished at least once
        self._run_failures: list[FileProblem] = []
        self.last_indexed: datetime | None = None
        self.last_sync: datetime | None = None

    # -- state -------------------------------------------------------------------------------------

    @property
    def identity(self) -> IndexIdentity:
        """What the service is configured for (what a new generation is built for)."""
        return self._identity

    @property
    def serving_identity(self) -> IndexIdentity:
        """What the serving generation was built for: `identity`, or an outdated generation's own."""
        return self._mismatch or self._identity

    @property
    def embedder_health(self) -> EmbedderHealth | None:
        """The configured embedder's last failure and whether to try it now (None without an embedder)."""
        return self._health

    @property
    def serving_health(self) -> EmbedderHealth | None:
        """The embedder whose vectors the serving generation holds: it embeds the queries and the notes
        written into it. The configured one, or for an outdated generation the model it was built with (None
        when that cannot be loaded, or the generation holds no dense vectors)."""
        return self._health if self._mismatch is None else self._serving_health

    @property
    def vault(self) -> Vault:
        return self._vault

    @property
    def generation(self) -> str | None:
        return self._live.generation if self._live else None

    @property
    def indexed_notes(self) -> int:
        live = self._live
        return live.note_count() if live else 0

    @property
    def dense_pending(self) -> int:
        """Notes whose chunks have keyword vectors only, waiting for the embedder."""
        live = self._live
        dense = self.serving_identity.dimension is not None and self._health is not None
        return live.dense_pending_count() if live and dense else 0

    def rebuild_progress(self) -> tuple[int, int]:
        """A generation being filled: the notes it holds with all their vectors, of the notes on the disk
        (0 of 0 until its scan)."""
        live = self._live
        if live is None:
            return 0, 0
        held = live.note_count()
        return held - self.dense_pending, max(live.disk_count(), held)

    @property
    def unindexed_files(self) -> int:
        """Notes seen on the disk that the index does not hold (yet, or because they failed)."""
        live = self._live
        return live.unindexed_count() if live else 0

    @property
    def failed_files(self) -> list[FileProblem]:
        """Files skipped by the last pass, and indexed notes with problems (e.g. invalid frontmatter)."""
        live = self._live
        return [*self._run_failures, *(live.note_problems() if live else [])]

    @property
    def run_failures(self) -> list[FileProblem]:
        """The files the last passes could not index."""
        return self._run_failures

    def passed(self, failures: list[FileProblem], *, full: bool, changed: bool) -> None:
        """A pass over the vault (`full`) or over a few paths ended: what failed, and when."""
        now = datetime.now(UTC)
        self._run_failures = failures
        if full:
            self._complete = True
        if full or changed:
            self.last_indexed = now
        self.last_sync = now

    @property
    def store(self) -> ChunkStore:
        return self.current().store

    @property
    def graph(self) -> NoteGraph:
        return self.current().graph

    @contextmanager
    def serving(self) -> Iterator[LiveIndex]:
        """The generation to read from, kept open until the caller is done even if a rebuild switches."""
        with self.current().lease() as live, self.corruption_noted(live):
            yield live

    def current(self) -> LiveIndex:
        """The serving generation (not leased: for the writer, which holds the writer lock)."""
        if self._corrupted is not None:
            raise IndexCorruptedError(self._corrupted)
        live = self._live
        if live is None:
            raise IndexNotReadyError("the index has not been opened yet")
        return live

    def writable(self) -> LiveIndex:
        self.check_writable()
        return self.current()

    # -- what it cannot do -------------------------------------------------------------------------------

    @property
    def corrupted(self) -> str | None:
        """Why the serving index's files cannot be read back (damaged on disk), or None. Until a rebuild
        switches to a sound generation, searches and writes answer INDEX_CORRUPTED."""
        return self._corrupted

    @contextmanager
    def corruption_noted(self, live: LiveIndex | None) -> Iterator[None]:
        """Damaged files found while using `live` mark the index corrupted (when `live` is serving)."""
        try:
            yield
        except IndexCorruptedError as exc:
            if live is None or live is self._live:  # not a generation being built or retired
                if self._corrupted is None:
                    log.error(
                        "the index is damaged, searches answer INDEX_CORRUPTED until a rebuild: %s",
                        exc.detail,
                    )
                self._corrupted = exc.detail
            raise

    @property
    def model_mismatch(self) -> bool:
        """The serving generation was built for another identity (see the module's docstring)."""
        return self._mismatch is not None

    @property
    def accepts_writes(self) -> bool:
        """Notes can be written into the serving generation now: it is sound, and built for the configured
        identity, or outdated but with the same keyword encoding and its own model at hand (changes made
        while it is re-embedded are searchable at once, and carried over by the rebuild's last pass)."""
        stored = self._mismatch
        if self._corrupted is not None or not self._ready:
            return False
        if stored is None:
            return True
        same_keywords = stored.keyword_encoding == self._identity.keyword_encoding
        return same_keywords and (stored.dimension is None or self._serving_health is not None)

    @property
    def complete(self) -> bool:
        return self._complete

    def check_writable(self) -> None:
        if self._corrupted is not None:
            raise IndexCorruptedError(self._corrupted)
        if self._mismatch is not None and not self.accepts_writes:
            raise EmbeddingModelMismatchError(describe_mismatch(self._mismatch, self._identity))
        if not self._ready:
            raise IndexNotReadyError("the index has not been created yet")

    @property
    def keyword_fallback(self) -> str | None:
        """Why searches answer by keyword only from an outdated generation, or None: its keyword vectors are
        still right (same keyword encoding) but the model that made its dense vectors cannot be loaded (an
        Ollama model removed, say), and they are never queried with another model."""
        stored = self._mismatch
        if stored is None or stored.keyword_encoding != self._identity.keyword_encoding:
            return None
        if self._serving_health is not None:
            return None
        return one_side_only(stored, self._identity, "keyword", rebuilding=self.building is not None)

    @property
    def dense_fallback(self) -> str | None:
        """Why searches answer by dense vectors only from an outdated generation, or None: its keyword vectors
        were built with another keyword encoding, its dense vectors are those of a model at hand."""
        stored = self._mismatch
        if stored is None or stored.keyword_encoding == self._identity.keyword_encoding:
            return None
        if self._serving_health is None:
            return None
        return one_side_only(stored, self._identity, "dense", rebuilding=self.building is not None)

    def check_searchable(self) -> None:
        """Raise when a search cannot be answered at all; a partly built index can answer."""
        if self._corrupted is not None:
            raise IndexCorruptedError(self._corrupted)
        stored = self._mismatch
        if stored is not None and self.keyword_fallback is None and self.dense_fallback is None:
            if stored.keyword_encoding != self._identity.keyword_encoding:  # neither side can answer
                until = until_switch(rebuilding=self.building is not None)
                raise EmbeddingModelMismatchError(f"{describe_mismatch(stored, self._identity)} {until}")
        if stored is None:
            self.check_writable()
        if not self._complete and self.indexed_notes == 0:
            raise IndexNotReadyError("the first indexing of the vault has not indexed any note yet")

    # -- opening -------------------------------------------------------------------------------------

    def open(self) -> bool:
        """Open the active generation (creating the first one) and load what it holds.

        Returns True when the index is empty or new and a full indexing pass is needed. Leftovers of a
        rebuild that died before its switch are dropped. Damaged index files do not raise: the index is
        marked corrupted (see `corrupted`) so the service still starts and a rebuild can replace it.
        """
        try:
            with self.corruption_noted(None):
                return self._open()
        except IndexCorruptedError:
            return False
        except BaseException:  # e.g. a full disk: release what was loaded, so a later open() starts clean
            self.close()
            raise

    def _open(self) -> bool:
        active = self._catalog.active()
        present = self._catalog.generations()
        if active is not None and active not in present and present:
            # the pointer names a generation that is gone while others remain: dropping those as leftovers
            # could throw away the real index, so nothing is touched until someone rebuilds
            raise IndexCorruptedError(
                f"the active index generation {active} is missing (present: {', '.join(present)})"
            )
        for leftover in present:
            if leftover != active:
                log.warning("dropping index generation %s %s", leftover, left_by(leftover, active))
                self.drop(leftover)
        if active is None:
            self.start_generation()
            self._catalog.activate(self.current().generation)
            return True
        self._live = live = self._attach(active)
        stored = live.store.identity()
        if stored is None:  # created but never finished (a crash right after create): start it again
            live.store.create(self._identity)
            live.graph.open(reset=True)
            live.fresh = True
            self._ready = True
            return True
        if not stored.matches(self._identity):
            self._outdated(live, stored)
            return False
        if stored.query_instruction != self._identity.query_instruction:
            # queries are embedded as they are asked: the new instruction applies from the next search on,
            # and no stored vector changes (the record keeps what the index was built with)
            log.info(
                "the query instruction is now %r (the index was built with %r); the documents need no "
                "re-embedding",
                self._identity.query_instruction,
                stored.query_instruction,
            )
        self._ready = True
        self._load(live, live.graph.open(reset=False))
        return not live.note_count()

    def _outdated(self, live: LiveIndex, stored: IndexIdentity) -> None:
        """The active generation was built for `stored`: serve it as it was built, with its own model."""
        self._mismatch = stored
        self._ready = True
        if stored.dimension is not None:
            # the same vectors: the configured embedder embeds its queries and the notes written into it
            same_model = (stored.embedding_model, stored.dimension, stored.document_instruction) == (
                self._identity.embedding_model,
                self._identity.dimension,
                self._identity.document_instruction,
            )
            if same_model:
                self._serving_health = self._health
            elif self._serving_embedder is not None:
                embedder = self._serving_embedder(stored)
                if embedder is not None:
                    self._serving_health = EmbedderHealth(embedder, dimension=stored.dimension)
        if self._serving_health is not None or stored.dimension is None:
            log.warning(
                "%s: the index keeps answering with %s until a rebuild switches it to the configured ones",
                describe_mismatch(stored, self._identity),
                stored.embedding_model,
            )
        else:
            log.error(
                "%s, and %s cannot be loaded here",
                describe_mismatch(stored, self._identity),
                stored.embedding_model,
            )
        if self.keyword_fallback is not None or self._serving_health is not None or self.accepts_writes:
            self._load(live, live.graph.open(reset=False))

    def start_generation(self) -> None:
        """Serve a new, empty generation (not yet the active one): the first index, or a rebuild's sibling."""
        generation = self._catalog.new_generation()
        live = self._attach(generation)
        try:
            live.store.create(self._identity)
            live.graph.open(reset=True)
        except BaseException:
            live.close()
            raise
        live.fresh = True
        self._live = live
        self._ready = True

    def sibling(self) -> IndexHandle:
        """A handle on a new, empty generation beside this one, for a rebuild to fill."""
        sibling = IndexHandle(
            catalog=self._catalog, vault=self._vault, identity=self._identity, embedder_health=self._health
        )
        sibling.start_generation()
        return sibling

    def adopt(self, sibling: IndexHandle) -> LiveIndex | None:
        """Serve what `sibling` built (a rebuild's switch; the caller holds the writer lock). Returns the
        replaced generation, for `retire` once the lock is let go (it waits for the searches reading it)."""
        live = sibling.current()
        self._catalog.activate(live.generation)
        old, self._live = self._live, live
        self._mismatch = None  # now: cleared after the old model closed, searches answered keyword-only
        sibling.hand_over()
        serving, self._serving_health = self._serving_health, None
        if serving is not None and serving is not self._health:
            serving.close()  # the outdated generation's own model: a query still running keeps its session
        self._corrupted = None
        self._ready = True
        self.passed(sibling.run_failures, full=True, changed=True)
        return old

    def retire(self, old: LiveIndex | None) -> None:
        """Close a replaced generation once its last reader is done, and drop it."""
        if old is not None:
            try:
                old.retire()
            except Exception as exc:  # a damaged generation may fail to flush: it is dropped anyway
                log.warning("closing the replaced index generation %s failed: %s", old.generation, exc)
            self.drop(old.generation)
        log.info("rebuild switched to index generation %s", self.generation)

    def hand_over(self) -> None:
        """Let go of the generation this handle built: the handle that adopted it serves (and closes) it."""
        self._live = None

    def close(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            try:
                live.close()
            except IndexCorruptedError as exc:  # damaged files must not turn a shutdown into a crash
                log.warning("closing the index: %s", exc.detail)

    def discard(self) -> None:
        """Close and drop this handle's generation (a rebuild that failed before its switch)."""
        generation = self.generation
        self.close()
        if generation is not None:
            self.drop(generation)

    def drop(self, generation: str) -> None:
        try:
            self._catalog.drop(generation)
        except Exception as exc:  # another process may still hold it: try again at the next start
            log.warning("could not drop index generation %s: %s", generation, exc)

    def _attach(self, generation: str) -> LiveIndex:
        store, graph_store = self._catalog.open(generation)
        return LiveIndex(generation, store, graph_store, NoteGraph(store=graph_store, vault=self._vault))

    def _load(self, live: LiveIndex, records: list[NoteRecord]) -> None:
        # A note record is written after its chunks, so a record means the note was fully indexed.
        live.load(
            {
                r.path: IndexedNote(
                    r.content_hash, r.mtime, r.size, r.problems, r.dense_ready, r.link_count, r.chunk_count
                )
                for r in records
            }
        )
        if records:
            self._complete = True  # built by an earlier run; a start-up sync catches up with edits
            self.last_indexed = self.last_indexed or datetime.now(UTC)  # that run's, when recorded
