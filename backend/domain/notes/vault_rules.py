"""Which vault files are notes to index. Pure path rules, shared by the scanner and the watcher.

Paths are vault-relative with forward slashes. Rules, in order:

* only `*.md` files (suffix compared case-insensitively);
* nothing hidden: a file or any folder whose name starts with "." (`.obsidian`, `.trash`, `.git`) is out;
* `deny_dirs`: an entry with a "/" is a vault-relative folder path (`journal/private` skips that
  folder and everything below it); an entry without one is a folder name skipped at any depth
  (`templates` skips `templates/` and `projects/templates/`). Names compare exactly (case-sensitive);
* `allow_dirs`: when it has entries, only files below one of those vault-relative folders count.
  Deny wins over allow.
"""

from __future__ import annotations

from collections.abc import Sequence

MARKDOWN_SUFFIX = ".md"


def normalise_dir(entry: str) -> str:
    """`" ./Journal/ "` -> `"Journal"`; backslashes become "/", so Windows-style settings work too."""
    cleaned = entry.strip().replace("\\", "/")
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    return cleaned.strip("/")


def _clean(entries: Sequence[str]) -> list[str]:
    # An empty entry ("" or "/") would otherwise mean "the vault root" and silently match everything.
    return [d for d in (normalise_dir(e) for e in entries) if d]


def _is_hidden(parts: Sequence[str]) -> bool:
    return any(part.startswith(".") for part in parts)


def _under(folder_parts: Sequence[str], prefix: str) -> bool:
    prefix_parts = prefix.split("/")
    return list(folder_parts[: len(prefix_parts)]) == prefix_parts


def _denied(folder_parts: Sequence[str], deny: Sequence[str]) -> bool:
    for entry in deny:
        if "/" in entry:
            if _under(folder_parts, entry):
                return True
        elif entry in folder_parts:
            return True
    return False


def is_indexable(rel_path: str, deny_dirs: Sequence[str] = (), allow_dirs: Sequence[str] = ()) -> bool:
    """True when the file at vault-relative `rel_path` is a note the index should hold."""
    parts = [p for p in normalise_dir(rel_path).split("/") if p]
    if not parts or not parts[-1].lower().endswith(MARKDOWN_SUFFIX) or _is_hidden(parts):
        return False
    folders = parts[:-1]
    if _denied(folders, _clean(deny_dirs)):
        return False
    allow = _clean(allow_dirs)
    return not allow or any(_under(folders, entry) for entry in allow)


def is_attachment(rel_path: str) -> bool:
    """True when the file at vault-relative `rel_path` is one a link can lead to besides a note (an image, a
    PDF): not a note, nothing hidden. DENY and ALLOW leave it be: a link may lead to a file in any folder."""
    parts = [p for p in normalise_dir(rel_path).split("/") if p]
    return bool(parts) and not parts[-1].lower().endswith(MARKDOWN_SUFFIX) and not _is_hidden(parts)


def should_descend(rel_dir: str, deny_dirs: Sequence[str] = (), allow_dirs: Sequence[str] = ()) -> bool:
    """Whether a walker needs to look inside folder `rel_dir` ("" = vault root) at all.

    False for hidden and denied folders, and for folders that are neither inside an allowed folder
    nor on the way to one.
    """
    parts = [p for p in normalise_dir(rel_dir).split("/") if p]
    if _is_hidden(parts) or _denied(parts, _clean(deny_dirs)):
        return False
    allow = _clean(allow_dirs)
    if not allow:
        return True
    for entry in allow:
        entry_parts = entry.split("/")
        shorter = min(len(parts), len(entry_parts))
        if parts[:shorter] == entry_parts[:shorter]:
            return True
    return False
