"""What a pass over the vault has to do, worked out from what the index knows and what the disk shows.

One rule for the start-up sync, `/index/sync` and the watcher's refresh, so "what changed" is decided in one
place and can be tested without a disk: a file whose size and mtime match its record is unchanged without
being read; a new file with the content of a note that went is that note, moved (its vectors are reused).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class KnownNote:
    """A note as the index recorded it."""

    content_hash: str
    mtime: float
    size: int


@dataclass(frozen=True, slots=True)
class ObservedFile:
    """A note file as the disk shows it now; `content_hash` when it was read (None: only stat'ed)."""

    mtime: float
    size: int
    content_hash: str | None = None


@dataclass(frozen=True, slots=True)
class Move:
    old: str
    new: str


@dataclass(frozen=True, slots=True)
class ChangePlan:
    """Paths sorted within each group; every path considered stands in exactly one group (a move's two
    paths only in `moved`)."""

    new: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    gone: tuple[str, ...] = ()
    moved: tuple[Move, ...] = ()
    unchanged: tuple[str, ...] = ()

    @property
    def to_write(self) -> tuple[str, ...]:
        """The paths whose content must be (re)written: new, changed, and the new side of each move."""
        return tuple(sorted((*self.new, *self.changed, *(m.new for m in self.moved))))


def looks_unchanged(known: KnownNote | None, seen: ObservedFile) -> bool:
    """True when the record vouches for the file without reading it (same size and mtime), or when it was
    read and holds the recorded content (touched, not edited)."""
    if known is None:
        return False
    if known.mtime == seen.mtime and known.size == seen.size:
        return True
    return seen.content_hash is not None and seen.content_hash == known.content_hash


def plan_changes(
    known: Mapping[str, KnownNote],
    observed: Mapping[str, ObservedFile],
    scope: Iterable[str] | None = None,
) -> ChangePlan:
    """The plan that brings the index in line with `observed`.

    `scope`: the known paths this look covered (a watcher event sees a few paths, not the vault); a known path
    in scope but not observed is gone. None: the whole vault was observed. A move pairs a gone note with a new
    file whose content hash equals the gone note's, first by path on both sides, one to one."""
    covered = known.keys() if scope is None else {p for p in scope if p in known} | (observed.keys() & known)
    missing = sorted(p for p in covered if p not in observed)
    new: list[str] = []
    changed: list[str] = []
    unchanged: list[str] = []
    for path in sorted(observed):
        record = known.get(path)
        if record is None:
            new.append(path)
        elif looks_unchanged(record, observed[path]):
            unchanged.append(path)
        else:
            changed.append(path)
    by_content: dict[str, list[str]] = {}
    for path in missing:
        by_content.setdefault(known[path].content_hash, []).append(path)
    moves: list[Move] = []
    arrived: list[str] = []
    for path in new:
        digest = observed[path].content_hash
        twins = by_content.get(digest) if digest is not None else None
        if twins:
            moves.append(Move(old=twins.pop(0), new=path))
        else:
            arrived.append(path)
    moved_away = {m.old for m in moves}
    return ChangePlan(
        new=tuple(arrived),
        changed=tuple(changed),
        gone=tuple(p for p in missing if p not in moved_away),
        moved=tuple(moves),
        unchanged=tuple(unchanged),
    )
