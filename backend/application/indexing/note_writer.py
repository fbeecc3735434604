"""How one note gets into a generation: read it as it is now, chunk it, take a moved note's dense vectors from
its old points, embed what is missing (all of a batch or none of it), and write its points and record.

`NoteWriter` does no planning and holds no lock: `Indexer` decides what to write and holds the writer lock
while a batch is read and written, and `DensePass` calls it from its stages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from backend.application.indexing.dense_estimate import text_work
from backend.application.indexing.jobs import JobProgress
from backend.application.ports import NoteParser, Vault
from backend.application.serving.embedder_health import EmbedderHealth
from backend.application.serving.live_index import IndexedNote, LiveIndex
from backend.domain.index.change_plan import KnownNote, ObservedFile, looks_unchanged
from backend.domain.index.dense_order import (
    DEFAULT_SAVED_FOLDERS,
    DenseRank,
    dense_rank,
    saved_from_elsewhere,
)
from backend.domain.index.ids import chunk_point_id, content_hash
from backend.domain.index.index_texts import (
    embedding_text,
    keyword_fields,
    note_language,
    reuse_key,
    window_texts,
)
from backend.domain.index.payload import chunk_payload
from backend.domain.links import NoteRecord
from backend.domain.models import (
    Chunk,
    DenseVectors,
    FileProblem,
    IndexIdentity,
    NoteFile,
    ParsedNote,
    PointRecord,
)
from backend.domain.notes.chunking import chunk_note
from backend.domain.text.sparse import SparseEncoder
from backend.domain.text.tag_words import acronym_definitions

log = logging.getLogger(__name__)

EMBED_BATCH = 64  # chunks per embedder call: large enough to amortise, small enough for steady progress


@dataclass(frozen=True, slots=True)
class ChunkingOptions:
    max_tokens: int = 200
    overlap_tokens: int = 30
    saved_folders: tuple[str, ...] = DEFAULT_SAVED_FOLDERS  # SAVED_FOLDERS: no windows, embedded last


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
    dense_deferred: int = 0  # large notes left keyword-only by a refresh, for a background pass to embed
    failed: list[FileProblem] = field(default_factory=list)

    @property
    def replaced_notes(self) -> bool:
        """Whether the pass wrote, moved or removed any note (what it replaced is garbage now)."""
        return bool(self.indexed or self.removed or self.renamed or self.repaired)


@dataclass(slots=True)
class PendingNote:
    file: NoteFile
    note: ParsedNote
    chunks: list[Chunk]
    texts: list[str]
    file_hash: str
    problems: tuple[str, ...]
    twin: str | None = None  # the indexed note this one moved from (same content, gone from the disk)
    vectors: list[list[float] | None] = field(default_factory=list)
    window_texts: list[list[str]] = field(default_factory=list)  # per chunk; empty lists without windows
    window_vectors: list[list[list[float] | None]] = field(default_factory=list)
    saved: bool = False  # saved from elsewhere (dense_order.saved_from_elsewhere): embedded after own notes

    def text_count(self) -> int:
        """Texts its dense vectors are made from: one per chunk, plus its dense windows."""
        return len(self.texts) + sum(len(windows) for windows in self.window_texts)

    def dense_work(self) -> int:
        """What embedding its texts costs, in characters' worth (DenseEstimate)."""
        return text_work([*self.texts, *(text for windows in self.window_texts for text in windows)])

    def dense_rank(self) -> DenseRank:
        """Its place in the dense queue: own notes before those saved from elsewhere, recent first."""
        note = self.note
        return dense_rank(self.saved, note.date, self.file.mtime)

    def dense_missing(self) -> bool:
        return None in self.vectors or any(None in windows for windows in self.window_vectors)

    def forget_dense(self) -> None:
        self.vectors = [None] * len(self.vectors)
        self.window_vectors = [[None] * len(windows) for windows in self.window_texts]


