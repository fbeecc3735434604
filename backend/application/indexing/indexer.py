"""Indexing use case: vault -> parsed notes -> chunks -> dense + sparse vectors -> the serving index.

One `Indexer` serves the start-up job, `/index/sync`, `/index/rebuild`, the CLI and the watcher. It writes
into the generation its `IndexHandle` serves, which keeps a small picture of what the store holds per note
(content hash, mtime, size) so unchanged notes are skipped without reading them, and it follows three rules:

* never pay twice for a vector: a note that moved (same content under a new path) takes its dense vectors
  from its old points, and the embedder sits behind a persistent cache for everything else;
* keyword first: a pass writes every note's keyword vectors first (searchable in seconds, whatever the vault's
  size), and fills in dense vectors after it; a note's keyword indexing never waits for an embedding, and the
  keyword pass has the machine to itself (on 2 cores the embedder beside it made it 2-3x slower);
* one writer at a time, per batch: the watcher's small changes interleave with a long job instead of waiting
  for it, and each batch re-reads the files it writes, so the last write of a note is its latest text.

What changed is planned by `plan_changes` (domain); how one note is written is `NoteWriter`'s; the dense
vectors behind the keyword pass are `DensePass`'s. A rebuild fills a sibling handle (a new generation, see
`IndexCatalog`) while the serving one keeps answering, then the serving handle adopts it.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from backend.application.indexing.dense_pass import PROGRESS_LOG_SECONDS, DensePass
from backend.application.indexing.jobs import JobProgress
from backend.application.indexing.note_writer import ChunkingOptions, IndexReport, NoteWriter
from backend.application.indexing.pipeline_channels import PathFeed
from backend.application.ports import Embedder, IndexCatalog, NoteParser, Vault
from backend.application.serving.embedder_health import EmbedderHealth
from backend.application.serving.index_handle import IndexHandle, ServingEmbedder
from backend.application.serving.live_index import IndexedNote, LiveIndex
from backend.domain.index.change_plan import ChangePlan, KnownNote, ObservedFile, plan_changes
from backend.domain.index.ids import content_hash
from backend.domain.index.index_consistency import RecordedNote, store_drift
from backend.domain.models import FileProblem, IndexIdentity, NoteFile, shown_name
from backend.domain.notes.vault_rules import is_attachment
from backend.domain.text.sparse import SparseEncoder

log = logging.getLogger(__name__)

# Below this many notes to write, a pass embeds each batch before writing it (one write per note, no
# keyword-only moment). 1: never; every pass writes keyword vectors first. Tests set it for the other path.
KEYWORD_FIRST_MIN = 1
# Notes of this size or more are written last in a keyword pass: one 2 MB note takes a second or two to
# chunk, encode and write, and must not hold the notes behind it back.
LARGE_NOTE_BYTES = 256 * 1024


class Indexer:
    def __init__(
        self,
        handle: IndexHandle,
        *,
        parser: NoteParser,
        encoder: SparseEncoder,
        chunking: ChunkingOptions | None = None,
        keyword_first_min: int = KEYWORD_FIRST_MIN,
    ) -> None:
        self._handle = handle
        self._vault = handle.vault
        self._parser = parser
        self._encoder = encoder
        self._chunking = chunking
        self._keyword_first_min = keyword_first_min
        self._writer: tuple[IndexIdentity, EmbedderHealth | None, NoteWriter] | None = None
        # the report of the sync that ended last; None while a pass runs, after one failed and after a
        # rebuild (which replaces a whole generation): `IndexSupervisor.after_job` judges the heap by it
        self.last_pass: IndexReport | None = None

    @property
    def _health(self) -> EmbedderHealth | None:
        """The embedder of the generation written now (None: keyword only)."""
        return self._handle.serving_health

    @property
    def _notes(self) -> NoteWriter:
        """How notes are written into the serving generation: with what it was built for (an outdated one
        keeps its own model until the rebuild switches; see IndexHandle)."""
        identity, health = self._handle.serving_identity, self._handle.serving_health
        writer = self._writer
        if writer is None or writer[0] != identity or writer[1] is not health:
            made = NoteWriter(
                vault=self._vault,
                parser=self._parser,
                encoder=self._encoder,
                identity=identity,
                embedder_health=health,
                chunking=self._chunking,
            )
            writer = self._writer = (identity, health, made)
        return writer[2]

    def rebuild(self, progress: JobProgress | None = None) -> IndexReport:
        """Index the whole vault into a new generation while the serving one keeps answering, then switch.

        Changes the watcher applies meanwhile go to the serving index; a last pass under the writer lock
        carries them over before the switch. A rebuild that fails leaves the serving index as it was.
        """
        self.last_pass = None
        sibling = self._handle.sibling()
        builder = Indexer(
            sibling,
            parser=self._parser,
            encoder=self._encoder,
            chunking=self._chunking,
            keyword_first_min=self._keyword_first_min,
        )
        switched = False
        self._handle.building = sibling
        try:
            report = builder.sync(progress)
            if progress:
                progress.update(phase="switching")
            with self._handle.writer:
                builder.sync()  # what changed on the disk while the new generation was being filled
                replaced = self._handle.adopt(sibling)
                switched = True
        finally:
            self._handle.building = None
            if not switched:
                sibling.discard()
        self._handle.retire(replaced)
        return report

    def sync(self, progress: JobProgress | None = None) -> IndexReport:
        """Bring the index in line with the whole vault: index new and changed notes, recognise moves by
        content, drop removed notes, and embed notes that still lack dense vectors."""
        self.last_pass = None
        live = self._handle.writable()
        with self._handle.corruption_noted(live):
            self.last_pass = self._sync(live, progress)
            return self.last_pass

    def _sync(self, live: LiveIndex, progress: JobProgress | None) -> IndexReport:
        report = IndexReport()
        if progress:
            progress.update(phase="scanning")
        files, skipped = self._vault.scan()
        # links to an attachment that appeared or went since the map was made (notes: by the pass below)
        attachments = {path for path in live.graph.refresh_files() if is_attachment(path)}
        if not live.fresh:
            report.repaired = self._repair(live)
        report.scanned = len(files)
        report.failed.extend(skipped)
        present = {f.rel_path: f for f in files}
        live.saw_exactly(present)
        plan = self._plan(live.notes(), present)
        report.unchanged = len(plan.unchanged)
        self._apply(_Pass(live, report, progress, _moves(plan)), plan, present, all_pending=True)
        if attachments and not live.fresh:
            live.graph.reresolve(attachments)
        self._handle.passed(report.failed, full=True, changed=True)
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

    def refresh(
        self, paths: Iterable[str], folders: Iterable[str] = (), attachments: Iterable[str] = ()
    ) -> IndexReport:
        """Bring these notes (and everything under these folders) in line with the disk, and links to these
        attachments: what the watcher calls with the paths an event touched, without scanning the vault."""
        with self._handle.writer:  # a rebuild cannot switch generations under a half-applied change
            live = self._handle.writable()
            with self._handle.corruption_noted(live):
                self._follow_attachments(live, attachments := set(attachments))
                return self._refresh(live, paths, folders, attachments)

    def _follow_attachments(self, live: LiveIndex, wanted: set[str]) -> None:
        """The file map follows these attachments (a pasted image, a PDF) and links to their names resolve
        anew, before the batch's notes are written: a note pasted with its image links to it at once."""
        here = {path for path in wanted if self._vault.has_file(path)}
        live.graph.update_files(present=here, absent=wanted - here)
        if live.graph.reresolve(wanted):
            live.changed()

    def _refresh(
        self, live: LiveIndex, paths: Iterable[str], folders: Iterable[str], attachments: set[str]
    ) -> IndexReport:
        report = IndexReport()
        observed: dict[str, NoteFile] = {}
        considered = set(paths)
        for folder in folders:
            files, skipped = self._vault.scan(folder)
            observed.update((f.rel_path, f) for f in files)
            report.failed.extend(skipped)
            considered.update(live.paths_under(f"{folder.strip('/')}/"))
        for path in considered - observed.keys():
            found = self._vault.stat(path)
            if found is not None:
                observed[path] = found
            elif (reason := self._vault.problem(path)) is not None:
                report.failed.append(FileProblem(path, reason))  # e.g. a symlink created meanwhile
        known = live.notes()
        live.saw(observed, absent=considered - observed.keys())
        plan = self._plan(known, observed, scope=considered)
        live.graph.update_files(present=observed, absent=_went(plan))
        report.scanned = len(observed)
        report.unchanged = len(plan.unchanged)
        self._apply(_Pass(live, report, None, _moves(plan)), plan, observed, all_pending=False)
        rechecked = considered | attachments  # an attachment's path too: a symlink gone is listed no more
        failures = _merged_failures(self._handle.run_failures, report.failed, rechecked, folders)
        self._handle.passed(failures, full=False, changed=bool(report.indexed or report.removed))
        log.info(
            "applied changes: %d indexed, %d moved, %d removed, %d unchanged",
            report.indexed,
            report.renamed,
            report.removed,
            report.unchanged,
        )
        return report

    def remove_note(self, rel_path: str) -> None:
        with self._handle.writer:
            self._notes.remove(self._handle.current(), rel_path)

    def _repair(self, live: LiveIndex) -> int:
        """Make the stored points and links add up with the note records before a full pass: points and
        links without a record go, and notes whose points or links were lost or mixed up are removed, so
        the pass indexes them again."""
        with self._handle.writer:
            records = {
                p: RecordedNote(n.content_hash, n.dense_ready, n.link_count, n.chunk_count)
                for p, n in live.notes().items()
            }
            links = _links_if_off(live, records)
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
                self._notes.remove(live, path)
            return len(drift.damaged_notes)

    # -- one pass ------------------------------------------------------------------------------------

    def _apply(
        self, run: _Pass, plan: ChangePlan, observed: dict[str, NoteFile], *, all_pending: bool
    ) -> None:
        """Write what the plan says changed, remove what went, then embed what was written by keyword only
        (or, with `all_pending`, every note still waiting for dense vectors)."""
        # large notes last: one of them must not hold the others back
        candidates = sorted((observed[path] for path in plan.to_write), key=_large)
        live = run.live
        health = self._health
        # A full pass always tries the embedder (once: a failing batch stops the dense work); the watcher's
        # small changes skip it while it is known to be down, instead of waiting through its retries.
        use_embedder = health is not None and (all_pending or health.worth_trying())
        embed_now = use_embedder and len(candidates) < self._keyword_first_min
        dense: DensePass | None = None
        if use_embedder and not embed_now:
            # keyword first: the dense pass is fed as notes are written, and starts once they all are
            changing = {f.rel_path for f in candidates}
            earlier = [p for p in live.pending_dense() if p not in changing] if all_pending else []
            dense = self._dense_pass(live, earlier, run.progress, defer_large=not all_pending)
        live.bulk_writing = all_pending
        try:
            keyword_only = self._write(run, candidates, embed_now, dense)
            self._remove_gone(run, _went(plan))
            if not live.fresh:
                # links elsewhere may now lead to a new note, or to nothing
                live.graph.reresolve([*plan.new, *(move.new for move in plan.moved), *_went(plan)])
                live.changed()
            live.fresh = False
            if dense is None and use_embedder:  # embedded batch by batch: what the embedder left undone
                pending = live.pending_dense() if all_pending else keyword_only
                if pending:
                    dense = self._dense_pass(live, pending, run.progress, defer_large=not all_pending)
            if dense is not None:
                if all_pending:  # e.g. touched notes still waiting from an earlier pass
                    dense.add_unread(live.pending_dense())
                dense.finish()
                run.report.dense_deferred = dense.deferred
        finally:
            live.bulk_writing = False
            if dense is not None:
                dense.stop()

    def _dense_pass(
        self, live: LiveIndex, paths: list[str], progress: JobProgress | None, *, defer_large: bool
    ) -> DensePass:
        """A dense pass over `paths` (notes this pass did not read) and whatever the keyword pass adds."""
        dense = DensePass(
            self._notes,
            live,
            PathFeed(),
            self._handle.writer,
            progress=progress,
            defer_large=defer_large,
        )
        dense.add_unread(paths)
        return dense

    def _write(
        self, run: _Pass, candidates: Sequence[NoteFile], embed_now: bool, dense: DensePass | None
    ) -> list[str]:
        """The keyword pass (or, with `embed_now`, the whole pass): write the changed notes, a batch at a
        time under the writer lock. Notes written by keyword only go to `dense` (it embeds them, in its own
        order, once this pass is done); without it they are returned."""
        keyword_only: list[str] = []
        live, report, progress = run.live, run.report, run.progress
        if progress:
            progress.update(phase="indexing", done=0, total=len(candidates))
        queue = iter(candidates)
        next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        while True:
            with self._handle.writer:
                batch = self._notes.next_batch(live, queue, report, run.moves, progress)
                if not batch:
                    break
                self._notes.write(live, batch, report, embed=embed_now)
            written = [item for item in batch if item.dense_missing()]
            if dense is None:
                keyword_only.extend(item.file.rel_path for item in written)
            else:
                dense.add(written)
            if progress:
                progress.advance(len(batch))
            if time.monotonic() >= next_log:
                log.info("indexing: %d of %d changed notes written", report.indexed, len(candidates))
                next_log = time.monotonic() + PROGRESS_LOG_SECONDS
        return keyword_only

    def _remove_gone(self, run: _Pass, gone: Sequence[str]) -> None:
        if run.progress and gone:
            run.progress.update(phase="removing")
        for path in gone:
            with self._handle.writer:
                # it may have come back since the scan, or its move already took it away
                if self._vault.stat(path) is None and run.live.holds(path):
                    self._notes.remove(run.live, path)
                    run.report.removed += 1

    def _plan(
        self, known: dict[str, IndexedNote], observed: dict[str, NoteFile], scope: Iterable[str] | None = None
    ) -> ChangePlan:
        """What a pass must do. Files are compared by size and mtime, unread; only when notes went and new
        files came are the new files read, so that one with the content of a note that went is that note,
        moved (its dense vectors are reused)."""
        records = {path: KnownNote(note.content_hash, note.mtime, note.size) for path, note in known.items()}
        seen = {path: ObservedFile(file.mtime, file.size) for path, file in observed.items()}
        plan = plan_changes(records, seen, scope)
        if not (plan.gone and plan.new):
            return plan
        went = {known[path].content_hash for path in plan.gone}
        for path in plan.new:
            digest = self._content_hash(path)
            if digest in went:
                seen[path] = replace(seen[path], content_hash=digest)
        return plan_changes(records, seen, scope)

    def _content_hash(self, path: str) -> str | None:
        try:
            text, _ = self._vault.read_text(path)
        except OSError:  # the pass reads it again, and reports it
            return None
        return content_hash(text)


