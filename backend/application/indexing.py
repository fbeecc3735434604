"""Indexing use case: vault -> parsed notes -> chunks -> dense + sparse vectors -> store.

The same `IndexService` serves the HTTP routes, the CLI and the start-up job. It keeps a small in-memory
picture of what the store holds per note (content hash, mtime) so unchanged notes are skipped without
reading or embedding them again.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from backend.application.jobs import JobProgress
from backend.application.note_graph import NoteGraph
from backend.application.ports import ChunkStore, Embedder, NoteParser, Vault
from backend.domain.chunking import chunk_note
from backend.domain.errors import EmbedderUnavailableError, EmbeddingModelMismatchError, IndexNotReadyError
from backend.domain.ids import chunk_point_id, content_hash
from backend.domain.links import NoteRecord
from backend.domain.models import (
    Chunk,
    FileProblem,
    IndexIdentity,
    NoteFile,
    ParsedNote,
    PointRecord,
)
from backend.domain.payload import HEADING_SEPARATOR, chunk_payload
from backend.domain.sparse import DocumentFields, SparseEncoder

log = logging.getLogger(__name__)

EMBED_BATCH = 64  # chunks per embedder call: large enough to amortise, small enough for steady progress
PROGRESS_LOG_SECONDS = 10.0  # long passes say where they are in the log, not only in /index/status


@dataclass(frozen=True, slots=True)
class IndexedNote:
    content_hash: str
    mtime: float
    size: int
    problems: tuple[str, ...] = ()
    dense_ready: bool = True


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
    chunks: int = 0
    failed: list[FileProblem] = field(default_factory=list)


def embedding_text(note: ParsedNote, chunk: Chunk) -> str:
    """What is embedded: the chunk under its note title and heading path, so a chunk about "Risks" in
    "Database migration" is found by either."""
    context = HEADING_SEPARATOR.join((note.title, *chunk.heading_path))
    return f"{context}\n\n{chunk.text}"


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


@dataclass(slots=True)
class _PendingNote:
    file: NoteFile
    note: ParsedNote
    chunks: list[Chunk]
    texts: list[str]
    file_hash: str
    problems: tuple[str, ...]


class IndexService:
    def __init__(
        self,
        *,
        store: ChunkStore,
        graph: NoteGraph,
        embedder: Embedder | None,
        vault: Vault,
        parser: NoteParser,
        encoder: SparseEncoder,
        identity: IndexIdentity,
        chunking: ChunkingOptions | None = None,
    ) -> None:
        self._store = store
        self._graph = graph
        self._embedder = embedder
        self._vault = vault
        self._parse = parser
        self._encoder = encoder
        self._identity = identity
        self._chunking = chunking or ChunkingOptions()
        self._lock = threading.Lock()
        self._notes: dict[str, IndexedNote] = {}
        self._ready = False  # the collection exists and holds this embedder's vectors
        self._mismatch: IndexIdentity | None = None
        self._complete = False  # a full pass over the vault has finished at least once
        # Only right after the chunk collection was created do we know a note has no old chunks to clear.
        self._fresh_collection = False
        self._run_failures: list[FileProblem] = []
        self.last_indexed: datetime | None = None

    # -- state -------------------------------------------------------------------------------------

    @property
    def identity(self) -> IndexIdentity:
        return self._identity

    @property
    def indexed_notes(self) -> int:
        with self._lock:
            return len(self._notes)

    @property
    def dense_pending(self) -> int:
        """Notes whose chunks have keyword vectors only, waiting for the embedder."""
        with self._lock:
            return sum(1 for state in self._notes.values() if not state.dense_ready)

    @property
    def graph(self) -> NoteGraph:
        return self._graph

    @property
    def failed_files(self) -> list[FileProblem]:
        """Files skipped by the last pass, and indexed notes with problems (e.g. invalid frontmatter)."""
        with self._lock:
            noted = [
                FileProblem(path, problem)
                for path, state in sorted(self._notes.items())
                for problem in state.problems
            ]
        return [*self._run_failures, *noted]

    def open(self) -> bool:
        """Check the stored index against the configured embedder and load what it holds.

        Returns True when the index is empty or new and a full indexing pass is needed.
        """
        stored = self._store.identity()
        if stored is None:
            self._store.create(self._identity)
            self._graph.open(reset=True)
            self._ready = True
            self._fresh_collection = True
            return True
        if not stored.matches(self._identity):
            self._mismatch = stored
            log.error("%s", self._mismatch_message(stored))
            return False
        self._ready = True
        self._load_state(self._graph.open(reset=False))
        return not self._notes

    @property
    def model_mismatch(self) -> bool:
        return self._mismatch is not None

    @property
    def complete(self) -> bool:
        return self._complete

    def check_writable(self) -> None:
        if self._mismatch is not None:
            raise EmbeddingModelMismatchError(self._mismatch_message(self._mismatch))
        if not self._ready:
            raise IndexNotReadyError("the index has not been created yet")

    def check_searchable(self) -> None:
        """Raise when a search cannot be answered at all; a partly built index can answer."""
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
        return (
            f"the index's keyword vectors were built with [{stored.keyword_encoding or 'an older encoder'}] "
            f"but the service is configured for [{self._identity.keyword_encoding}]; it will not mix them"
        )

    def _load_state(self, records: list[NoteRecord]) -> None:
        # A note record is written after its chunks, so a record means the note was fully indexed.
        notes = {
            r.path: IndexedNote(r.content_hash, r.mtime, r.size, r.problems, r.dense_ready) for r in records
        }
        with self._lock:
            self._notes = notes
        if notes:
            self._complete = True  # built by an earlier run; a start-up sync catches up with edits
            self.last_indexed = datetime.now(UTC)

    # -- jobs ----------------------------------------------------------------------------------------

    def rebuild(self, progress: JobProgress | None = None) -> IndexReport:
        """Drop the collection, recreate it for the configured embedder and index the whole vault."""
        self._store.create(self._identity)
        self._graph.reset()
        with self._lock:
            self._notes = {}
        self._mismatch = None
        self._ready = True
        self._complete = False
        self._fresh_collection = True
        return self.sync(progress)

    def sync(self, progress: JobProgress | None = None) -> IndexReport:
        """Bring the index in line with the vault: index new and changed notes, drop removed ones."""
        self.check_writable()
        report = IndexReport()
        if progress:
            progress.update(phase="scanning")
        files, skipped = self._vault.scan()
        self._graph.refresh_files()
        with self._lock:
            known_before = set(self._notes)
        report.scanned = len(files)
        report.failed.extend(skipped)
        if progress:
            progress.update(phase="indexing", done=0, total=len(files))

        pending: list[_PendingNote] = []
        pending_chunks = 0
        next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        for number, file in enumerate(files, 1):
            if time.monotonic() >= next_log:
                log.info("indexing: %d/%d notes seen, %d indexed", number - 1, len(files), report.indexed)
                next_log = time.monotonic() + PROGRESS_LOG_SECONDS
            prepared = self._prepare(file, report)
            if prepared is None:
                if progress:
                    progress.advance()
                continue
            pending.append(prepared)
            pending_chunks += len(prepared.chunks)
            if pending_chunks >= EMBED_BATCH:
                self._write(pending, report, progress)
                pending, pending_chunks = [], 0
        if pending:
            self._write(pending, report, progress)

        present = {f.rel_path for f in files}
        with self._lock:
            gone = [path for path in self._notes if path not in present]
        if progress and gone:
            progress.update(phase="removing")
        for path in gone:
            self.remove_note(path)
            report.removed += 1
        if not self._fresh_collection:
            # links elsewhere may now lead to a new note, or to nothing
            appeared = present - known_before
            self._graph.reresolve([*appeared, *gone])

        self._run_failures = report.failed
        self._fresh_collection = False
        self.last_indexed = datetime.now(UTC)
        self._complete = True
        log.info(
            "sync done: %d scanned, %d indexed (%d chunks), %d unchanged, %d removed, %d failed",
            report.scanned,
            report.indexed,
            report.chunks,
            report.unchanged,
            report.removed,
            len(report.failed),
        )
        return report

    def remove_note(self, rel_path: str) -> None:
        self._store.delete_by_note(rel_path)
        self._graph.remove(rel_path)
        with self._lock:
            self._notes.pop(rel_path, None)

    # -- steps ---------------------------------------------------------------------------------------

    def _prepare(self, file: NoteFile, report: IndexReport) -> _PendingNote | None:
        with self._lock:
            known = self._notes.get(file.rel_path)
        # a note indexed while the embedder was down is redone (unchanged text, but dense vectors missing)
        catch_up = known is not None and not known.dense_ready and self._embedder is not None
        if known is not None and not catch_up and known.mtime == file.mtime and known.size == file.size:
            report.unchanged += 1
            return None
        try:
            text, problems = self._vault.read_text(file.rel_path)
        except OSError as exc:
            report.failed.append(FileProblem(file.rel_path, f"unreadable: {exc.strerror or exc}"))
            return None
        file_hash = content_hash(text)
        if known is not None and not catch_up and known.content_hash == file_hash:
            report.unchanged += 1
            return None
        note = self._parse(file.rel_path, text)
        problems = [*problems, *note.problems]  # kept with the note; status lists them
        chunks = chunk_note(
            note, max_tokens=self._chunking.max_tokens, overlap_tokens=self._chunking.overlap_tokens
        )
        texts = [embedding_text(note, chunk) for chunk in chunks]
        return _PendingNote(
            file=file, note=note, chunks=chunks, texts=texts, file_hash=file_hash, problems=tuple(problems)
        )

    def _write(
        self, pending: Sequence[_PendingNote], report: IndexReport, progress: JobProgress | None
    ) -> None:
        all_texts = [text for item in pending for text in item.texts]
        vectors: list[list[float]] | None = None
        dense_ready = True
        if self._embedder is not None and all_texts:
            try:
                vectors = self._embedder.embed_documents(all_texts)
            except EmbedderUnavailableError as exc:
                # keyword first: the notes become searchable now, their dense vectors on a later sync
                log.warning(
                    "embedder unavailable, indexing %d notes by keyword only: %s", len(pending), exc.detail
                )
                dense_ready = False
        position = 0
        for item in pending:
            points = []
            for chunk in item.chunks:
                payload = chunk_payload(item.note, chunk, mtime=item.file.mtime, content_hash=item.file_hash)
                dense = tuple(vectors[position]) if vectors is not None else None
                position += 1
                points.append(
                    PointRecord(
                        id=chunk_point_id(item.note.path, chunk.chunk_index),
                        sparse=self._encoder.encode_document(keyword_fields(item.note, chunk)),
                        payload=payload,
                        dense=dense,
                    )
                )
            if not self._fresh_collection:
                # the note may have fewer chunks now, or an earlier run died mid-note: leave no stale chunk
                self._store.delete_by_note(item.file.rel_path)
            self._store.upsert(points)
            note = item.note
            self._graph.put(
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
                ),
                note.links,
            )
            with self._lock:
                self._notes[item.file.rel_path] = IndexedNote(
                    item.file_hash, item.file.mtime, item.file.size, item.problems, dense_ready
                )
            report.indexed += 1
            report.chunks += len(points)
            if progress:
                progress.advance()
