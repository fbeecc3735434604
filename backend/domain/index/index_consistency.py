"""Whether the chunk points of an index add up with its note records. Pure rules, no I/O.

A note record is written after its chunk points, so a crash leaves at worst points without a record, which
the next pass writes again. Anything else means points were lost or mixed up behind our back: a store file
truncated (qdrant-edge loses points silently when its id tracker is cut short), restored from an old backup,
or written by another version. Each finding names the notes concerned, so they can be indexed again from
the vault.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from backend.domain.index.ids import chunk_point_id
from backend.domain.models import ChunkEntry


@dataclass(frozen=True, slots=True)
class RecordedNote:
    """What a note record says about the note's chunk points."""

    content_hash: str
    dense_ready: bool
    link_count: int | None = None  # None: not recorded (an index from before links were counted)
    chunk_count: int | None = None  # None: not recorded (an index from before notes without text had none)


@dataclass(frozen=True, slots=True)
class StoreDrift:
    orphan_chunks: dict[str, int] = field(default_factory=dict)  # note path -> points without a record
    notes_without_chunks: tuple[str, ...] = ()
    # chunk indexes with a gap (points lost), or points cut from another version of the note than recorded
    incomplete_notes: tuple[str, ...] = ()
    # points whose id is not the one derived from (note, chunk index): one chunk may be held twice
    duplicate_chunks: tuple[str, ...] = ()
    dense_missing: tuple[str, ...] = ()  # recorded as embedded, with points that have no dense vector
    # stored links that do not add up with the record's count (links lost, e.g. the link shard deleted)
    links_mismatch: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        return not (
            self.orphan_chunks
            or self.notes_without_chunks
            or self.incomplete_notes
            or self.duplicate_chunks
            or self.dense_missing
            or self.links_mismatch
        )

    @property
    def damaged_notes(self) -> list[str]:
        """Recorded notes whose points cannot be trusted: to be removed and indexed again."""
        return sorted(
            {
                *self.notes_without_chunks,
                *self.incomplete_notes,
                *self.duplicate_chunks,
                *self.dense_missing,
                *self.links_mismatch,
            }
        )

    def summary(self) -> str:
        parts = [
            (sum(self.orphan_chunks.values()), "chunk points without a note record"),
            (len(self.notes_without_chunks), "notes without chunk points"),
            (len(self.incomplete_notes), "notes with missing or stale chunk points"),
            (len(self.duplicate_chunks), "notes with chunk points under unexpected ids"),
            (len(self.dense_missing), "notes missing dense vectors they are recorded with"),
            (len(self.links_mismatch), "notes whose stored links do not match their record"),
        ]
        return ", ".join(f"{count} {what}" for count, what in parts if count) or "consistent"


def store_drift(
    entries: Iterable[ChunkEntry],
    records: Mapping[str, RecordedNote],
    links_by_source: Mapping[str, int] | None = None,
) -> StoreDrift:
    """`links_by_source` (stored links per source note) is optional: counting them reads every link."""
    by_note: dict[str, list[ChunkEntry]] = defaultdict(list)
    for entry in entries:
        by_note[entry.note_path].append(entry)
    orphans = {path: len(points) for path, points in by_note.items() if path not in records}
    without, incomplete, duplicates, dense_missing = [], [], [], []
    for path, record in records.items():
        points = by_note.get(path)
        if not points:
            if record.chunk_count != 0:  # a note with no text has no points, and says so
                without.append(path)
            continue
        indexes = sorted(p.chunk_index for p in points)
        # with the count recorded, lost last chunks show too
        expected = len(indexes) if record.chunk_count is None else record.chunk_count
        if indexes != list(range(expected)) or any(p.content_hash != record.content_hash for p in points):
            incomplete.append(path)
        if any(p.id != chunk_point_id(path, p.chunk_index) for p in points):
            duplicates.append(path)
        if record.dense_ready and not all(p.has_dense for p in points):
            dense_missing.append(path)
    links_mismatch = []
    if links_by_source is not None:
        links_mismatch = [
            path
            for path, record in records.items()
            if record.link_count is not None and links_by_source.get(path, 0) != record.link_count
        ]
    return StoreDrift(
        links_mismatch=tuple(sorted(links_mismatch)),
        orphan_chunks=dict(sorted(orphans.items())),
        notes_without_chunks=tuple(sorted(without)),
        incomplete_notes=tuple(sorted(incomplete)),
        duplicate_chunks=tuple(sorted(duplicates)),
        dense_missing=tuple(sorted(dense_missing)),
    )
