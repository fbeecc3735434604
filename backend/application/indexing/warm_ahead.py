"""Dense vectors made ahead, on the core the keyword pass leaves idle.

The keyword pass is one thread of Python: on 2 cores the other idles through it (a real-shaped vault of
7,761 notes: 80 CPU-seconds on one thread in 82 s, nothing else running). Meanwhile this stage embeds the
person's own notes that the keyword pass hands over, a text a call (one thread of the in-process model), into
the embedding cache; the dense pass then finds their vectors there instead of making them. The index itself
is not touched here: every note is still searchable by keyword before any is by meaning, and the dense pass
orders, embeds and writes as before. Notes offered while the stage is busy are left to the dense pass (a
stage that cannot keep up drops, it does not hold the keyword pass back); it stops within a text when the
dense pass starts.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Sequence

from backend.application.indexing.note_writer import NoteWriter, PendingNote
from backend.application.indexing.pipeline_channels import POLL_SECONDS

log = logging.getLogger(__name__)

WAITING = 32  # notes waiting to be warmed: a few seconds of work, so what is warmed is what was just written


class WarmAhead:
    def __init__(self, notes: NoteWriter, *, max_texts: int) -> None:
        """`max_texts`: notes with more texts are left to the dense pass (large notes go there in pieces)."""
        self._notes = notes
        self._max_texts = max_texts
        self._waiting: queue.Queue[PendingNote] = queue.Queue(maxsize=WAITING)
        self._stop = threading.Event()
        self.warmed = 0  # texts embedded ahead
        self._thread = threading.Thread(target=self._run, name="index-warm", daemon=True)
        self._thread.start()

    def offer(self, items: Sequence[PendingNote]) -> None:
        """Notes just written by keyword only: the person's own are warmed while there is room."""
        for item in items:
            if item.saved or item.text_count() > self._max_texts:
                continue
            try:
                self._waiting.put_nowait(item)
            except queue.Full:
                return

    def stop(self) -> None:
        """Stop within a text and wait for it (idempotent)."""
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                item = self._waiting.get(timeout=POLL_SECONDS)
            except queue.Empty:
                continue
            try:
                made = self._notes.warm(item, self._stop.is_set)
            except Exception as exc:  # e.g. the cache's disk: only ahead of need, the dense pass meets it
                log.warning("embedding ahead stopped: %s", exc)
                return
            if made is None:  # the embedder cannot warm (no cache) or failed: the dense pass does it all
                return
            self.warmed += made
