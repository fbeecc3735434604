"""Raw watchdog events -> what they ask to recheck: notes, folders, or (events lost) the whole vault.

Only events that concern notes count (`backend.domain.notes.vault_rules`); paths are made vault-relative,
with "/" separators and in NFC, as the index names notes. A batch names what to recheck, not what
happened, so the order of events never matters.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from watchdog.events import (
    EVENT_TYPE_ATTRIB,
    EVENT_TYPE_CLOSED,
    EVENT_TYPE_CREATED,
    EVENT_TYPE_DELETED,
    EVENT_TYPE_MODIFIED,
    EVENT_TYPE_MOVED,
    FileSystemEvent,
)

from backend.domain.notes.vault_paths import canonical
from backend.domain.notes.vault_rules import is_attachment, is_indexable, should_descend

# an attribute change too: a note made readable again (chmod) is read anew; one merely touched reads the same
_FILE_CHANGES = frozenset(
    {EVENT_TYPE_CREATED, EVENT_TYPE_MODIFIED, EVENT_TYPE_CLOSED, EVENT_TYPE_DELETED, EVENT_TYPE_ATTRIB}
)
_DIR_CHANGES = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_DELETED})  # a modified folder is just noise
# an attachment appearing or going (a pasted image, a PDF) changes where links lead; its edits do not
_ATTACHMENT_CHANGES = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_DELETED, EVENT_TYPE_MOVED})

# a symlink comes as a file event, even to a folder: one that arrives is rechecked as a folder too
_LINK_ARRIVALS = frozenset({EVENT_TYPE_CREATED, EVENT_TYPE_MOVED})

_PATH = "path"
_FOLDER = "folder"
_ATTACHMENT = "attachment"
RESCAN: tuple[str, str] = ("rescan", "")
Key = tuple[str, str]  # (kind, vault-relative path)


@dataclass(frozen=True, slots=True)
class VaultChanges:
    paths: frozenset[str]  # notes created, modified, deleted or moved (either side): recheck each on disk
    folders: frozenset[str]  # folders created, deleted or moved (either side): recheck their whole subtree
    rescan: bool = False  # events may have been lost (observer restarted): compare the whole vault
    # files links may lead to, besides notes, created, deleted or moved (either side): links re-resolved
    attachments: frozenset[str] = frozenset()


def event_keys(event: FileSystemEvent, prefix: str, deny: Sequence[str], allow: Sequence[str]) -> list[Key]:
    """What `event` asks to recheck; `prefix` is the watched folder's realpath plus a separator."""
    kind = event.event_type
    if event.is_directory:
        if kind == EVENT_TYPE_MOVED or kind in _DIR_CHANGES:
            sides = [_relative(event.src_path, prefix), _relative(event.dest_path, prefix)]
            return [(_FOLDER, rel) for rel in sides if rel and should_descend(rel, deny, allow)]
        return []
    if kind == EVENT_TYPE_MOVED or kind in _FILE_CHANGES:
        sides = [_relative(event.src_path, prefix), _relative(event.dest_path, prefix)]
        keys = [(_PATH, rel) for rel in sides if rel and is_indexable(rel, deny, allow)]
        if kind in _ATTACHMENT_CHANGES:
            keys += [(_ATTACHMENT, rel) for rel in sides if rel and is_attachment(rel)]
        if kind in _LINK_ARRIVALS:
            keys += _symlinked_folder(os.fsdecode(event.dest_path or event.src_path), prefix, deny, allow)
        return keys
    return []  # opened, closed without writing


def _symlinked_folder(path: str, prefix: str, deny: Sequence[str], allow: Sequence[str]) -> list[Key]:
    """A folder key for `path` when it is a symlink that is not a note (a note's own recheck reports one):
    the recheck's scan lists it in failed_files as the full sync does (never followed), where nothing did
    until the next full sync (`ln -s /elsewhere Vault/Linked`). Its removal needs no key of this kind: it
    comes as an attachment, whose recheck drops what was reported at its path."""
    rel = _relative(path, prefix)
    if not rel or is_indexable(rel, deny, allow) or not should_descend(rel, deny, allow):
        return []
    return [(_FOLDER, rel)] if os.path.islink(path) else []


def _relative(path: bytes | str, prefix: str) -> str | None:
    """Vault-relative with "/" separators; None for the root itself or anything outside it."""
    text = os.fsdecode(path)
    if not text or not prefix or not text.startswith(prefix):
        return None
    rel = text[len(prefix) :]
    # in NFC, as the index names notes (a file synced from macOS is named in NFD on the disk)
    return canonical(rel.replace(os.sep, "/") if os.sep != "/" else rel)


def changes(keys: Iterable[Key]) -> VaultChanges:
    """The batch for these keys; entries inside a folder of the same batch are left out, since the
    folder's subtree is rechecked whole (a moved folder also reports every file and subfolder in it)."""
    keys = list(keys)
    folders = {rel for kind, rel in keys if kind == _FOLDER}
    return VaultChanges(
        paths=frozenset(rel for kind, rel in keys if kind == _PATH and not _inside(rel, folders)),
        folders=frozenset(rel for rel in folders if not _inside(rel, folders)),
        rescan=RESCAN in keys,
        attachments=frozenset(rel for kind, rel in keys if kind == _ATTACHMENT),
    )


def _inside(rel: str, folders: set[str]) -> bool:
    if not folders:
        return False
    parts = rel.split("/")
    return any("/".join(parts[:i]) in folders for i in range(1, len(parts)))
