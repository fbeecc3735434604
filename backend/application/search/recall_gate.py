"""Which calibration the hits' confidence is weighed with, and the fit of one for a model that shipped none.

A model calibrated here (all-MiniLM-L6-v2, multilingual-e5-small) has its shipped weights. Any other model
(an Ollama or OpenAI-compatible one) gets a gate fitted from this vault (`domain.gate_fit`): once its dense
vectors are all in, the probe turns are asked as any search is, in a background thread, and the fit is kept
beside the index (`GateStore`), so a restart does not fit again. Until then, and for keyword-only hits, the
keyword-only weights judge. The fit is done again when the model changes, when the shipped generic weights
change, and when the vault has grown or shrunk to more than twice or less than half the chunks it was fitted
on (how close the closest chunk comes to a question it cannot answer grows with the vault). A new query
instruction for the same model (which moves its query vectors) keeps the fit until `calibrate` runs.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from backend.domain.errors import KnowledgeBridgeError
from backend.domain.ranking.confidence import KEYWORD_ONLY, Calibration, Evidence, shipped_calibration
from backend.domain.recall.calibration_probes import PROBES
from backend.domain.recall.gate_fit import GENERIC, FittedGate, Probe, fit_gate

log = logging.getLogger(__name__)

GROWTH_REFIT = 2.0  # refit when the vault's chunks are more than this many times (or under 1/this) the fit's

Source = Literal["shipped", "fitted", "fitting", "keyword"]


@dataclass(frozen=True, slots=True)
class StoredGate:
    """A fitted gate as kept beside the index: for which model (`embedder`, its name), and when."""

    embedder: str
    gate: FittedGate
    fitted_at: str  # ISO 8601, UTC
    seconds: float


class GateStore(Protocol):
    def load(self) -> StoredGate | None: ...

    def save(self, stored: StoredGate) -> None: ...


@dataclass(frozen=True, slots=True)
class GateState:
    """What /index/status, the page and the log say about the calibration in force."""

    source: Source
    model: str | None
    fitted_at: str | None = None
    chunks: int | None = None  # the vault's size when fitted
    probes: int | None = None


# Asks one probe as a search would: the evidence of its first hits.
AskProbe = Callable[[str], Sequence[Evidence]]


class RecallGate:
    """Safe to share between threads: the searches read, the one fitting thread writes."""

    def __init__(self, store: GateStore | None = None) -> None:
        self._store = store
        self._stored = store.load() if store is not None else None
        if self._stored is not None:
            log.info(
                "recall gate in force for %s: fitted on this vault (%d chunks) at %s",
                self._stored.embedder,
                self._stored.gate.chunks,
                self._stored.fitted_at,
            )
        self._lock = threading.Lock()  # one fit at a time
        self._fitting: str | None = None  # the embedder a fit runs for
        self._stopping = threading.Event()  # the service stops: a fit running ends at its next probe

    def calibration(self, embedder: str | None, *, dense: bool) -> Calibration:
        """The weights for hits of the model named `embedder` (the serving index's)."""
        if not dense or not embedder:
            return KEYWORD_ONLY
        shipped = shipped_calibration(embedder)
        if shipped is not None:
            return shipped
        stored = self._stored
        if stored is not None and stored.embedder == embedder:
            return stored.gate.calibration
        return KEYWORD_ONLY

    def state(self, embedder: str | None, *, dense: bool = True) -> GateState:
        if not dense or not embedder:
            return GateState("keyword", embedder)
        if shipped_calibration(embedder) is not None:
            return GateState("shipped", embedder)
        stored = self._stored
        if stored is not None and stored.embedder == embedder:
            return GateState("fitted", embedder, stored.fitted_at, stored.gate.chunks, stored.gate.probes)
        return GateState("fitting" if self._fitting == embedder else "keyword", embedder)

    def needs_fit(self, embedder: str | None, chunks: int) -> bool:
        """Whether `embedder`, serving a vault of `chunks` chunks all embedded, wants a (new) fit."""
        if not embedder or chunks < 1 or shipped_calibration(embedder) is not None:
            return False
        stored = self._stored
        if stored is None or stored.embedder != embedder or stored.gate.generic != GENERIC.fingerprint:
            return True
        ratio = chunks / max(stored.gate.chunks, 1)
        return ratio > GROWTH_REFIT or ratio < 1.0 / GROWTH_REFIT

    def fit(self, embedder: str, ask: AskProbe, chunks: int) -> StoredGate | None:
        """Ask every probe of a vault of `chunks` chunks, fit, keep and return the gate (None when the hits
        showed no dense scale, e.g. the model went down meanwhile). Runs in the caller's thread, after a fit
        running already."""
        with self._lock:
            self._fitting = embedder
            try:
                return self._fit(embedder, ask, chunks)
            finally:
                self._fitting = None

    def fit_in_background(self, embedder: str, ask: AskProbe, chunks: int) -> threading.Thread | None:
        """`fit` in a daemon thread, unless one runs already; a failure is logged, and the next job's end
        tries again."""
        if self._lock.locked() or self._stopping.is_set():
            return None

        def fit() -> None:
            try:
                self.fit(embedder, ask, chunks)
            except KnowledgeBridgeError as exc:  # the store closing, the model going down
                log.warning("the recall gate for %s was not fitted: %s", embedder, exc.detail)

        thread = threading.Thread(target=fit, name="recall-gate-fit", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self._stopping.set()

    def _fit(self, embedder: str, ask: AskProbe, chunks: int) -> StoredGate | None:
        started = time.monotonic()
        log.info("fitting the recall gate for %s on this vault (%d probe turns)", embedder, len(PROBES))
        probes: list[Probe] = []
        for kind, text in PROBES:
            if self._stopping.is_set():
                return None
            probes.append(Probe.asked(kind, text, ask(text)))
        gate = fit_gate(embedder, probes, chunks)
        if gate is None:
            log.warning(
                "the recall gate for %s was not fitted: probe turns got no dense scores (the model down?)",
                embedder,
            )
            return None
        stored = StoredGate(
            embedder=embedder,
            gate=gate,
            fitted_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            seconds=round(time.monotonic() - started, 2),
        )
        if self._store is not None:
            self._store.save(stored)
        self._stored = stored
        log.info(
            "recall gate fitted for %s in %.1f s over %d chunks: null cosine %.3f ± %.3f",
            embedder,
            stored.seconds,
            chunks,
            gate.scale.mean,
            gate.scale.spread,
        )
        return stored
