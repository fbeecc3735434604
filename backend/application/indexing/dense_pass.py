"""The dense pass: dense vectors for the notes written by keyword only, once the keyword pass is done."""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager

from backend.application.indexing import pipeline_channels as channels
from backend.application.indexing.dense_estimate import DenseEstimate
from backend.application.indexing.jobs import JobProgress
from backend.application.indexing.note_writer import IndexReport, NoteWriter, PendingNote
from backend.application.indexing.pipeline_channels import PathFeed
from backend.application.serving.live_index import LiveIndex
from backend.domain.index.dense_order import dense_rank
from backend.domain.models import NoteFile

log = logging.getLogger(__name__)

PROGRESS_LOG_SECONDS = 10.0  # long passes say where they are in the log, not only in /index/status
# Chunks per embedder call in the dense pass. An embedder that batches sorts each call by token length, and
# wider calls pad less (Zettelkasten chunks: 2.3x the real tokens computed in calls of 64, 1.2x in calls of
# 256; a whole first index of it, quiet machine: fully dense after 370 s and 377 s in calls of 256, 341 s in
# calls of 1024); the int8 variants embed one text a call since issue 28 and do not pad at all. A note with
# more texts than this (chunks and dense windows) is a large note: embedded after the others, so it holds
# no other note back.
DENSE_WINDOW = 1024
# Texts per embedder call for a large note (a 2 MB note holds ~7,000): its progress shows after each call,
# seconds apart, instead of once a window of 1024 (over a minute on a busy machine).
LARGE_NOTE_PIECE = 128
# Batches waiting between the reader, the embedder and the writer: enough that the embedder never waits for
# the other two, few enough that memory stays flat whatever the vault's size.
PIPELINE_DEPTH = 4


