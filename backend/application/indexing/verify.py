"""Check the index against the vault on disk and report any drift (`python -m backend verify`).

Read-only: nothing is repaired here (a sync repairs what it finds: see `Indexer._repair`). Compared:

* the notes on disk with the note records: missing, extra, and stale (size or mtime differ *and* the text
  hashes differently; a file only touched is not drift);
* the chunk points with the note records (`domain.index_consistency`): points without a record, records
  without points, gaps, points of another version, unexpected ids, dense vectors missing;
* the links with the note records: links whose source note has no record.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from backend.application.ports import Vault
from backend.application.serving.serving_index import ServingIndex
from backend.domain.errors import VaultUnavailableError
from backend.domain.index.ids import content_hash
from backend.domain.index.index_consistency import StoreDrift
from backend.domain.models import FileProblem

LIST_LIMIT = 50  # paths listed per finding; the counts are always complete


@dataclass(frozen=True, slots=True)
class VerifyReport:
    notes_on_disk: int
    notes_indexed: int
    chunks: int
    missing: list[str]  # notes on disk the index does not hold
    extra: list[str]  # indexed notes that are no longer on disk
    stale: list[str]  # indexed notes whose text on disk is not the text that was indexed
    store: StoreDrift
    dangling_links: dict[str, int]  # source note without a record -> how many of its links are stored
    dense_pending: int  # notes recorded as waiting for dense vectors (not drift: a sync embeds them)
    skipped: list[FileProblem] = field(default_factory=list)  # files the scan cannot index (not drift)

    @property
    def drifted(self) -> bool:
        return bool(self.missing or self.extra or self.stale or self.dangling_links or not self.store.clean)

    def findings(self) -> list[tuple[str, list[str]]]:
        """(what, paths) for every kind of drift found, in a fixed order."""
        store = self.store
        found = [
            ("notes on disk missing from the index", self.missing),
            ("indexed notes no longer on disk", self.extra),
            ("indexed notes whose text changed on disk", self.stale),
            ("chunk points without a note record", list(store.orphan_chunks)),
            ("note records without chunk points", list(store.notes_without_chunks)),
            ("notes with missing or stale chunk points", list(store.incomplete_notes)),
            ("notes with chunk points under unexpected ids", list(store.duplicate_chunks)),
            ("notes missing dense vectors they are recorded with", list(store.dense_missing)),
            ("notes whose stored links do not match their record", list(store.links_mismatch)),
            ("links whose source note is gone", list(self.dangling_links)),
        ]
        return [(what, paths) for what, paths in found if paths]


def verify_index(index: ServingIndex, vault: Vault) -> VerifyReport:
    """Compare the serving index with the vault as it is now (raises what the index raises when it cannot
    be read, e.g. IndexCorruptedError)."""
    drift, records, links = index.consistency()
    chunks = index.chunk_count()
    try:
        files, skipped = vault.scan()
    except NotADirectoryError as exc:  # the folder went away while serving: nothing to compare with
        raise VaultUnavailableError(
            f"the vault's folder is gone: {exc}",
            suggestion="Put the vault's folder back (or mount it again), then verify again: the index is "
            "kept.",
        ) from None
    on_disk = {f.rel_path: f for f in files}
    recorded = {r.path: r for r in records}
    stale = []
    for path in sorted(on_disk.keys() & recorded.keys()):
        file, record = on_disk[path], recorded[path]
        if file.size == record.size and file.mtime == record.mtime:
            continue
        try:
            text, _ = vault.read_text(path)
        except OSError:
            stale.append(path)  # cannot be read now: the indexed text cannot be confirmed
            continue
        if content_hash(text) != record.content_hash:
            stale.append(path)
    sources = Counter(link.source for link in links if link.source not in recorded)
    return VerifyReport(
        notes_on_disk=len(on_disk),
        notes_indexed=len(recorded),
        chunks=chunks,
        missing=sorted(on_disk.keys() - recorded.keys()),
        extra=sorted(recorded.keys() - on_disk.keys()),
        stale=stale,
        store=drift,
        dangling_links=dict(sorted(sources.items())),
        dense_pending=sum(1 for r in records if not r.dense_ready),
        skipped=skipped,
    )
