"""Which indexed note a person or an agent meant: the path as given, without `.md`, in another letter case,
or the note's title, alias or file name, as long as exactly one note answers to it. Pure: the caller hands in
the indexed notes.

Rules, first match wins: the exact path; the path plus `.md`; the path ignoring letter case (with or without
`.md`); a title, alias or file name (without folder and `.md`) ignoring case. Two notes answering to the same
name make it ambiguous: the caller names them instead of guessing. Across several vaults (`in_vaults`) the
same holds of vaults: the name is a vault's note when that vault alone answers to it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from backend.domain.links import NoteRecord

MAX_SUGGESTIONS = 5


@dataclass(frozen=True, slots=True)
class NoteLookup:
    found: NoteRecord | None  # the one note meant
    ambiguous: tuple[str, ...] = ()  # paths of the notes that all answer to the name
    closest: tuple[str, ...] = ()  # when nothing answers: the paths closest to what was asked
    # how close each of `closest` is (0-1): what ranks the closest notes of several vaults together
    closeness: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class VaultsLookup:
    """What a name means across several vaults, each looked up alone (`in_vaults`)."""

    # vault -> the paths there answering to the name (one: its note; more: ambiguous within that vault)
    answering: Mapping[str, tuple[str, ...]]
    closest: tuple[tuple[str, str], ...] = ()  # when no vault answers: (vault, path), the closest first


def _key(text: str) -> str:
    return text.strip().casefold()


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def lookup_note(asked: str, records: Iterable[NoteRecord]) -> NoteLookup:
    notes = list(records)
    by_path = {r.path: r for r in notes}
    for candidate in (asked, f"{asked}.md"):
        if candidate in by_path:
            return NoteLookup(by_path[candidate])
    wanted = _key(asked)
    for matcher in (
        lambda r: _key(r.path) in (wanted, f"{wanted}.md"),
        lambda r: wanted in {_key(r.title), _stem(r.path).casefold(), *(_key(a) for a in r.aliases)},
    ):
        matches = [r for r in notes if matcher(r)]
        if len(matches) == 1:
            return NoteLookup(matches[0])
        if matches:
            return NoteLookup(None, ambiguous=tuple(sorted(r.path for r in matches)[:MAX_SUGGESTIONS]))
    closest = _closest(asked, notes)
    return NoteLookup(
        None, closest=tuple(path for _, path in closest), closeness=tuple(score for score, _ in closest)
    )


def in_vaults(lookups: Mapping[str, NoteLookup]) -> VaultsLookup:
    """The vaults whose lookup (`lookup_note` in each, in the vaults' order) answers to the name; when none
    does, the closest paths of all of them, the most similar first (a vault's order breaks a tie). A name
    two vaults answer to is never settled by which vault comes first: the vaults are equals."""
    answering: dict[str, tuple[str, ...]] = {}
    for vault, lookup in lookups.items():
        if lookup.found is not None:
            answering[vault] = (lookup.found.path,)
        elif lookup.ambiguous:
            answering[vault] = lookup.ambiguous
    if answering:
        return VaultsLookup(answering)
    scored = sorted(
        (-score, order, vault, path)
        for order, (vault, lookup) in enumerate(lookups.items())
        for score, path in zip(lookup.closeness, lookup.closest, strict=True)
    )
    return VaultsLookup({}, tuple((vault, path) for _, _, vault, path in scored[:MAX_SUGGESTIONS]))


def _closest(asked: str, notes: list[NoteRecord]) -> list[tuple[float, str]]:
    """Up to five paths, the most similar first, comparing what was asked with each path, file name, title
    and alias (difflib's ratio: the share of characters the two have in common, in order), with their
    scores."""
    wanted = _key(asked).removesuffix(".md")
    scored = []
    for record in notes:
        stem = _stem(record.path).casefold()
        names = (
            record.path.casefold().removesuffix(".md"),
            _key(record.title),
            stem,
            *(_key(alias) for alias in record.aliases),
        )
        score = max(difflib.SequenceMatcher(None, wanted, name).ratio() for name in names)
        scored.append((-score, record.path))
    return [(-score, path) for score, path in sorted(scored)[:MAX_SUGGESTIONS] if -score >= 0.5]