class DensePass:
    """Gives notes written by keyword only their dense vectors, in three stages so the embedder never waits
    for the disk or the store: a reader thread reads and chunks the notes of the feed, an embedder thread
    embeds, and the thread that runs the pass encodes keyword vectors and writes (there, because a watcher's
    refresh runs it holding the writer lock, and the keyword pass writes from there too). Queues of
    `PIPELINE_DEPTH` batches between the stages bound the memory.

    The keyword pass comes first: the reader starts once the feed is closed (the keyword pass is done), so
    the notes are embedded in the feed's order (the person's own notes before those saved from elsewhere,
    recent before old: on a real vault half clippings, what the person wrote is searchable by meaning first)
    and the keyword pass has the cores to itself (13k notes: 27 s alone, 60-90 s beside the embedder on 2
    cores) and every note is searchable by keyword before any embedding starts. Large notes (more texts
    than `DENSE_WINDOW`) are embedded after all the others, in pieces; with `defer_large` (a watcher's
    refresh, which must not hold the next change back for minutes) they are left keyword-only instead and
    counted in `deferred`, for a background pass.

    The reader works without the writer lock, so a note only gets its vectors while its indexed content is
    still the text that was embedded (a change applied meanwhile wins; the note stays pending for the next
    pass). The pass stops when the embedder fails; the keyword pass goes on without it.
    """

    def __init__(
        self,
        notes: NoteWriter,
        live: LiveIndex,
        feed: PathFeed,
        writer: AbstractContextManager[object],
        *,
        progress: JobProgress | None = None,
        defer_large: bool = False,
    ) -> None:
        self.feed = feed
        self._notes = notes
        self._live = live
        self._writer = writer  # the index's writer lock, held while a batch is written
        self._progress = progress
        self._defer_large = defer_large
        self.deferred = 0  # large notes left keyword-only (`defer_large`)
        self._abort = threading.Event()  # something failed: every stage stops
        self._reader_halt = threading.Event()  # the embedder is done (or gave up): read no further
        self._errors: list[BaseException] = []
        self._to_embed: queue.Queue[list[PendingNote] | None] = queue.Queue(maxsize=PIPELINE_DEPTH)
        self._to_write: queue.Queue[list[PendingNote] | None] = queue.Queue(maxsize=PIPELINE_DEPTH)
        self._ended = False  # the embedder thread's end marker was taken
        self.embedded = 0  # notes whose dense batch was written (or skipped: changed meanwhile)
        self._next_piece_log = 0.0
        self.estimate = DenseEstimate()  # vectors and seconds left, for /index/status
        self._threads = [
            threading.Thread(target=self._read, name="index-read", daemon=True),
            threading.Thread(target=self._embed, name="index-embed", daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def add(self, items: Sequence[PendingNote]) -> None:
        """Notes the keyword pass wrote without dense vectors: queued at their rank, their texts counted."""
        self.feed.add(
            (item.file.rel_path for item in items), {i.file.rel_path: i.dense_rank() for i in items}
        )
        for item in items:
            self.estimate.plan(item.file.rel_path, item.text_count(), item.dense_work())

    def add_unread(self, paths: Iterable[str]) -> None:
        """Notes waiting for dense vectors that this pass did not read (an earlier pass wrote them): queued by
        when their file was written, counted at the mean of the notes done."""
        paths = list(paths)
        known = {path: self._live.known(path) for path in paths}
        ranks = {
            path: dense_rank(False, None, note.mtime) for path, note in known.items() if note is not None
        }
        self.estimate.plan_unread(len(self.feed.add(paths, ranks)))

    def _read(self) -> None:
        live = self._live
        notes = (
            NoteFile(path, 0, 0.0)  # re-read in prepare (force) with its current size and mtime
            for path in self.feed.take(self._reader_halt, after_close=True)
            if live.is_pending(path)
        )
        large: list[PendingNote] = []
        try:
            while not self._reader_halt.is_set():
                batch = self._notes.next_batch(
                    live, notes, IndexReport(), {}, None, force=True, max_chunks=DENSE_WINDOW
                )
                if not batch:
                    break
                large += [item for item in batch if item.text_count() > DENSE_WINDOW]
                batch = [
                    item
                    for item in batch
                    if live.is_pending(item.file.rel_path) and item.text_count() <= DENSE_WINDOW
                ]
                if batch and not channels.put(self._to_embed, batch, self._reader_halt):
                    break
            if self._defer_large:
                self.deferred = len(large)
                large = []
            for item in large:  # each a batch of its own, embedded in pieces
                if live.is_pending(item.file.rel_path, item.file_hash) and not channels.put(
                    self._to_embed, [item], self._reader_halt
                ):
                    break
        except BaseException as exc:  # handed to the thread that runs the pass, which raises it
            self._errors.append(exc)
            self._abort.set()
        finally:
            channels.put(self._to_embed, None, self._reader_halt)

    def _embed(self) -> None:
        try:
            while (batch := channels.get(self._to_embed, self._abort)) is not None:
                if len(batch) == 1 and batch[0].text_count() > DENSE_WINDOW:
                    self._notes.embed(batch, piece=LARGE_NOTE_PIECE, on_piece=self._piece_done)
                else:
                    self._notes.embed(batch)
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

    def _piece_done(self, item: PendingNote, done: int, total: int) -> None:
        """A piece of a large note is embedded: say so, so its minutes show as progress."""
        self.estimate.piece(item.file.rel_path, done, total)
        if self._progress is not None:
            self._progress.update(detail=f"{item.file.rel_path}: {done} of {total} texts embedded")
            self._say_left()
        if time.monotonic() >= self._next_piece_log:
            log.info("embedding the large note %s: %d of %d texts", item.file.rel_path, done, total)
            self._next_piece_log = time.monotonic() + PROGRESS_LOG_SECONDS

    def finish(self) -> None:
        """Close the feed (the keyword pass is done: the reader starts now), and write what is embedded as it
        comes, until every note of the feed is done or the embedder fails."""
        self.feed.close()
        total = self.feed.added
        progress = self._progress
        self.estimate.start()
        started, counts = time.monotonic(), self._notes.embedding_counts()
        if progress:
            progress.update(phase="embedding", done=0, total=total)
            self._say_left()
        log.info(
            "embedding %d notes indexed by keyword only: %d dense vectors",
            total,
            self.estimate.vectors_left(),
        )
        next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        while not self._ended:
            batch = channels.get(self._to_write, self._abort)
            if batch is None:
                break
            self._write(batch)
            if progress:
                progress.advance(len(batch))
                self._say_left()
            if time.monotonic() >= next_log:
                seconds = self.estimate.seconds_left()
                log.info(
                    "embedding: %d of %d notes, %d vectors left%s",
                    self.embedded,
                    total,
                    self.estimate.vectors_left(),
                    f", about {seconds:.0f} s" if seconds is not None else "",
                )
                next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        if progress and self._ended:
            progress.update(vectors_left=0, eta_seconds=0.0)
        self._log_work(counts, time.monotonic() - started)
        self.stop()
        self._raise_failure()

    def _say_left(self) -> None:
        assert self._progress is not None
        seconds = self.estimate.seconds_left()
        self._progress.update(
            vectors_left=max(self.estimate.vectors_left(), 0),
            eta_seconds=round(seconds, 1) if seconds is not None else None,
        )

    def stop(self) -> None:
        """Stop every stage (idempotent); called however the pass ends."""
        self._abort.set()  # after the end marker, only threads that are done see it
        self._reader_halt.set()
        self.feed.close()
        for thread in self._threads:
            thread.join()

    def _write(self, batch: list[PendingNote] | None) -> None:
        if batch is None:
            self._ended = True
            return
        with self._writer:  # each note only while the index still holds what was read and embedded
            self._notes.write_dense(self._live, batch)
        for item in batch:
            self.estimate.done(item.file.rel_path, item.text_count(), item.dense_work())
        self.embedded += len(batch)

    def _log_work(self, before: tuple[int, int] | None, seconds: float) -> None:
        """What the pass cost the model: with a remote model its texts are the time (issue 45)."""
        after = self._notes.embedding_counts()
        if before is None or after is None:
            return
        sent, hits = after[0] - before[0], after[1] - before[1]
        log.info(
            "embedded %d notes in %.1f s: %d texts sent to the model, %d answered by the embedding cache",
            self.embedded,
            seconds,
            sent,
            hits,
        )

    def _raise_failure(self) -> None:
        if self._errors:
            self.stop()
            raise self._errors[0]
