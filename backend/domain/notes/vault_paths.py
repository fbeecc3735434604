"""Paths that come from outside (HTTP, MCP, a remembered fact's source): the one check they all go through.

A vault-relative path is what the index stores: forward slashes, no leading slash, no `.` or `..` segment, no
empty segment, no backslash, no control character, no drive letter. Anything else is refused with
SECURITY_VIOLATION before it gets near the disk, in every spelling: the check runs on the path as received,
on its percent-decoded forms (`%2e%2e%2f` and `%252e%252e` are `../`) and on their NFKC forms (fullwidth
`．．／` is `../` to anything that normalises Unicode), so a path decoded or normalised one more time
somewhere downstream cannot turn into a traversal. A path that passes is returned in Unicode NFC
(`canonical`), the form the index stores whatever form the disk uses (macOS syncs names decomposed, an agent
retypes them composed), and is otherwise unchanged: a note may really be called `100% done.md`.

The scan applies the same check to every file it finds (`unservable`): a note whose name the service would
refuse when a client sends it back (a tab, a newline, a backslash, bytes that are not UTF-8, a path over
MAX_PATH_CHARS, ...) is not indexed but listed with the reason, so every path the service hands out can be
read back.

What is not refused, on purpose: Windows device names (`CON`, `aux.md`) and bidi or zero-width characters
are ordinary file names on the Linux and macOS the service runs on (`Con.md` may be a real note; a
zero-width joiner sits in emoji names). Such a path reads an indexed note of that name or answers
NOTE_NOT_FOUND: only indexed notes are ever read, so it cannot name a device or anything outside.

The filesystem adapter still resolves every read against the vault root (symlinks included), so this is the
first of two walls, not the only one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from urllib.parse import unquote

from backend.domain.errors import SecurityViolationError
from backend.domain.models import PointFilter

MAX_PATH_CHARS = 1024
_DECODE_ROUNDS = 3  # enough for double and triple encoding; more rounds change nothing in practice
_DRIVE = re.compile(r"^[A-Za-z]:")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # C0, DEL and C1 (NEL splits lines in some tools)
# lone surrogates: the bytes of a file name that is not UTF-8 (os.fsdecode keeps them so), or a JSON "\udce9"
_NOT_UTF8 = re.compile("[\ud800-\udfff]")


def _problem(path: str) -> str | None:
    if _NOT_UTF8.search(path):
        return "bytes that are not UTF-8 in the name"
    if _CONTROL.search(path):
        return "control character in path"
    if "\\" in path:
        return "backslash in path (use forward slashes)"
    if path.startswith("/"):
        return "absolute path"
    if _DRIVE.match(path):
        return "absolute path (drive letter)"
    segments = path.split("/")
    if ".." in segments:
        return "path leaves the vault"
    if "." in segments or "" in segments:
        return "not a plain vault-relative path (empty or '.' segment)"
    return None


def _check(path: str, what: str) -> None:
    if len(path) > MAX_PATH_CHARS:
        raise SecurityViolationError(f"{what} longer than {MAX_PATH_CHARS} characters")
    forms = {path}
    checked: set[str] = set()
    for _ in range(_DECODE_ROUNDS + 1):
        for form in forms:
            problem = _problem(form)
            if problem is not None:
                shown = path if len(path) <= 200 else path[:200] + "…"
                raise SecurityViolationError(f"{problem}: {shown!r}")
        checked |= forms
        forms = {f for form in forms for f in (_decoded(form, path), unicodedata.normalize("NFKC", form))}
        forms -= checked
        if not forms:
            return


def _decoded(form: str, path: str) -> str:
    try:
        return unquote(form, errors="strict")
    except UnicodeDecodeError:
        # overlong forms such as %c0%ae are '.' to lax decoders; no real file name needs them
        raise SecurityViolationError(f"percent-encoded bytes that are not UTF-8: {path[:200]!r}") from None


def canonical(path: str) -> str:
    """The one spelling of a vault path the index stores and compares: Unicode NFC."""
    return unicodedata.normalize("NFC", path)


def vault_path(path: str) -> str:
    """`path` in NFC when it is a safe vault-relative file path; SecurityViolationError otherwise."""
    if not path:
        raise SecurityViolationError("empty path")
    _check(path, "path")
    return canonical(path)


def unservable(path: str) -> str | None:
    """Why a file found in the vault at `path` could not be served back to a client, or None."""
    try:
        vault_path(path)
    except SecurityViolationError as exc:
        return f"name the service cannot serve back ({exc.detail}); rename the file to index it"
    return None


def vault_folder(folder: str) -> str:
    """A folder as filters take it: surrounding slashes and spaces are dropped and "" (or "/") is the vault
    root; what remains must be a safe vault-relative path. `//server/share` is a network path, not a folder
    of the vault with a slash in front."""
    if folder.strip().startswith("//"):
        raise SecurityViolationError(f"network (UNC) path: {folder[:200]!r}")
    cleaned = folder.strip().strip("/")
    if cleaned:
        _check(cleaned, "folder")
    return canonical(cleaned)


def safe_filter(point_filter: PointFilter | None) -> PointFilter | None:
    """The filter with its note paths and folders checked, and they and its tags in NFC (folders cleaned
    as `vault_folder` does)."""
    if point_filter is None:
        return None
    return replace(
        point_filter,
        note_paths=tuple(vault_path(path) for path in point_filter.note_paths),
        folders=tuple(vault_folder(folder) for folder in point_filter.folders),
        tags=tuple(canonical(tag) for tag in point_filter.tags),  # notes are read in NFC too
    )
