"""When the index is opened, written and healed: the rules that used to sit in the composition root.

One object owns them, so every door (HTTP routes, MCP tools, CLI, the watcher) goes through the same path:
open once (and again after a start with the store down), index or catch up in the background, apply the
watcher's batches, start a sync or a rebuild on request, start the dense catch-up when the embedder answers
again, and load an in-process embedding model in the background at start. An index built for another model,
variant or keyword encoding (an upgrade, a changed setting) is re-embedded in the background while it keeps
answering with its own model (`auto_reembed`; see IndexHandle). `bootstrap.py` only builds it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from backend.application.indexing.gate_upkeep import GateUpkeep
from backend.application.indexing.indexer import Indexer
from backend.application.indexing.jobs import JobRunner, JobSnapshot
from backend.application.indexing.last_job import LastJob, LastJobStore
from backend.application.ports import Embedder, IndexCatalog
from backend.application.search.warm_up import ShowingWarmUp
from backend.application.serving.index_handle import IndexHandle
from backend.application.serving.vault_claim import claim_index
from backend.domain.errors import KnowledgeBridgeError, ReindexInProgressError

log = logging.getLogger(__name__)

CATCH_UP_SECONDS = 30.0


class ChangeBatch(Protocol):
    """What the watcher hands over: the paths and folders an event touched, the attachments that appeared
    or went, or `rescan` when events may have been lost."""

    @property
    def paths(self) -> Iterable[str]: ...

    @property
    def folders(self) -> Iterable[str]: ...

    @property
    def attachments(self) -> Iterable[str]: ...

    @property
    def rescan(self) -> bool: ...


class ChangeFeed(Protocol):
    """The running watcher, as the supervisor and the status see it."""

    @property
    def pending_changes(self) -> int: ...

    @property
    def running(self) -> bool: ...

    @property
    def restarts(self) -> int: ...

    @property
    def last_error(self) -> str | None: ...

    def stop(self) -> None: ...


class IndexSupervisor:
    def __init__(
        self,
        *,
        index: IndexHandle,
        indexer: Indexer,
        jobs: JobRunner,
        catalog: IndexCatalog,
        embedder: Embedder | None,
        vault_path: str,
        model_in_process: bool = False,
        auto_reembed: bool = True,
        settle: Callable[[], None] | None = None,
        freeze: Callable[[], None] | None = None,
        gate: GateUpkeep | None = None,
        last_job: LastJobStore | None = None,
    ) -> None:
        self.index = index
        self.indexer = indexer
        self.jobs = jobs
        self._catalog = catalog
        self._embedder = embedder
        self._vault_path = vault_path
        self._model_in_process = model_in_process  # loaded by us (ONNX), not by a server of its own (Ollama)
        self._auto_reembed = auto_reembed
        self._settle = settle or (lambda: None)  # once the index is loaded (the heap, see bootstrap)
        self._freeze = freeze or (lambda: None)  # as the warm-up reads state in, without a collection
        self._gate = gate  # keeps the recall gate fitted to a model without shipped weights
        self._warm_stop = threading.Event()
        self._warm_thread: threading.Thread | None = None
        self._open_lock = threading.Lock()
        self._opened = False
        self._warming = False
        self._next_catch_up = 0.0
        self.catch_up_interval = CATCH_UP_SECONDS
        self.watcher: ChangeFeed | None = None
        self._last_job = last_job  # the last job's end, kept in the data dir for other processes and runs
        recorded = last_job.load() if last_job is not None else None
        if recorded is not None:  # until this run's own first job: the last one's, whoever ran it
            jobs.restore(recorded.job)
            index.last_sync, index.last_indexed = recorded.last_sync, recorded.last_indexed

    @property
    def gate(self) -> GateUpkeep | None:
        """What keeps the recall gate fitted (None: not wired, as in some tests)."""
        return self._gate

    @property
    def opened(self) -> bool:
        """True once the index has been opened against the store."""
        return self._opened

    def _writable(self) -> bool:
        return self.index.accepts_writes

    def open(self, *, start_indexing: bool = True) -> None:
        """Open the index and start the first indexing (or the catch-up sync) in the background.

        Idempotent: after one success it returns at once. Raises IndexUnavailableError while the store
        cannot be reached, and every use case calls it again, so a service started while Qdrant was down
        opens its index (and indexes) by itself once Qdrant answers.
        """
        with self._open_lock:
            if self._opened:
                return
            # never open (and so sync away) an index another vault built here
            claim_index(self._catalog, self._vault_path)
            needs_full_index = self.index.open()
            self._opened = True
            if not needs_full_index:
                self._lay_out_for_search()
        self._settle()
        if self.index.model_mismatch and not self.index.corrupted and start_indexing:
            if self._auto_reembed:
                log.info(
                    "re-embedding the vault for %s in the background; searches are answered from the index "
                    "as it was built meanwhile",
                    self.index.identity.embedding_model,
                )
                self.jobs.start("rebuild", self.indexer.rebuild)
                return
            log.warning(
                "AUTO_REEMBED is off: POST /index/rebuild switches the index to the configured settings"
            )
        if not start_indexing or not self._writable():
            return  # searches answer EMBEDDING_MODEL_MISMATCH or INDEX_CORRUPTED until someone rebuilds
        if not needs_full_index and self._auto_reembed and self.chunks_outdated():
            log.info(
                "rebuilding the index in the background: its chunks were cut by older rules "
                "(domain/index/chunk_rules.py); searches are answered from it as it was built meanwhile"
            )
            self.jobs.start("rebuild", self.indexer.rebuild)
            return
        if needs_full_index:
            log.info("index is empty: indexing %s in the background", self._vault_path)
        try:
            # an empty index needs the first pass; a full one catches up with edits made while we were down
            self.jobs.start("index" if needs_full_index else "sync", self.indexer.sync)
        except ReindexInProgressError:
            pass  # a rebuild asked for meanwhile does all of it

    def chunks_outdated(self) -> bool:
        """Whether the serving generation was built by older chunk rules (CHUNK_RULES): what it stored of a
        note stays until the note changes, so it is built again."""
        if self.index.corrupted:
            return False  # a rebuild is asked for anyway; nothing of it can be read
        with self.index.serving() as live:
            stored = live.store.identity()
        return stored is not None and stored.chunks_outdated

    def index_job(self) -> str:
        """The job that makes the index what this code and these settings build, for a command indexing here:
        "rebuild" when another model or keyword encoding, or older chunk rules, built it; else "index"."""
        return "rebuild" if self.index.model_mismatch or self.chunks_outdated() else "index"

    def after_job(self, ended: JobSnapshot | None = None) -> None:
        """Once a job has ended, however it ended: its end recorded in the data dir (`ended`, the job as
        it ended), and the heap settled, unless the job was a whole pass that replaced no note (the catch-up
        sync of most starts): then what is alive is frozen only, since a full collection held the interpreter
        344 ms on the Zettelkasten with the service answering, to find no garbage the pass could have left."""
        self._record(ended)
        last, self.indexer.last_pass = self.indexer.last_pass, None
        if last is not None and not last.replaced_notes:
            self._freeze()
        else:
            self._settle()
        if self._gate is not None:
            self._gate.check()

    def _record(self, ended: JobSnapshot | None) -> None:
        if self._last_job is None or ended is None:
            return
        try:
            self._last_job.save(LastJob(ended, self.index.last_sync, self.index.last_indexed))
        except OSError as exc:  # a full disk: the index itself is what matters, and it says so on its own
            log.warning("the last job's end was not recorded in the data dir: %s", exc)

    def _lay_out_for_search(self) -> None:
        """Before the first search: the store's layout for searching made (`ChunkStore.optimize`; 1.1 s for
        the Zettelkasten the first time, nothing once made). A failure leaves searches as they were."""
        started = time.monotonic()
        try:
            with self.index.serving() as live:
                live.store.optimize()
        except KnowledgeBridgeError as exc:
            log.warning("the index was not laid out for search (searches answer, slower): %s", exc.detail)
            return
        log.info("index laid out for search in %.2f s", time.monotonic() - started)

    def watching(self, watcher: ChangeFeed) -> None:
        """The watcher now follows the vault. The start-up scan ran before anyone watched: what changed in
        between is seen by one more comparison, queued behind it."""
        self.watcher = watcher
        if self._opened and self._writable():
            self.jobs.start_after("sync", self.indexer.sync)

    def apply_changes(self, changes: ChangeBatch) -> None:
        """The watcher's batch: raise to have it retried (nothing is lost while the store is down)."""
        self.open(start_indexing=True)  # after a start with Qdrant down, the first change opens the index
        if not self._writable():
            return  # nothing can be written until a rebuild; the rebuild reads the whole vault anyway
        if changes.rescan:
            # events may have been lost: compare the whole vault, after a running job (it may have scanned
            # before the loss), never instead of it
            self.jobs.start_after("sync", self.indexer.sync)
            return
        report = self.indexer.refresh(changes.paths, changes.folders, changes.attachments)
        if report.dense_deferred:  # a large note: embedded by a background pass, not in the watcher's turn
            self.jobs.start_after("sync", self.indexer.sync)

    @property
    def pending_changes(self) -> int:
        """Changes the watcher waits to apply, plus a full comparison queued behind the running job."""
        waiting = self.watcher.pending_changes if self.watcher is not None else 0
        return waiting + int(self.jobs.queued)

    @property
    def watcher_running(self) -> bool:
        return self.watcher is not None and self.watcher.running

    def sync_now(self) -> JobSnapshot:
        """`POST /index/sync`: compare the whole vault with the index in the background."""
        self.open(start_indexing=False)
        return self.start_job("sync")

    def rebuild_now(self) -> JobSnapshot:
        """`POST /index/rebuild`: after a start with the store down, open first (INDEX_UNAVAILABLE while it
        still is), but leave the indexing to this rebuild."""
        self.open(start_indexing=False)
        return self.start_job("rebuild")

    def calibrate_now(self) -> JobSnapshot:
        """`POST /index/calibrate`: fit the recall gate again for the serving model, as a job."""
        self.open(start_indexing=False)
        return self.start_job("calibrate")

    def start_job(self, kind: str) -> JobSnapshot:
        """Start an `index`, `sync`, `rebuild` or `calibrate` job on the open index. An index or sync of a
        damaged or mismatched index says so now (409, with what to do) rather than as a failed job later; a
        rebuild is what repairs it."""
        if kind == "rebuild":
            return self.jobs.start(kind, self.indexer.rebuild)
        if kind == "calibrate" and self._gate is not None:
            return self.jobs.start(kind, self._gate.refit_job)
        self.index.check_writable()
        return self.jobs.start(kind, self.indexer.sync)

    def catch_up_dense(self) -> None:
        """Start a sync when notes wait for dense vectors and the embedder answers again.

        Called after searches, so a degraded index heals without a watcher or an operator; the health probe
        runs at most every `catch_up_interval` seconds (for Ollama it is an HTTP call).
        """
        health = self.index.serving_health
        if health is None or not self._writable() or not self.index.dense_pending:
            return
        now = time.monotonic()
        job = self.jobs.current
        if now < self._next_catch_up or (job is not None and job.running):
            return
        self._next_catch_up = now + self.catch_up_interval
        if health.healthy():
            log.info("embedder is back: embedding %d notes indexed by keyword only", self.index.dense_pending)
            with contextlib.suppress(ReindexInProgressError):
                self.jobs.start("sync", self.indexer.sync)

    @property
    def embedder_warming(self) -> bool:
        """The in-process model is being loaded (or built) now."""
        return self._warming

    def warm_embedder(self) -> None:
        """Load the in-process model in the background (the ONNX graph may take a minute to build on a first
        start), so `/index/status` can say `loading`, then `ready` or `failed` with the error, instead of
        an unexplained "not healthy" until the first embed call. Ollama loads its model itself: its state is
        its health probe, and no request is spent here."""
        configured, serving = self.index.embedder_health, self.index.serving_health
        models = [
            h for h in dict.fromkeys((serving, configured)) if h is not None
        ]  # the one queries need first
        if not models or self._warming or not self._model_in_process:
            return
        self._warming = True

        def warm() -> None:
            try:
                for health in models:
                    health.query("warm-up")  # a failure is kept by `health` and shown as the error
            except Exception:  # the model's own problem is reported by the next embed call
                log.exception("loading the embedding model failed")
            finally:
                self._warming = False

        threading.Thread(target=warm, name="embedder-warm-up", daemon=True).start()

    @property
    def search_warming(self) -> bool:
        """True while `warm_search` reads the chunks in."""
        return self._warm_thread is not None and self._warm_thread.is_alive()

    def warm_search(self, showing: ShowingWarmUp | None = None) -> threading.Thread:
        """Read the serving index's chunks and every note's link ends into the memory searches read them
        from, in the background (the Zettelkasten's 25,714 chunks and 13,410 notes in 3.1 s with `showing`),
        so the first searches after a start read no more of the store than later ones (an index not open
        yet, or empty, is left to fill as searches read it); `showing`: what showing each chunk costs,
        computed as they are read (backend/application/search/warm_up.py). `stop` ends it between two pages
        and waits for it."""
        stopping = self._warm_stop.is_set

        def each_page(page: list[dict[str, Any]]) -> None:
            if showing is not None:
                showing(page, stopping)
            # what it read in stays: out of later collections, each page at once (a full collection
            # walking it meanwhile held the interpreter 65-180 ms at a time on the Zettelkasten)
            self._freeze()

        def warm() -> None:
            started = time.monotonic()
            try:
                with self.index.serving() as live:
                    kept = live.store.warm(stopping, each_page)
                    notes = 0 if stopping() else live.graph_store.warm()
            except KnowledgeBridgeError as exc:  # searches read the store as they need it
                log.info("search memory not read in at start: %s", exc.detail)
                return
            self._freeze()
            prepared = showing.chunks if showing is not None else 0
            log.info(
                "read %d chunks (%d prepared for showing) and %d notes' links into search memory in %.1f s",
                kept,
                prepared,
                notes,
                time.monotonic() - started,
            )

        self._warm_stop.clear()
        self._warm_thread = thread = threading.Thread(target=warm, name="search-warm-up", daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        """Stop feeding the index: the watcher first, then the jobs (and the search memory's warm-up)."""
        if self.watcher is not None:
            self.watcher.stop()
        self.jobs.stop()
        self._warm_stop.set()
        if self._gate is not None:
            self._gate.stop()
        if self._warm_thread is not None:
            self._warm_thread.join()