class NoteWriter:
    def __init__(
        self,
        *,
        vault: Vault,
        parser: NoteParser,
        encoder: SparseEncoder,
        identity: IndexIdentity,
        embedder_health: EmbedderHealth | None,
        chunking: ChunkingOptions | None = None,
    ) -> None:
        self._vault = vault
        self._parse = parser
        self._encoder = encoder
        self._identity = identity
        self._health = embedder_health  # None: keyword only
        self._chunking = chunking or ChunkingOptions()

    def next_batch(
        self,
        live: LiveIndex,
        queue: Iterator[NoteFile],
        report: IndexReport,
        moves: Mapping[str, str],
        progress: JobProgress | None,
        *,
        force: bool = False,
        max_chunks: int = EMBED_BATCH,
    ) -> list[PendingNote]:
        """Read and chunk notes until a batch is full. Called with the writer lock held, so what is read
        here is what gets written."""
        batch: list[PendingNote] = []
        chunks = 0
        for file in queue:
            item = self.prepare(live, file, report, moves, force=force)
            if item is None:
                if progress:
                    progress.advance()
                continue
            batch.append(item)
            chunks += len(item.chunks)
            if chunks >= max_chunks:
                break
        return batch

    def prepare(
        self,
        live: LiveIndex,
        listed: NoteFile,
        report: IndexReport,
        moves: Mapping[str, str],
        *,
        force: bool,
    ) -> PendingNote | None:
        """The note as it is on the disk now, read and chunked, or None when there is nothing to write.
        `moves`: new path -> the indexed note it moved from, whose dense vectors it may take."""
        file = self._vault.stat(listed.rel_path)  # now, not when the pass was planned
        if file is None:  # changed since the scan: the removal (or the watcher's next batch) deals with it
            reason = self._vault.problem(listed.rel_path)
            if reason is not None:  # still there, but no longer a note we can read
                report.failed.append(FileProblem(listed.rel_path, reason))
            else:
                live.saw((), absent=(listed.rel_path,))
            return None
        known = live.known(file.rel_path)
        if not force and looks_unchanged(_known(known), ObservedFile(file.mtime, file.size)):
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
            live.touched(file.rel_path, file.mtime, file.size)
            return None
        note = self._parse(file.rel_path, text)
        chunks = chunk_note(
            note, max_tokens=self._chunking.max_tokens, overlap_tokens=self._chunking.overlap_tokens
        )
        twin = moves.get(file.rel_path) if known is None else None
        saved = saved_from_elsewhere(note.path, note.metadata, note.tags, self._chunking.saved_folders)
        max_words = self._identity.dense_windows if self._health is not None and not saved else 0
        windows = [window_texts(note, chunk, max_words) for chunk in chunks]
        return PendingNote(
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
            saved=saved,
        )

    def write(
        self, live: LiveIndex, batch: Sequence[PendingNote], report: IndexReport, *, embed: bool
    ) -> None:
        for item in batch:
            if item.twin is not None and self._health is not None:  # keyword-only: no vectors to reuse
                report.reused_vectors += self._reuse_vectors(live, item)
        if embed:
            self.embed(batch)
        for item in batch:
            self.write_note(live, item)
            report.indexed += 1
            report.chunks += len(item.chunks)
            if item.twin is not None and self._vault.stat(item.twin) is None:
                self.remove(live, item.twin)  # after the new path is written: the note is never missing
                report.renamed += 1

    def _reuse_vectors(self, live: LiveIndex, item: PendingNote) -> int:
        stored = {
            reuse_key(payload.get("heading_path") or (), str(payload.get("content", ""))): vector
            for payload, vector in live.store.note_vectors(item.twin or "")
        }
        reused = 0
        for i, chunk in enumerate(item.chunks):
            vector = stored.get(reuse_key(chunk.heading_path, chunk.text))
            if vector is not None and len(vector) == self._identity.dimension:
                item.vectors[i] = vector
                reused += 1
        return reused

    def embedding_counts(self) -> tuple[int, int] | None:
        """(texts sent to the model, texts the embedding cache answered) so far, when the embedder says."""
        return self._health.embedding_counts() if self._health is not None else None

    def embed(
        self,
        batch: Sequence[PendingNote],
        *,
        piece: int | None = None,
        on_piece: Callable[[PendingNote, int, int], None] | None = None,
    ) -> None:
        """Fill in the batch's missing dense vectors: all of them, or (embedder failing) none, so a note is
        never written half dense. `piece`: texts per embedder call (a large note), each followed by
        `on_piece(first item, texts done, texts in all)`; None: one call."""
        assert self._health is not None
        missing: list[tuple[PendingNote, int, int | None]] = [
            (item, i, None) for item in batch for i, vector in enumerate(item.vectors) if vector is None
        ]
        missing += [
            (item, i, j)
            for item in batch
            for i, windows in enumerate(item.window_vectors)
            for j, vector in enumerate(windows)
            if vector is None
        ]
        step = piece or max(len(missing), 1)
        for start in range(0, len(missing), step):
            part = missing[start : start + step]
            vectors = self._health.documents(
                [item.texts[i] if j is None else item.window_texts[i][j] for item, i, j in part]
            )
            if vectors is None:
                self._failed(batch)
                return
            for (item, i, j), vector in zip(part, vectors, strict=True):
                if j is None:
                    item.vectors[i] = vector
                else:
                    item.window_vectors[i][j] = vector
            if on_piece is not None:
                on_piece(batch[0], start + len(part), len(missing))

    def _failed(self, batch: Sequence[PendingNote]) -> None:
        assert self._health is not None
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

    def write_note(self, live: LiveIndex, item: PendingNote) -> None:
        note = item.note
        dense_ready = self._health is None or not item.dense_missing()
        with_dense = dense_ready and self._health is not None
        language = note_language(self._encoder.analyzer, note)
        points = [
            PointRecord(
                id=chunk_point_id(note.path, chunk.chunk_index),
                sparse=self._encoder.encode_document(keyword_fields(note, chunk, language)),
                payload=chunk_payload(
                    note, chunk, mtime=item.file.mtime, content_hash=item.file_hash, language=language
                ),
                dense=tuple(vector) if with_dense and vector is not None else None,
                windows=tuple(tuple(w) for w in windows if w is not None) if with_dense else (),
            )
            for chunk, vector, windows in zip(item.chunks, item.vectors, item.window_vectors, strict=True)
        ]
        had_points = not live.fresh or live.holds(note.path)
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
                chunk_count=len(item.chunks),
                acronyms=acronym_definitions(note.body),
            ),
            note.links,
        )
        live.put(
            note.path,
            IndexedNote(
                item.file_hash,
                item.file.mtime,
                item.file.size,
                item.problems,
                dense_ready,
                len(note.links),
                len(item.chunks),
            ),
        )

    def write_dense(self, live: LiveIndex, batch: Sequence[PendingNote]) -> None:
        """The dense pass's write: embedded notes the index still holds keyword-only with the content that
        was embedded get their vectors added to the points the keyword pass wrote (the same text chunks the
        same way), and their records marked dense. Payloads, keyword vectors and links are not written
        again: on a real-shaped vault (7,761 notes, half long web clippings) that rewrite cost 61 of a first
        index's 1,339 CPU-seconds (docs/measurements.md). A note whose record counts other chunks (an index
        from before chunks were counted) is written whole."""
        added: list[PendingNote] = []
        for item in batch:
            path = item.file.rel_path
            if item.dense_missing() or not live.is_pending(path, item.file_hash):
                continue  # not embedded (it stays keyword-only), or changed since it was read
            known = live.known(path)
            if known is not None and known.chunk_count == len(item.chunks):
                added.append(item)
            else:
                self.write_note(live, item)
        if not added:
            return
        live.store.add_dense(
            [
                DenseVectors(
                    chunk_point_id(item.note.path, chunk.chunk_index),
                    tuple(vector),
                    tuple(tuple(window) for window in windows if window is not None),
                )
                for item in added
                for chunk, vector, windows in zip(item.chunks, item.vectors, item.window_vectors, strict=True)
                if vector is not None
            ]
        )
        # after the vectors: a crash in between leaves the notes pending, embedded again on the next start
        paths = [item.note.path for item in added]
        live.graph.mark_dense_ready(paths)
        for path in paths:
            live.dense_added(path)

    @staticmethod
    def remove(live: LiveIndex, rel_path: str) -> None:
        live.store.delete_by_note(rel_path)
        live.graph.remove(rel_path)
        live.drop(rel_path)


def _known(note: IndexedNote | None) -> KnownNote | None:
    return KnownNote(note.content_hash, note.mtime, note.size) if note else None