@dataclass(slots=True)
class _Pass:
    """One pass over the vault or a few paths: where it writes, what it found, who follows it."""

    live: LiveIndex
    report: IndexReport
    progress: JobProgress | None
    moves: dict[str, str] = field(default_factory=dict)  # new path -> the path the note moved from


def build_index(
    *,
    catalog: IndexCatalog,
    embedder: Embedder | None,
    vault: Vault,
    parser: NoteParser,
    encoder: SparseEncoder,
    identity: IndexIdentity,
    chunking: ChunkingOptions | None = None,
    keyword_first_min: int = KEYWORD_FIRST_MIN,
    serving_embedder: ServingEmbedder | None = None,
) -> tuple[IndexHandle, Indexer]:
    """The serving index and its indexer over one catalog, sharing one record of the embedder's health.
    `serving_embedder`: loads the model an outdated index was built with (see IndexHandle)."""
    health = EmbedderHealth(embedder, dimension=identity.dimension) if embedder is not None else None
    loads = serving_embedder
    handle = IndexHandle(
        catalog=catalog, vault=vault, identity=identity, embedder_health=health, serving_embedder=loads
    )
    indexer = Indexer(
        handle, parser=parser, encoder=encoder, chunking=chunking, keyword_first_min=keyword_first_min
    )
    return handle, indexer


