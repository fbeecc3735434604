"""Keeping the recall gate fitted to the model that serves: after every index job, and on demand
(`POST /index/calibrate`, `python -m backend calibrate`).

The probes are asked through the same search as any question (so they see the hits, the ranking rules and
the evidence a real turn sees), in hybrid mode, in a background thread after a job; searches go on meanwhile
and are weighed with the keyword-only weights until the fit is in (a model without shipped weights has no
other honest reading of its cosines).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence

from backend.application.indexing.jobs import JobProgress
from backend.application.search.recall_gate import StoredGate
from backend.application.search.service import SearchService
from backend.application.serving.serving_index import ServingIndex
from backend.domain.errors import EmbedderUnavailableError, KnowledgeBridgeError
from backend.domain.models import SearchMode
from backend.domain.ranking.confidence import Evidence
from backend.domain.recall.calibration_probes import PROBES

log = logging.getLogger(__name__)

PROBE_HITS = 10  # asked as the evaluation asks; the gate reads the first QUOTED


class GateUpkeep:
    def __init__(self, *, search: SearchService, index: ServingIndex, automatic: bool = True) -> None:
        """`automatic`: fit after index jobs (RECALL_GATE_FIT); on demand (`refit`) either way."""
        self._search = search
        self._index = index
        self._automatic = automatic
        self._thread: threading.Thread | None = None

    def check(self) -> threading.Thread | None:
        """Fit in the background when the serving model wants a (new) fit and its vectors are all in."""
        embedder = self._search.serving_model()
        if not self._automatic or embedder is None or self._index.dense_pending:
            return None
        try:
            chunks = self._chunks()
        except KnowledgeBridgeError:
            return None  # no index to read yet: the job that makes one checks again
        if not self._search.gate.needs_fit(embedder, chunks):
            return None
        thread = self._search.gate.fit_in_background(embedder, self._ask, chunks)
        if thread is not None:  # None: one runs already (kept, for `wait`)
            self._thread = thread
        return thread

    def wait(self) -> None:
        """Until a fit the index wants is in (an evaluation asks its questions of the gate in force)."""
        thread = self.check() or self._thread
        if thread is not None:
            thread.join()

    def stop(self) -> None:
        """As the service stops: a fit running is abandoned at its next probe (its store is closing)."""
        self._search.gate.stop()
        if self._thread is not None:
            self._thread.join()

    def refit(self, progress: JobProgress | None = None) -> StoredGate | None:
        """Fit now, in the caller's thread (a job's; after a fit running in the background), whatever was
        fitted before, unless the model has shipped weights (nothing to fit) or no dense side answers."""
        embedder = self._search.serving_model()
        if embedder is None:
            return None
        if progress is not None:
            progress.update(phase="calibrating", done=0, total=len(PROBES))

        def ask(text: str) -> Sequence[Evidence]:
            answer = self._ask(text)
            if progress is not None:
                progress.advance()
            return answer

        source = self._search.gate.state(embedder).source
        if source == "shipped":
            log.info("%s has shipped recall weights: nothing to fit", embedder)
            return None
        stored = self._search.gate.fit(embedder, ask, self._chunks())
        if stored is None:
            raise EmbedderUnavailableError(
                f"the recall gate for {embedder} was not fitted: the probe turns got no dense scores",
                suggestion="Check that the embedding model answers (GET /index/status, embedder), then "
                "fit again.",
            )
        return stored

    def refit_job(self, progress: JobProgress) -> None:
        """The `calibrate` job's body."""
        self.refit(progress)

    def _ask(self, text: str) -> Sequence[Evidence]:
        return self._search.search(text, top_k=PROBE_HITS, mode=SearchMode.HYBRID).evidence

    def _chunks(self) -> int:
        """The serving index's chunks: the vault's size the fit is read from (and kept with)."""
        with self._index.serving() as live:
            return self._search.chunks.count(live)
