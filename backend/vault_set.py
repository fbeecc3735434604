"""Several vaults, one service (issue 46): each vault's own settings and its `Services`, by short name.

Each vault is wired exactly as the one vault of a service without VAULTS is (bootstrap.build_services): its
own index, watcher, jobs, generations, memory and data dir, so adding or removing a vault touches no other's
index. build_services picks each vault's model from its index and languages; vaults of the same model lease
one loaded instance of it (infrastructure/embedders/shared.py), given back as each vault closes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from backend.bootstrap import Services
from backend.config import Settings
from backend.data_dirs import vault_data_dir
from backend.domain.errors import (
    InvalidRequestError,
    KnowledgeBridgeError,
    NoteAmbiguousError,
    NoteNotFoundError,
    UnknownVaultError,
    VaultUnavailableError,
)
from backend.domain.notes.note_lookup import NoteLookup, in_vaults
from backend.domain.notes.vault_paths import vault_path
from backend.domain.recall.context_packing import VAULT_PREFIX

log = logging.getLogger(__name__)

# the name the one vault of a service without VAULTS answers with: its VAULT_NAME (`obsidian` by default)

# A vault is opened once, at start: one that failed then stays out until the service starts again, while one
# whose folder went away later serves again as soon as the folder is back (`Library.problem` looks each time).
FAILED_AT_START = (
    "Check that the vault's folder exists and is readable (the service log says why it did not open), then "
    "restart the service: a vault that failed to open at start stays out until then."
)


def vault_settings(settings: Settings) -> dict[str, Settings]:
    """Each vault's settings by its short name: without VAULTS the settings as they are (the one vault
    keeps its data dir, index and routes); with VAULTS a copy per vault, with its path, VAULT_NAME = its
    name, and its data dir (`DATA_DIR/<name>` when DATA_DIR was set, else the vault's own under ./data)."""
    if not settings.vaults:
        return {settings.vault_name: settings}
    own: dict[str, Settings] = {}
    for name, path in settings.vaults.items():
        data_dir = settings.data_dir / name if settings.data_dir_named else vault_data_dir(path)
        copy = settings.model_copy(
            update={"vault_path": path, "vault_name": name, "data_dir": data_dir, "vaults": {}}
        )
        # what was set by the person stays so: a derived data dir is not one they named (data_dir_named)
        named = set(settings.model_fields_set) | {"vault_path", "vault_name"}
        object.__setattr__(copy, "__pydantic_fields_set__", named)
        copy._one_of_vaults = True
        own[name] = copy
    return own


@dataclass(frozen=True, slots=True)
class VaultFailure:
    """A vault that is not answering: why, in the error envelope's terms."""

    vault: str
    error_code: str
    detail: str
    suggestion: str = VaultUnavailableError.suggestion  # what brings it back (never in `missing_vaults`)

    def error(self) -> VaultUnavailableError:
        """The answer of a request that needs this vault: 503 VAULT_UNAVAILABLE naming it."""
        return VaultUnavailableError(
            f"the vault {self.vault!r} is unavailable: {self.detail}", suggestion=self.suggestion
        )


class Library:
    """The vaults one service serves: name -> Services for those that opened, name -> VaultFailure for
    those that did not (logged at start; the others serve)."""

    def __init__(self, services: dict[str, Services], failures: Sequence[VaultFailure] = ()) -> None:
        self.services = dict(services)
        self.failures = {f.vault: f for f in failures}
        self.names = [*self.services, *(f.vault for f in failures if f.vault not in self.services)]

    @classmethod
    def single(cls, services: Services) -> Library:
        return cls({services.settings.vault_name: services})

    @classmethod
    def open(cls, settings: Settings, opener: Callable[[Settings], Services]) -> Library:
        """Open every vault with `opener`. Without VAULTS a failure stops the start, as it always did; with
        VAULTS it is logged and recorded, and the other vaults serve."""
        each = vault_settings(settings)
        if not settings.vaults:
            return cls.single(opener(next(iter(each.values()))))
        opened: dict[str, Services] = {}
        failures: list[VaultFailure] = []
        for name, own in each.items():
            try:
                if not own.vault_path.is_dir():
                    raise VaultUnavailableError(f"{own.vault_path} is not a folder")
                opened[name] = opener(own)
            except Exception as exc:  # one vault's failure must not keep the others from serving
                detail = (
                    exc.detail if isinstance(exc, KnowledgeBridgeError) else str(exc) or type(exc).__name__
                )
                code = exc.code if isinstance(exc, KnowledgeBridgeError) else "VAULT_UNAVAILABLE"
                log.error("vault %s not served: %s", name, detail)
                failures.append(VaultFailure(name, code, detail, FAILED_AT_START))
        library = cls(opened, failures)
        library.names = list(each)  # the order VAULTS gives
        return library

    @property
    def several(self) -> bool:
        """More than one vault configured: answers name their vaults and note paths may need one."""
        return len(self.names) > 1

    @property
    def default(self) -> Services | None:
        """The first vault that opened (a one-vault service's only one)."""
        return next(iter(self.services.values()), None)

    def each(self) -> Iterator[tuple[str, Services]]:
        yield from self.services.items()

    def asked(self, names: Sequence[str] | None) -> list[str]:
        """The vaults a request names (all when it names none), checked: an unknown name is refused with
        the names this service knows."""
        if not names:
            return list(self.names)
        unknown = [n for n in names if n not in self.names]
        if unknown:
            raise UnknownVaultError(
                f"no vault named {unknown[0]!r}",
                suggestion=f"Name one of the vaults this service serves: {', '.join(self.names)}.",
            )
        return list(dict.fromkeys(names))

    def get(self, name: str | None) -> tuple[str, Services]:
        """One vault by name, or the only one when none is named (several: name one); one that cannot answer
        now (`problem`) is 503 VAULT_UNAVAILABLE, before anything reads its folder or starts a job on it."""
        if name is None:
            if self.several:
                raise UnknownVaultError(
                    "this service serves several vaults: name one with `vault`",
                    suggestion=f"Name one of: {', '.join(self.names)}.",
                )
            name = self.names[0]
        self.asked([name])
        problem = self.problem(name)
        if problem is not None:
            raise problem.error()
        return name, self.services[name]

    def problem(self, name: str) -> VaultFailure | None:
        """Why a vault cannot answer now: it failed to open, or (several vaults) its folder is gone."""
        failure = self.failures.get(name)
        if failure is not None:
            return failure
        path: Path = self.services[name].settings.vault_path
        if self.several and not path.is_dir():
            return VaultFailure(
                name,
                VaultUnavailableError.code,
                f"{path} is not a folder any more",
                f"Put the vault's folder back at {path} (or mount it again): the vault answers again by "
                "itself, without a restart.",
            )
        return None

    def answering(self) -> list[tuple[str, Services]]:
        """The vaults that can answer now, in their order (`problem`: none)."""
        return [(name, services) for name, services in self.each() if self.problem(name) is None]

    def holding(self, note_path: str, name: str | None) -> Held:
        """The vault of a note asked by path or name, and its path there: the vault named (by `name`, or by
        the path written `vault:<name>/<path>`, as a block of several vaults and the OpenClaw plugin cite a
        note), else the only one, else the one vault that holds the exact path, else the one vault where a
        note answers to it (`_answering`). Two or more vaults holding it: NOTE_AMBIGUOUS naming them. A vault
        that cannot answer now is left out."""
        note_path, name = addressed(note_path, name)
        if name is not None or not self.several:
            return Held(*self.get(name), note_path)
        holders = [n for n, s in self.answering() if _holds(s, note_path)]
        if len(holders) > 1:
            raise NoteAmbiguousError(
                f"{note_path!r} is in the vaults {', '.join(holders)}; name one with `vault`",
                suggestion=f"Ask again with vault set to one of: {', '.join(holders)}.",
            )
        if holders:
            return Held(*self.get(holders[0]), note_path)
        return Held(*self._answering(note_path), note_path)

    def _answering(self, asked: str) -> tuple[str, Services]:
        """The one vault where a note answers to `asked` as a read of that vault would take it (its path
        without `.md` or in another letter case, its title, alias or file name: `NoteReader.lookup`). Every
        vault is asked, as equals: a name two vaults answer to is NOTE_AMBIGUOUS naming each one's note, since
        the first vault's note is only a guess; none: NOTE_NOT_FOUND naming the closest notes of all, unless
        a vault could not be asked: the note may be its own, so 503 VAULT_UNAVAILABLE naming it."""
        vault_path(asked)  # a path leaving the vault is refused once (400), as the read itself would
        lookups: dict[str, NoteLookup] = {}
        failed: list[KnowledgeBridgeError] = []
        for name, services in self.answering():
            try:
                lookups[name] = services.notes.lookup(asked)
            except KnowledgeBridgeError as exc:  # its index unreadable: the others may still hold the note
                log.warning("vault %s could not look up %r: %s", name, asked, exc.detail)
                failed.append(exc)
        found = in_vaults(lookups)
        if len(found.answering) == 1:
            return self.get(next(iter(found.answering)))
        if found.answering:
            forms = ", ".join(
                f"{vault} ({paths[0]})" if len(paths) == 1 else f"{vault} (one of {', '.join(paths)})"
                for vault, paths in found.answering.items()
            )
            raise NoteAmbiguousError(
                f"{asked!r} could mean a note of each of the vaults {', '.join(found.answering)}; name one "
                "with `vault`",
                suggestion=f"Ask again with vault set to one of: {forms}.",
            )
        unavailable = [p for p in map(self.problem, self.names) if p is not None]
        if unavailable:  # the note may be the gone vault's: another vault's closest notes would mislead
            first = unavailable[0]
            answered = (
                f"no vault that answers ({', '.join(lookups)}) has it" if lookups else "no vault answers"
            )
            raise VaultUnavailableError(
                f"{asked!r}: {answered}, and the vault {first.vault!r} is unavailable: {first.detail}",
                suggestion=first.suggestion,
            )
        if failed:  # the note may be in the vault that could not be asked: its error, not a 404
            raise failed[0]
        still = [name for name, services in self.each() if not services.notes.complete]
        hint = f" (the first indexing of {', '.join(still)} is still running)" if still else ""
        suggestion = NoteNotFoundError.suggestion
        if found.closest:
            named = ", ".join(f"{path} (vault {vault})" for vault, path in found.closest)
            suggestion = f"Did you mean: {named}?"
        raise NoteNotFoundError(
            f"no indexed note at {asked!r} in the vaults {', '.join(lookups)}{hint}", suggestion=suggestion
        )

    def close(self) -> None:
        for name, services in self.services.items():
            try:
                services.close()
            except Exception:  # the others must still close
                log.exception("closing the vault %s failed", name)


class Held(NamedTuple):
    """A note's vault (its name and services) and its path in it, as `Library.holding` found them."""

    vault: str
    services: Services
    path: str


def addressed(note_path: str, name: str | None) -> tuple[str, str | None]:
    """`vault:<name>/<path>` read as the vault and the path; any other path as it is. The prefix naming
    another vault than `name` is refused: which one was meant cannot be told."""
    if not note_path.startswith(VAULT_PREFIX):  # no note's path holds a ":" (Obsidian refuses one)
        return note_path, name
    named, slash, path = note_path.removeprefix(VAULT_PREFIX).partition("/")
    if not (named and slash and path):
        return note_path, name
    if name is not None and name != named:
        raise InvalidRequestError(
            f"{note_path!r} names the vault {named!r}, and `vault` the vault {name!r}",
            suggestion="Name the vault once: the path as results give it, with `vault`.",
        )
    return path, named


def _holds(services: Services, note_path: str) -> bool:
    """The vault's folder holds a file at `note_path` (what a read of it would read); a path that tries to
    leave the vault holds nothing here: the read itself refuses it."""
    root = services.settings.vault_path
    try:
        target = (root / note_path).resolve()
        return target.is_relative_to(root.resolve()) and target.is_file()
    except (OSError, ValueError):
        return False