def _links_if_off(live: LiveIndex, records: dict[str, RecordedNote]) -> dict[str, int] | None:
    """Stored links per source note when their total differs from what the records count (one count call
    when it does not: reading 37,000 links takes most of a second); None when it matches or the records do
    not all know their count."""
    counts = [record.link_count for record in records.values()]
    if any(count is None for count in counts):
        return None
    if live.graph_store.count_links() == sum(count for count in counts if count is not None):
        return None
    return dict(Counter(link.source for link in live.graph_store.all_links()))


def _merged_failures(
    before: list[FileProblem], found: list[FileProblem], paths: set[str], folders: Iterable[str]
) -> list[FileProblem]:
    """The last full pass's skipped files, brought up to date for the paths and folders just rechecked."""
    paths = {shown_name(path.strip("/")) for path in [*paths, *folders]}  # as FileProblem holds them
    prefixes = tuple(f"{shown_name(folder.strip('/'))}/" for folder in folders)
    kept = [f for f in before if f.rel_path not in paths and not f.rel_path.startswith(prefixes)]
    fresh = {f.rel_path for f in found}
    return [*(f for f in kept if f.rel_path not in fresh), *found]


def _large(file: NoteFile) -> bool:
    return file.size >= LARGE_NOTE_BYTES


def _went(plan: ChangePlan) -> list[str]:
    """The paths no longer on the disk: gone, and the old side of each move (removed after its new side
    is written, unless the move already took it away)."""
    return [*plan.gone, *(move.old for move in plan.moved)]


def _moves(plan: ChangePlan) -> dict[str, str]:
    return {move.new: move.old for move in plan.moved}
