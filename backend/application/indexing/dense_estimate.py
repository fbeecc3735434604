"""How many dense vectors a pass has left to embed, and about how long they take: what /index/status, the page
and the CLI's progress say while a vault is embedded (a first index of a real vault takes minutes).

The keyword pass has already chunked every note it wrote, so it knows each note's texts (chunks and dense
windows); notes waiting from an earlier pass are counted at the mean of the notes done. The time left is the
work left over the pace so far, work being characters of text: the model's time grows with a text's length,
up to the length it reads (a prose chunk of 256 tokens cost 5-6x a short note's chunk on this machine), so a
pass that embeds short notes first does not promise the long ones at the short ones' pace.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable

# Characters of a text that cost the model time: it reads at most 256 tokens, about this many characters of
# English. Plus a text's fixed cost (a call, its tokenising), in characters' worth.
READ_CHARS = 1200
TEXT_OVERHEAD_CHARS = 60
MIN_SECONDS_FOR_PACE = 5.0  # before this much embedding, the pace is too young to promise anything


def text_work(texts: Iterable[str]) -> int:
    """The work of embedding these texts, in characters' worth."""
    return sum(min(len(text), READ_CHARS) + TEXT_OVERHEAD_CHARS for text in texts)


class DenseEstimate:
    """Vectors left and seconds left of one dense pass; thread-safe (the keyword pass plans, the embedder's
    thread reports the pieces of a large note, the writer reports notes done)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._planned: dict[str, tuple[int, int]] = {}  # path -> (texts, work) of a note not done yet
        self._unplanned = 0  # notes whose texts are not known until they are read
        self._texts_left = 0
        self._work_left = 0
        self._done_notes = 0
        self._done_texts = 0
        self._done_work = 0
        self._partial: tuple[str, int, int] | None = None  # a large note's pieces: (path, texts, work) done
        self._started: float | None = None

    def plan(self, path: str, texts: int, work: int) -> None:
        """A note the pass will embed, with its texts and their work."""
        with self._lock:
            if path in self._planned:
                return
            self._planned[path] = (texts, work)
            self._texts_left += texts
            self._work_left += work

    def plan_unread(self, count: int) -> None:
        """Notes the pass will embed whose texts it has not read (pending from an earlier pass)."""
        with self._lock:
            self._unplanned += count

    def start(self) -> None:
        """Embedding starts now: the pace counts from here."""
        with self._lock:
            self._started = self._clock()

    def piece(self, path: str, texts: int, of_texts: int) -> None:
        """`texts` of a large note's `of_texts` are embedded (it is written only once all are)."""
        with self._lock:
            planned = self._planned.get(path)
            work = planned[1] * texts // max(of_texts, 1) if planned else 0
            self._partial = (path, texts, work)

    def done(self, path: str, texts: int, work: int) -> None:
        """A note is written with its vectors (or dropped: changed meanwhile, it waits for the next pass)."""
        with self._lock:
            planned = self._planned.pop(path, None)
            if planned is not None:
                self._texts_left -= planned[0]
                self._work_left -= planned[1]
            elif self._unplanned:
                self._unplanned -= 1
            self._done_notes += 1
            self._done_texts += texts
            self._done_work += work
            if self._partial is not None and self._partial[0] == path:
                self._partial = None

    def vectors_left(self) -> int:
        with self._lock:
            return self._texts_left - self._partial_texts() + round(self._unplanned * self._mean(texts=True))

    def seconds_left(self) -> float | None:
        """None until the pace is known."""
        with self._lock:
            if self._started is None:
                return None
            elapsed = self._clock() - self._started
            partial = self._partial[2] if self._partial else 0
            done = self._done_work + partial
            if elapsed < MIN_SECONDS_FOR_PACE or done <= 0:
                return None
            left = self._work_left - partial + self._unplanned * self._mean(texts=False)
            return max(left, 0) * elapsed / done

    def _partial_texts(self) -> int:
        return self._partial[1] if self._partial else 0

    def _mean(self, *, texts: bool) -> float:
        """A note's texts (or work) on average: of the notes done, else of those planned."""
        if self._done_notes:
            return (self._done_texts if texts else self._done_work) / self._done_notes
        if self._planned:
            return (self._texts_left if texts else self._work_left) / len(self._planned)
        return 1.0 if texts else float(READ_CHARS)
