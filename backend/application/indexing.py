"""Indexing use case: vault -> parsed notes -> chunks -> dense + sparse vectors -> store.

One `IndexService` serves the HTTP routes, the CLI, the start-up job and the watcher. It keeps a small
in-memory picture of what the store holds per note (content hash, mtime, size) so unchanged notes are
skipped without reading them, and it follows three rules:

* never pay twice for a vector: a note that moved (same content under a new path) takes its dense vectors
  from its old points, and the embedder sits behind a persistent cache for everything else;
* keyword first: a pass with many notes to embed writes every note's keyword vectors first (searchable in
  seconds), and fills in dense vectors behind it, from the first notes written on (the embedder never idles);
* one writer at a time, per batch: the watcher's small changes interleave with a long job instead of waiting
  for it, and each batch re-reads the files it writes, so the last write of a note is its latest text.

A rebuild fills a new index generation (see `IndexCatalog`) while this one keeps answering, then switches.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from backend.application import pipeline_channels as channels
from backend.application.embedder_health import EmbedderHealth
from backend.application.jobs import JobProgress
from backend.application.live_index import IndexedNote, LiveIndex
from backend.application.note_graph import LinkCounts, NoteGraph, NoteLinks
from backend.application.pipeline_channels import PathFeed
from backend.application.ports import ChunkStore, Embedder, IndexCatalog, NoteParser, Vault
from backend.domain.change_plan import ChangePlan, KnownNote, ObservedFile, looks_unchanged, plan_changes
from backend.domain.chunking import chunk_note
from backend.domain.dense_windows import chunk_windows
from backend.domain.errors import (
    EmbeddingModelMismatchError,
    IndexCorruptedError,
    IndexNotReadyError,
)
from backend.domain.ids import chunk_point_id, content_hash
from backend.domain.index_consistency import RecordedNote, StoreDrift, store_drift
from backend.domain.links import LinkRecord, NoteRecord
from backend.domain.models import (
    Chunk,
    FileProblem,
    IndexIdentity,
    NoteFile,
    ParsedNote,
    PointRecord,
    shown_name,
)
from backend.domain.payload import HEADING_SEPARATOR, chunk_payload
from backend.domain.sparse import DocumentFields, SparseEncoder
from backend.domain.vault_paths import vault_path

log = logging.getLogger(__name__)

EMBED_BATCH = 64  # chunks per embedder call: large enough to amortise, small enough for steady progress
PROGRESS_LOG_SECONDS = 10.0  # long passes say where they are in the log, not only in /index/status
# Chunks per embedder call in the dense pass: the embedder sorts each call by token length, and wider calls
# pad less (Zettelkasten chunks: 2.3x the real tokens computed in calls of 64, 1.2x in calls of 256).
DENSE_WINDOW = 256
# Batches waiting between the reader, the embedder and the writer: enough that the embedder never waits for
# the other two, few enough that memory stays flat whatever the vault's size.
PIPELINE_DEPTH = 4
# From this many notes to embed in one pass, the keyword pass never waits for the embedder (which follows
# it): a watcher's handful of edits is embedded at once, a first index of thousands is searchable in seconds.
KEYWORD_FIRST_MIN = 32


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    max_tokens: int = 200
    overlap_tokens: int = 30


@dataclass(slots=True)
class IndexReport:
    scanned: int = 0
    indexed: int = 0
    unchanged: int = 0
    removed: int = 0
    renamed: int = 0
    chunks: int = 0
    reused_vectors: int = 0  # dense vectors taken from a moved note's old points instead of the embedder
    repaired: int = 0  # notes whose chunk points did not add up with their record, indexed again
    failed: list[FileProblem] = field(default_factory=list)


def embedding_text(note: ParsedNote, chunk: Chunk) -> str:
    """What is embedded: the chunk under its note title and heading path, so a chunk about "Risks" in
    "Database migration" is found by either."""
    context = HEADING_SEPARATOR.join((note.title, *chunk.heading_path))
    return f"{context}\n\n{chunk.text}"


def window_texts(note: ParsedNote, chunk: Chunk, max_words: int) -> list[str]:
    """What is embedded for each window of a chunk (none for a one-block chunk, or with windows off): the
    window under the same title and heading path as the chunk."""
    if max_words <= 0:
        return []
    context = HEADING_SEPARATOR.join((note.title, *chunk.heading_path))
    return [f"{context}\n\n{window}" for window in chunk_windows(chunk.text, max_words)]


def keyword_fields(note: ParsedNote, chunk: Chunk) -> DocumentFields:
    """What is keyword-encoded, by field: the note's names weigh more than its text (BM25F)."""
    return DocumentFields(
        body=chunk.text,
        file_name=file_stem(note.path),
        title=note.title,
        aliases=note.aliases,
        tags=note.tags,
        headings=chunk.heading_path,
    )


def file_stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _reuse_key(heading_path: Iterable[str], text: str) -> tuple[tuple[str, ...], str]:
    # Without the title: a note renamed without a frontmatter title gets a new title (its file name), and
    # its vectors are still the right ones for its unchanged text. They keep the old name until it is edited.
    return tuple(heading_path), text


@dataclass(slots=True)
class _PendingNote:
    file: NoteFile
    note: ParsedNote
    chunks: list[Chunk]
    texts: list[str]
    file_hash: str
    problems: tuple[str, ...]
    twin: str | None = None  # an indexed note with the same content that is gone from the disk: a move
    vectors: list[list[float] | None] = field(default_factory=list)
    window_texts: list[list[str]] = field(default_factory=list)  # per chunk; empty lists without windows
    window_vectors: list[list[list[float] | None]] = field(default_factory=list)

    def dense_missing(self) -> bool:
        return None in self.vectors or any(None in windows for windows in self.window_vectors)

    def forget_dense(self) -> None:
        self.vectors = [None] * len(self.vectors)
        self.window_vectors = [[None] * len(windows) for windows in self.window_texts]


class IndexService:
    def __init__(
        self,
        *,
        catalog: IndexCatalog,
        embedder: Embedder | None,
        vault: Vault,
        parser: NoteParser,
        encoder: SparseEncoder,
        identity: IndexIdentity,
        chunking: ChunkingOptions | None = None,
        keyword_first_min: int = KEYWORD_FIRST_MIN,
        embedder_health: EmbedderHealth | None = None,
    ) -> None:
        self._catalog = catalog
        self._embedder = embedder
        if embedder is not None and embedder_health is None:
            embedder_health = EmbedderHealth(embedder, dimension=identity.dimension)
        self._health = embedder_health if embedder is not None else None
        self._vault = vault
        self._parse = parser
        self._encoder = encoder
        self._identity = identity
        self._chunking = chunking or ChunkingOptions()
        self._keyword_first_min = keyword_first_min
        self._state = threading.Lock()  # guards the live index's notes and the counters below
        self._writer = threading.RLock()  # one writer at a time: job batches, watcher changes, the switch
        self._live: LiveIndex | None = None
        self._ready = False  # the collection exists and holds this embedder's vectors
        self._mismatch: IndexIdentity | None = None
        self._corrupted: str | None = None  # why the serving index cannot be trusted; a rebuild clears it
        self._complete = False  # a full pass over the vault has finished at least once
        self._run_failures: list[FileProblem] = []
        self._on_disk: set[str] = set()  # notes the last scan and the watcher saw on the disk
        self.last_indexed: datetime | None = None
        self.last_sync: datetime | None = None

    # -- state -------------------------------------------------------------------------------------

    @property
    def identity(self) -> IndexIdentity:
        return self._identity

    @property
    def embedder_health(self) -> EmbedderHealth | None:
        """The embedder's last failure and whether to try it now (None without an embedder)."""
        return self._health

    @property
    def vault(self) -> Vault:
        return self._vault

    @property
    def generation(self) -> str | None:
        return self._live.generation if self._live else None

    @property
    def indexed_notes(self) -> int:
        with self._state:
            return len(self._live.notes) if self._live else 0

    @property
    def dense_pending(self) -> int:
        """Notes whose chunks have keyword vectors only, waiting for the embedder."""
        if self._embedder is None:
            return 0
        with self._state:
            notes = self._live.notes if self._live else {}
            return sum(1 for state in notes.values() if not state.dense_ready)

    @property
    def unindexed_files(self) -> int:
        """Notes seen on the disk that the index does not hold (yet, or because they failed)."""
        with self._state:
            notes = self._live.notes if self._live else {}
            return sum(1 for path in self._on_disk if path not in notes)

    @property
    def failed_files(self) -> list[FileProblem]:
        """Files skipped by the last pass, and indexed notes with problems (e.g. invalid frontmatter)."""
        with self._state:
            notes = self._live.notes if self._live else {}
            noted = [
                FileProblem(path, problem)
                for path, state in sorted(notes.items())
                for problem in state.problems
            ]
        return [*self._run_failures, *noted]

    @property
    def store(self) -> ChunkStore:
        return self._current().store

    @property
    def graph(self) -> NoteGraph:
        return self._current().graph

    @contextmanager
    def serving(self) -> Iterator[LiveIndex]:
        """The generation to read from, kept open until the caller is done even if a rebuild switches."""
        with self._current().lease() as live:
            try:
                yield live
            except IndexCorruptedError as exc:
                self._mark_corrupted(live, exc)
                raise

    def chunk_count(self) -> int:
        with self.serving() as live:
            return live.store.count()

    def note_links(self, path: str) -> NoteLinks:
        path = vault_path(path)
        with self.serving() as live:
            return live.graph.links_of(path)

    def note_record(self, path: str) -> NoteRecord | None:
        """The indexed note at `path`, or None when the index does not hold it."""
        with self.serving() as live:
            return live.graph.record(path)

    def note_records(self) -> list[NoteRecord]:
        with self.serving() as live:
            return live.graph.records()

    def link_counts(self) -> LinkCounts:
        with self.serving() as live:
            return live.graph.counts()

    def _current(self) -> LiveIndex:
        if self._corrupted is not None:
            raise IndexCorruptedError(self._corrupted)
        live = self._live
        if live is None:
            raise IndexNotReadyError("the index has not been opened yet")
        return live

    @property
    def corrupted(self) -> str | None:
        """Why the serving index's files cannot be read back (damaged on disk), or None. Until a rebuild
        switches to a sound generation, searches and writes answer INDEX_CORRUPTED."""
        return self._corrupted

    def _mark_corrupted(self, live: LiveIndex | None, exc: IndexCorruptedError) -> None:
        if live is not None and live is not self._live:
            return  # a generation being built or retired, not the one that serves
        if self._corrupted is None:
            log.error("the index is damaged, searches answer INDEX_CORRUPTED until a rebuild: %s", exc.detail)
        self._corrupted = exc.detail

    @property
    def model_mismatch(self) -> bool:
        return self._mismatch is not None

    @property
    def complete(self) -> bool:
        return self._complete

    def check_writable(self) -> None:
        if self._corrupted is not None:
            raise IndexCorruptedError(self._corrupted)
        if self._mismatch is not None:
            raise EmbeddingModelMismatchError(self._mismatch_message(self._mismatch))
        if not self._ready:
            raise IndexNotReadyError("the index has not been created yet")

    @property
    def keyword_fallback(self) -> str | None:
        """Why searches answer by keyword only from an index built with another embedding model, or None.

        Its keyword vectors are still right (same keyword encoding), so it keeps answering, degraded, until a
        rebuild to the configured model switches over; its dense vectors are never queried with this model.
        """
        stored = self._mismatch
        if stored is None or stored.keyword_encoding != self._identity.keyword_encoding:
            return None
        return (
            f"{self._mismatch_message(stored)}: answered from keyword search only until a rebuild "
            "(POST /index/rebuild) switches to the configured model"
        )

    def check_searchable(self) -> None:
        """Raise when a search cannot be answered at all; a partly built index can answer."""
        if self._corrupted is not None:
            raise IndexCorruptedError(self._corrupted)
        if self.keyword_fallback is None:
            self.check_writable()
        if not self._complete and self.indexed_notes == 0:
            raise IndexNotReadyError("the first indexing of the vault has not indexed any note yet")

    def _mismatch_message(self, stored: IndexIdentity) -> str:
        if (
            stored.embedding_model != self._identity.embedding_model
            or stored.dimension != self._identity.dimension
        ):
            return (
                f"the index was built with {stored.embedding_model} ({stored.dimension}-d) but the service "
                f"is configured for {self._identity.embedding_model} ({self._identity.dimension}-d); "
                "it will not mix models"
            )
        if stored.dense_windows != self._identity.dense_windows:
            return (
                f"the index's dense vectors were built {_layout(stored.dense_windows)} but the service is "
                f"configured for {_layout(self._identity.dense_windows)} (DENSE_WINDOW_WORDS); it will not "
                "mix them"
            )
        return (
            f"the index's keyword vectors were built with [{stored.keyword_encoding or 'an older encoder'}] "
            f"but the service is configured for [{self._identity.keyword_encoding}]; it will not mix them"
        )

    # -- opening -------------------------------------------------------------------------------------

    def open(self) -> bool:
        """Open the active generation (creating the first one) and load what it holds.

        Returns True when the index is empty or new and a full indexing pass is needed. Leftovers of a
        rebuild that died before its switch are dropped. Damaged index files do not raise: the index is
        marked corrupted (see `corrupted`) so the service still starts and a rebuild can replace it.
        """
        try:
            return self._open()
        except IndexCorruptedError as exc:
            self._mark_corrupted(None, exc)
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
                log.warning("dropping index generation %s left by an unfinished rebuild", leftover)
                self._drop(leftover)
        if active is None:
            generation = self._catalog.new_generation()
            self._live = self._create(generation)
            self._catalog.activate(generation)
            self._ready = True
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
            self._mismatch = stored
            log.error("%s", self._mismatch_message(stored))
            if self.keyword_fallback is not None:
                self._load_state(live, live.graph.open(reset=False))
            return False
        self._ready = True
        self._load_state(live, live.graph.open(reset=False))
        return not live.notes

    def close(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            try:
                live.close()
            except IndexCorruptedError as exc:  # damaged files must not turn a shutdown into a crash
                log.warning("closing the index: %s", exc.detail)

    def _attach(self, generation: str) -> LiveIndex:
        store, graph_store = self._catalog.open(generation)
        return LiveIndex(generation, store, graph_store, NoteGraph(store=graph_store, vault=self._vault))

    def _create(self, generation: str) -> LiveIndex:
        live = self._attach(generation)
        try:
            live.store.create(self._identity)
            live.graph.open(reset=True)
        except BaseException:
            live.close()
            raise
        live.fresh = True
        return live

    def _drop(self, generation: str) -> None:
        try:
            self._catalog.drop(generation)
        except Exception as exc:  # another process may still hold it: try again at the next start
            log.warning("could not drop index generation %s: %s", generation, exc)

    def _load_state(self, live: LiveIndex, records: Sequence[NoteRecord]) -> None:
        # A note record is written after its chunks, so a record means the note was fully indexed.
        notes = {
            r.path: IndexedNote(r.content_hash, r.mtime, r.size, r.problems, r.dense_ready, r.link_count)
            for r in records
        }
        with self._state:
            live.notes = notes
            self._on_disk = set(notes)
        if notes:
            self._complete = True  # built by an earlier run; a start-up sync catches up with edits
            self.last_indexed = datetime.now(UTC)

    # -- jobs ----------------------------------------------------------------------------------------

    def rebuild(self, progress: JobProgress | None = None) -> IndexReport:
        """Index the whole vault into a new generation while this one keeps serving, then switch to it.

        Changes the watcher applies meanwhile go to the serving index; a last pass under the writer lock
        carries them over before the switch. A rebuild that fails leaves the serving index as it was.
        """
        generation = self._catalog.new_generation()
        builder = IndexService(
            catalog=self._catalog,
            embedder=self._embedder,
            vault=self._vault,
            parser=self._parse,
            encoder=self._encoder,
            identity=self._identity,
            chunking=self._chunking,
            keyword_first_min=self._keyword_first_min,
            embedder_health=self._health,
        )
        builder._live = builder._create(generation)
        builder._ready = True
        switched = False
        old: LiveIndex | None = None
        try:
            report = builder.sync(progress)
            if progress:
                progress.update(phase="switching")
            with self._writer:
                builder.sync()  # what changed on the disk while the new generation was being filled
                self._catalog.activate(generation)
                with self._state:
                    old, self._live = self._live, builder._live
                    self._on_disk = set(builder._on_disk)
                switched = True
                self._mismatch = None
                self._corrupted = None
                self._ready = True
                self._complete = True
                self._run_failures = builder._run_failures
                self.last_indexed = self.last_sync = datetime.now(UTC)
        finally:
            if not switched:
                builder.close()
                self._drop(generation)
        if old is not None:
            try:
                old.retire()
            except Exception as exc:  # a damaged generation may fail to flush: it is dropped anyway
                log.warning("closing the replaced index generation %s failed: %s", old.generation, exc)
            self._drop(old.generation)
        log.info("rebuild switched to index generation %s", generation)
        return report

    def sync(self, progress: JobProgress | None = None) -> IndexReport:
        """Bring the index in line with the whole vault: index new and changed notes, recognise moves by
        content, drop removed notes, and embed notes that still lack dense vectors."""
        self.check_writable()
        live = self._current()
        with self._corruption_noted(live):
            return self._sync(live, progress)

    @contextmanager
    def _corruption_noted(self, live: LiveIndex) -> Iterator[None]:
        try:
            yield
        except IndexCorruptedError as exc:
            self._mark_corrupted(live, exc)
            raise

    def _sync(self, live: LiveIndex, progress: JobProgress | None) -> IndexReport:
        report = IndexReport()
        if progress:
            progress.update(phase="scanning")
        files, skipped = self._vault.scan()
        live.graph.refresh_files()
        if not live.fresh:
            report.repaired = self._repair(live)
        report.scanned = len(files)
        report.failed.extend(skipped)
        present = {f.rel_path: f for f in files}
        with self._state:
            self._on_disk = set(present)
            known = dict(live.notes)
        plan = _plan(known, present)
        candidates = [present[path] for path in plan.to_write]
        report.unchanged = len(plan.unchanged)
        gone = list(plan.gone)
        self._apply(live, candidates, gone, report, progress, all_pending=True)
        self._run_failures = report.failed
        self._complete = True
        self.last_indexed = self.last_sync = datetime.now(UTC)
        log.info(
            "sync done: %d scanned, %d indexed (%d chunks), %d unchanged, %d moved, %d removed, %d failed",
            report.scanned,
            report.indexed,
            report.chunks,
            report.unchanged,
            report.renamed,
            report.removed,
            len(report.failed),
        )
        return report

    def refresh(self, paths: Iterable[str], folders: Iterable[str] = ()) -> IndexReport:
        """Bring these notes (and everything under these folders) in line with the disk: what the watcher
        calls with the paths an event touched, without scanning the whole vault."""
        with self._writer:  # a rebuild cannot switch generations under a half-applied change
            return self._refresh(paths, folders)

    def _refresh(self, paths: Iterable[str], folders: Iterable[str]) -> IndexReport:
        self.check_writable()
        live = self._current()
        with self._corruption_noted(live):
            return self._refresh_live(live, paths, folders)

    def _refresh_live(self, live: LiveIndex, paths: Iterable[str], folders: Iterable[str]) -> IndexReport:
        report = IndexReport()
        observed: dict[str, NoteFile] = {}
        considered = set(paths)
        for folder in folders:
            files, skipped = self._vault.scan(folder)
            observed.update((f.rel_path, f) for f in files)
            report.failed.extend(skipped)
            prefix = f"{folder.strip('/')}/"
            with self._state:
                considered.update(path for path in live.notes if path.startswith(prefix))
        for path in considered - observed.keys():
            found = self._vault.stat(path)
            if found is not None:
                observed[path] = found
            elif (reason := self._vault.problem(path)) is not None:
                report.failed.append(FileProblem(path, reason))  # e.g. a symlink created meanwhile
        with self._state:
            known = dict(live.notes)
            self._on_disk.update(observed)
            self._on_disk.difference_update(considered - observed.keys())
        plan = _plan(known, observed, scope=considered)
        gone = list(plan.gone)
        live.graph.update_files(present=observed, absent=gone)
        candidates = [observed[path] for path in plan.to_write]
        report.scanned = len(observed)
        report.unchanged = len(plan.unchanged)
        self._apply(live, candidates, gone, report, None, all_pending=False)
        self._run_failures = _merged_failures(self._run_failures, report.failed, considered, folders)
        if report.indexed or report.removed:
            self.last_indexed = datetime.now(UTC)
        self.last_sync = datetime.now(UTC)
        log.info(
            "applied changes: %d indexed, %d moved, %d removed, %d unchanged",
            report.indexed,
            report.renamed,
            report.removed,
            report.unchanged,
        )
        return report

    def _repair(self, live: LiveIndex) -> int:
        """Make the stored points and links add up with the note records before a full pass: points and
        links without a record go, and notes whose points or links were lost or mixed up are removed, so
        the pass indexes them again."""
        with self._writer:
            with self._state:
                records = {
                    p: RecordedNote(n.content_hash, n.dense_ready, n.link_count)
                    for p, n in live.notes.items()
                }
            links = self._links_if_off(live, records)
            drift = store_drift(live.store.inventory(), records, links)
            dangling = sorted(source for source in links or {} if source not in records)
            if drift.clean and not dangling:
                return 0
            log.warning(
                "the index does not add up (%s, %d notes gone with their links left): repairing it from the "
                "vault",
                drift.summary(),
                len(dangling),
            )
            for path in drift.orphan_chunks:
                live.store.delete_by_note(path)
            for path in dangling:
                live.graph.remove(path)
            for path in drift.damaged_notes:
                self._remove(live, path)
            return len(drift.damaged_notes)

    @staticmethod
    def _links_if_off(live: LiveIndex, records: dict[str, RecordedNote]) -> dict[str, int] | None:
        """Stored links per source note when their total differs from what the records count (one count
        call when it does not: reading 37,000 links takes most of a second); None when it matches or the
        records do not all know their count."""
        counts = [record.link_count for record in records.values()]
        if any(count is None for count in counts):
            return None
        if live.graph_store.count_links() == sum(count for count in counts if count is not None):
            return None
        return dict(Counter(link.source for link in live.graph_store.all_links()))

    def consistency(self) -> tuple[StoreDrift, list[NoteRecord], list[LinkRecord]]:
        """What the serving index holds on disk, read under the writer lock so no half-written note shows:
        how its chunk points add up with its stored note records, those records, and every link."""
        with self._writer, self.serving() as live:
            stored = live.graph_store.all_notes()
            links = live.graph_store.all_links()
            recorded = {r.path: RecordedNote(r.content_hash, r.dense_ready, r.link_count) for r in stored}
            drift = store_drift(live.store.inventory(), recorded, Counter(link.source for link in links))
            return drift, stored, links

    def remove_note(self, rel_path: str) -> None:
        with self._writer:
            self._remove(self._current(), rel_path)

    # -- one pass ------------------------------------------------------------------------------------

    def _apply(
        self,
        live: LiveIndex,
        candidates: Sequence[NoteFile],
        gone: Sequence[str],
        report: IndexReport,
        progress: JobProgress | None,
        *,
        all_pending: bool,
    ) -> None:
        """Write `candidates`, remove `gone`, then embed what was written by keyword only (or, with
        `all_pending`, every note still waiting for dense vectors)."""
        with self._state:
            known_before = set(live.notes)
            # a new note with the content of a note that went is that note, moved: keep its vectors
            twins: dict[str, list[str]] = {}
            for path in gone:
                twins.setdefault(live.notes[path].content_hash, []).append(path)
        # A full pass always tries the embedder (once: a failing batch stops the dense work); the watcher's
        # small changes skip it while it is known to be down, instead of waiting through its retries.
        use_embedder = self._health is not None and (all_pending or self._health.worth_trying())
        embed_now = use_embedder and len(candidates) < self._keyword_first_min
        dense: _DensePass | None = None
        if use_embedder and not embed_now:
            # keyword first, dense alongside: the dense pass starts on the first notes written by keyword and
            # follows the keyword pass, so the embedder is busy from the start instead of after it
            changing = {f.rel_path for f in candidates}
            earlier = [p for p in self._pending_dense(live) if p not in changing] if all_pending else []
            dense = _DensePass(self, live, PathFeed(earlier))
        try:
            keyword_only = self._write_changes(
                live, candidates, gone, report, progress, known_before, twins, embed_now, dense
            )
            if dense is None and use_embedder:  # embedded batch by batch: what the embedder left undone
                pending = self._pending_dense(live) if all_pending else keyword_only
                if pending:
                    dense = _DensePass(self, live, PathFeed(pending))
            if dense is not None:
                if all_pending:  # e.g. touched notes still waiting from an earlier pass
                    dense.feed.add(self._pending_dense(live))
                dense.feed.close()
                dense.finish(progress)
        finally:
            if dense is not None:
                dense.stop()

    def _write_changes(
        self,
        live: LiveIndex,
        candidates: Sequence[NoteFile],
        gone: Sequence[str],
        report: IndexReport,
        progress: JobProgress | None,
        known_before: set[str],
        twins: dict[str, list[str]],
        embed_now: bool,
        dense: _DensePass | None,
    ) -> list[str]:
        """The keyword pass (or, with `embed_now`, the whole pass): write the changed notes, remove the gone
        ones. Notes written by keyword only go to `dense`, whose embedded batches are written in between;
        without it they are returned."""
        keyword_only: list[str] = []
        if progress:
            progress.update(phase="indexing", done=0, total=len(candidates))
        queue = iter(candidates)
        next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        while True:
            with self._writer:
                batch = self._next_batch(live, queue, report, twins, progress)
                if not batch:
                    break
                self._write(live, batch, report, embed=embed_now)
            written = [item.file.rel_path for item in batch if item.dense_missing()]
            if dense is None:
                keyword_only.extend(written)
            else:
                dense.feed.add(written)
                dense.write_ready()
            if progress:
                progress.advance(len(batch))
            if time.monotonic() >= next_log:
                log.info("indexing: %d of %d changed notes written", report.indexed, len(candidates))
                next_log = time.monotonic() + PROGRESS_LOG_SECONDS

        if progress and gone:
            progress.update(phase="removing")
        for path in gone:
            with self._writer:
                if self._vault.stat(path) is None:  # it may have come back since the scan
                    with self._state:
                        still_indexed = path in live.notes
                    if still_indexed:
                        self._remove(live, path)
                        report.removed += 1
        if not live.fresh:
            # links elsewhere may now lead to a new note, or to nothing
            appeared = [f.rel_path for f in candidates if f.rel_path not in known_before]
            live.graph.reresolve([*appeared, *gone])
        live.fresh = False
        return keyword_only

    def _next_batch(
        self,
        live: LiveIndex,
        queue: Iterator[NoteFile],
        report: IndexReport,
        twins: dict[str, list[str]],
        progress: JobProgress | None,
        *,
        force: bool = False,
        max_chunks: int = EMBED_BATCH,
    ) -> list[_PendingNote]:
        """Read and chunk notes until a batch is full. Called with the writer lock held, so what is read
        here is what gets written."""
        batch: list[_PendingNote] = []
        chunks = 0
        for file in queue:
            item = self._prepare(live, file, report, twins, force=force)
            if item is None:
                if progress:
                    progress.advance()
                continue
            batch.append(item)
            chunks += len(item.chunks)
            if chunks >= max_chunks:
                break
        return batch

    def _prepare(
        self,
        live: LiveIndex,
        listed: NoteFile,
        report: IndexReport,
        twins: dict[str, list[str]],
        *,
        force: bool,
    ) -> _PendingNote | None:
        file = self._vault.stat(listed.rel_path)  # now, not when the pass was planned
        if file is None:  # changed since the scan: the removal (or the watcher's next batch) deals with it
            reason = self._vault.problem(listed.rel_path)
            if reason is not None:  # still there, but no longer a note we can read
                report.failed.append(FileProblem(listed.rel_path, reason))
            else:
                with self._state:
                    self._on_disk.discard(listed.rel_path)
            return None
        with self._state:
            known = live.notes.get(file.rel_path)
        if not force and not _looks_changed(known, file):
            report.unchanged += 1
            return None
        try:
            text, problems = self._vault.read_text(file.rel_path)
        except OSError as exc:
            report.failed.append(FileProblem(file.rel_path, f"unreadable: {exc.strerror or exc}"))
            return None
        file_hash = content_hash(text)
        if not force and known is not None and known.content_hash == file_hash:
            report.unchanged += 1
            with self._state:  # touched, not changed: remember the new mtime so the next pass skips it
                live.notes[file.rel_path] = replace(known, mtime=file.mtime, size=file.size)
            return None
        note = self._parse(file.rel_path, text)
        chunks = chunk_note(
            note, max_tokens=self._chunking.max_tokens, overlap_tokens=self._chunking.overlap_tokens
        )
        twin = None
        if known is None and twins.get(file_hash):
            twin = twins[file_hash].pop(0)
        max_words = self._identity.dense_windows if self._embedder is not None else 0
        windows = [window_texts(note, chunk, max_words) for chunk in chunks]
        return _PendingNote(
            file=file,
            note=note,
            chunks=chunks,
            texts=[embedding_text(note, chunk) for chunk in chunks],
            file_hash=file_hash,
            problems=(*problems, *note.problems),  # kept with the note; status lists them
            twin=twin,
            vectors=[None] * len(chunks),
            window_texts=windows,
            window_vectors=[[None] * len(texts) for texts in windows],
        )

    def _write(
        self, live: LiveIndex, batch: Sequence[_PendingNote], report: IndexReport, *, embed: bool
    ) -> None:
        for item in batch:
            if item.twin is not None and self._embedder is not None:  # keyword-only: no vectors to reuse
                report.reused_vectors += self._reuse_vectors(live, item)
        if embed:
            self._embed(batch)
        for item in batch:
            self._write_note(live, item)
            report.indexed += 1
            report.chunks += len(item.chunks)
            if item.twin is not None and self._vault.stat(item.twin) is None:
                self._remove(live, item.twin)  # after the new path is written: the note is never missing
                report.renamed += 1

    def _reuse_vectors(self, live: LiveIndex, item: _PendingNote) -> int:
        stored = {
            _reuse_key(payload.get("heading_path") or (), str(payload.get("content", ""))): vector
            for payload, vector in live.store.note_vectors(item.twin or "")
        }
        reused = 0
        for i, chunk in enumerate(item.chunks):
            vector = stored.get(_reuse_key(chunk.heading_path, chunk.text))
            if vector is not None and len(vector) == self._identity.dimension:
                item.vectors[i] = vector
                reused += 1
        return reused

    def _embed(self, batch: Sequence[_PendingNote]) -> None:
        """Fill in the batch's missing dense vectors: all of them, or (embedder failing) none, so a note is
        never written half dense."""
        assert self._health is not None
        missing: list[tuple[_PendingNote, int, int | None]] = [
            (item, i, None) for item in batch for i, vector in enumerate(item.vectors) if vector is None
        ]
        missing += [
            (item, i, j)
            for item in batch
            for i, windows in enumerate(item.window_vectors)
            for j, vector in enumerate(windows)
            if vector is None
        ]
        if not missing:
            return
        vectors = self._health.documents(
            [item.texts[i] if j is None else item.window_texts[i][j] for item, i, j in missing]
        )
        if vectors is None:
            for item in batch:  # vectors reused from a moved note's points wait with the rest of the note
                if item.dense_missing():
                    item.forget_dense()
            # keyword first: the notes become searchable now, their dense vectors on a later pass
            problem = self._health.problem
            log.warning(
                "embedder failed, indexing %d notes by keyword only: %s",
                len(batch),
                f"{problem.code}: {problem.detail}" if problem else "unknown failure",
            )
            return
        for (item, i, j), vector in zip(missing, vectors, strict=True):
            if j is None:
                item.vectors[i] = vector
            else:
                item.window_vectors[i][j] = vector

    def _write_note(self, live: LiveIndex, item: _PendingNote) -> None:
        note = item.note
        dense_ready = self._embedder is None or not item.dense_missing()
        with_dense = dense_ready and self._embedder is not None
        points = [
            PointRecord(
                id=chunk_point_id(note.path, chunk.chunk_index),
                sparse=self._encoder.encode_document(keyword_fields(note, chunk)),
                payload=chunk_payload(note, chunk, mtime=item.file.mtime, content_hash=item.file_hash),
                dense=tuple(vector) if with_dense and vector is not None else None,
                windows=tuple(tuple(w) for w in windows if w is not None) if with_dense else (),
            )
            for chunk, vector, windows in zip(item.chunks, item.vectors, item.window_vectors, strict=True)
        ]
        with self._state:
            had_points = not live.fresh or note.path in live.notes
        # Written over the old points (the ids follow the chunk index) before anything is deleted: a write
        # that fails (disk full, crash) leaves the note as it was, never without chunks.
        live.store.upsert(points)
        if had_points:
            # the note may have fewer chunks now, or an earlier run died mid-note: leave no stale chunk
            live.store.delete_chunks_from(note.path, len(points))
        live.graph.put(
            NoteRecord(
                path=note.path,
                title=note.title,
                aliases=note.aliases,
                tags=note.tags,
                date=note.date,
                mtime=item.file.mtime,
                size=item.file.size,
                content_hash=item.file_hash,
                problems=item.problems,
                dense_ready=dense_ready,
                link_count=len(note.links),
            ),
            note.links,
        )
        with self._state:
            live.notes[note.path] = IndexedNote(
                item.file_hash, item.file.mtime, item.file.size, item.problems, dense_ready, len(note.links)
            )

    def _remove(self, live: LiveIndex, rel_path: str) -> None:
        live.store.delete_by_note(rel_path)
        live.graph.remove(rel_path)
        with self._state:
            live.notes.pop(rel_path, None)

    # -- dense behind ----------------------------------------------------------------------------------

    def _pending_dense(self, live: LiveIndex) -> list[str]:
        with self._state:
            return sorted(path for path, state in live.notes.items() if not state.dense_ready)

    def _still_as_embedded(self, live: LiveIndex, item: _PendingNote) -> bool:
        """The index still holds this note keyword-only with the content that was read and embedded."""
        with self._state:
            state = live.notes.get(item.file.rel_path)
        return state is not None and not state.dense_ready and state.content_hash == item.file_hash

    def _is_pending(self, live: LiveIndex, path: str) -> bool:
        with self._state:
            state = live.notes.get(path)
        return state is not None and not state.dense_ready


def _layout(window_words: int) -> str:
    return f"with windows of up to {window_words} words" if window_words else "one vector a chunk"


class _DensePass:
    """Gives notes written by keyword only their dense vectors, in three stages so the embedder never waits
    for the disk or the store: a reader thread reads and chunks the notes of the feed (as the keyword pass
    adds them), an embedder thread embeds, and the thread that runs the pass encodes keyword vectors and
    writes (there, because a watcher's refresh runs it holding the writer lock, and the keyword pass writes
    from there too). Queues of `PIPELINE_DEPTH` batches between the stages bound the memory.

    The reader works without the writer lock, so a note only gets its vectors while its indexed content is
    still the text that was embedded (a change applied meanwhile wins; the note stays pending for the next
    pass). The pass stops when the embedder fails; the keyword pass goes on without it.
    """

    def __init__(self, service: IndexService, live: LiveIndex, feed: PathFeed) -> None:
        self.feed = feed
        self._service = service
        self._live = live
        self._abort = threading.Event()  # something failed: every stage stops
        self._reader_halt = threading.Event()  # the embedder is done (or gave up): read no further
        self._errors: list[BaseException] = []
        self._to_embed: queue.Queue[list[_PendingNote] | None] = queue.Queue(maxsize=PIPELINE_DEPTH)
        self._to_write: queue.Queue[list[_PendingNote] | None] = queue.Queue(maxsize=PIPELINE_DEPTH)
        self._ended = False  # the embedder thread's end marker was taken
        self.embedded = 0  # notes whose dense batch was written (or skipped: changed meanwhile)
        self._threads = [
            threading.Thread(target=self._read, name="index-read", daemon=True),
            threading.Thread(target=self._embed, name="index-embed", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def _read(self) -> None:
        service, live = self._service, self._live
        notes = (
            NoteFile(path, 0, 0.0)  # re-read in _prepare (force) with its current size and mtime
            for path in self.feed.take(self._reader_halt)
            if service._is_pending(live, path)
        )
        try:
            while not self._reader_halt.is_set():
                batch = service._next_batch(
                    live, notes, IndexReport(), {}, None, force=True, max_chunks=DENSE_WINDOW
                )
                if not batch:
                    break
                batch = [item for item in batch if service._is_pending(live, item.file.rel_path)]
                if batch and not channels.put(self._to_embed, batch, self._reader_halt):
                    break
        except BaseException as exc:  # handed to the thread that runs the pass, which raises it
            self._errors.append(exc)
            self._abort.set()
        finally:
            channels.put(self._to_embed, None, self._reader_halt)

    def _embed(self) -> None:
        try:
            while (batch := channels.get(self._to_embed, self._abort)) is not None:
                self._service._embed(batch)
                if all(item.dense_missing() for item in batch):
                    log.warning("embedder still unavailable: notes stay keyword-only until it is back")
                    break
                if not channels.put(self._to_write, batch, self._abort):
                    break
        except BaseException as exc:
            self._errors.append(exc)
            self._abort.set()
        finally:
            self._reader_halt.set()
            channels.put(self._to_write, None, self._abort)

    def write_ready(self) -> None:
        """Write the batches already embedded, without waiting for more (between keyword batches)."""
        while not self._ended:
            try:
                batch = self._to_write.get_nowait()
            except queue.Empty:
                break
            self._write(batch)
        self._raise_failure()

    def finish(self, progress: JobProgress | None) -> None:
        """Write the rest as it is embedded, until the feed (closed by now) is done or the embedder fails."""
        total = self.feed.added
        if progress:
            progress.update(phase="embedding", done=min(self.embedded, total), total=total)
        log.info("embedding %d notes indexed by keyword only (%d done alongside)", total, self.embedded)
        next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        while not self._ended:
            batch = channels.get(self._to_write, self._abort)
            if batch is None:
                break
            self._write(batch)
            if progress:
                progress.advance(len(batch))
            if time.monotonic() >= next_log:
                log.info("embedding: %d of %d notes", self.embedded, total)
                next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        self.stop()
        self._raise_failure()

    def stop(self) -> None:
        """Stop every stage (idempotent); called however the pass ends."""
        self._abort.set()  # after the end marker, only threads that are done see it
        self._reader_halt.set()
        self.feed.close()
        for thread in self._threads:
            thread.join()

    def _write(self, batch: list[_PendingNote] | None) -> None:
        if batch is None:
            self._ended = True
            return
        service, live = self._service, self._live
        with service._writer:
            for item in batch:
                if service._still_as_embedded(live, item):
                    service._write_note(live, item)
        self.embedded += len(batch)

    def _raise_failure(self) -> None:
        if self._errors:
            self.stop()
            raise self._errors[0]


def _merged_failures(
    before: list[FileProblem], found: list[FileProblem], paths: set[str], folders: Iterable[str]
) -> list[FileProblem]:
    """The last full pass's skipped files, brought up to date for the paths and folders just rechecked."""
    paths = {shown_name(path) for path in paths}  # as FileProblem holds them
    prefixes = tuple(f"{shown_name(folder.strip('/'))}/" for folder in folders)
    kept = [f for f in before if f.rel_path not in paths and not f.rel_path.startswith(prefixes)]
    fresh = {f.rel_path for f in found}
    return [*(f for f in kept if f.rel_path not in fresh), *found]


def _plan(
    known: dict[str, IndexedNote], observed: dict[str, NoteFile], scope: Iterable[str] | None = None
) -> ChangePlan:
    """What a pass must look at, by size and mtime (no file is read here). A note gone and a new file with
    its content are paired when the new file is read (`_prepare`), so the plan lists both sides as gone and
    new; the removal skips a note a move already replaced."""
    return plan_changes(
        {path: KnownNote(note.content_hash, note.mtime, note.size) for path, note in known.items()},
        {path: ObservedFile(file.mtime, file.size) for path, file in observed.items()},
        scope,
    )


def _looks_changed(known: IndexedNote | None, file: NoteFile) -> bool:
    return not looks_unchanged(
        KnownNote(known.content_hash, known.mtime, known.size) if known else None,
        ObservedFile(file.mtime, file.size),
    )
