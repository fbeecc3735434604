"""Where a link leads: Obsidian's rules for turning a link target into a vault file. Pure, no I/O.

A target (as written, without "#anchor" or "|text") resolves, in order:

1. to the vault path it spells, with ".md" optional (`folder/Note` -> `folder/Note.md`,
   `img/a.png` -> `img/a.png`); a leading "/" means "from the vault root" and allows nothing else;
2. to a path relative to the source note's folder (`sub/Note`; `./x` and `../x` allow nothing else);
3. to any file whose name matches, case-insensitively: a bare `note` finds `Folder/Note.md`; a target
   with folders (`a/Note`) finds files whose path ends with those segments;
4. among several such files: the one in the source note's own folder, else the shortest path string,
   else the alphabetically first. That is what Obsidian 1.13 does (`getFirstLinkpathDest`, observed and
   reported in pvliesdonk/markdown-vault-mcp#1350/#1380): `a/b/Note.md` beats `Archive/Note.md`, and an
   ancestor folder of the source counts for nothing.

".md" is optional; any other extension (png, pdf, canvas, base, ...) must be written, as the Obsidian help
says: `[[Figure 1.png]]`. Names compare after Unicode NFC (macOS can hand out NFD file names) and case
folding. Every file a target can resolve to has the target's `name_key`, which is what lets a new or
removed file find exactly the links it affects, and what makes resolution one dict lookup per link.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator, Sequence

from backend.domain.links import Link, LinkRecord
from backend.domain.models import from_same_fields

NOTE_SUFFIX = ".md"


def _nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def _fold(text: str) -> str:
    # casefold() may leave a string un-normalised (e.g. combining marks after "İ"), so NFC on both sides
    return _nfc(_nfc(text).casefold())


def _strip_note_suffix(folded: str) -> str:
    return folded[: -len(NOTE_SUFFIX)] if folded.endswith(NOTE_SUFFIX) else folded


def name_key(target_or_path: str) -> str:
    """The case-folded, NFC file name without folders and without one trailing ".md".

    `"Folder/Note.md"`, `"note"`, `"a/NOTE "` -> `"note"`; `"img/Photo.PNG"` -> `"photo.png"`.
    A link target and every file it can resolve to share this key.
    """
    name = target_or_path.strip().rsplit("/", 1)[-1].strip()
    return _strip_note_suffix(_fold(name))


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def _join(folder: str, relative: str) -> str | None:
    """`folder` + `relative` with "." and ".." applied; None when it climbs above the vault root."""
    parts = [p for p in folder.split("/") if p]
    for segment in relative.split("/"):
        if segment in ("", "."):
            continue
        if segment == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(segment)
    return "/".join(parts)


def _is_explicitly_relative(target: str) -> bool:
    first = target.split("/", 1)[0]
    return first in (".", "..")


class VaultFileMap:
    """Every file a link can point to (notes and attachments), indexed by `name_key`.

    Paths are vault-relative with forward slashes; `resolve` returns them exactly as they were added, so they
    match the paths the rest of the index uses even when the file system spells them in NFD.
    """

    def __init__(self, paths: Iterable[str]) -> None:
        self._folded: dict[str, str] = {}  # path as added -> NFC, case-folded path
        self._by_key: dict[str, dict[str, None]] = {}  # name_key -> paths (an insertion-ordered set)
        for path in paths:
            self.add(path)

    def add(self, path: str) -> None:
        if path in self._folded:
            return
        self._folded[path] = _fold(path)
        self._by_key.setdefault(name_key(path), {})[path] = None

    def remove(self, path: str) -> None:
        if self._folded.pop(path, None) is None:
            return
        key = name_key(path)
        bucket = self._by_key[key]
        del bucket[path]
        if not bucket:
            del self._by_key[key]

    def __contains__(self, path: object) -> bool:
        return path in self._folded

    def __len__(self) -> int:
        return len(self._folded)

    def __iter__(self) -> Iterator[str]:
        return iter(self._folded)

    def is_attachment(self, path: str) -> bool:
        """True for anything that is not a Markdown note (image, pdf, canvas, base, ...)."""
        return not path.lower().endswith(NOTE_SUFFIX)

    def paths_named(self, key: str) -> list[str]:
        """The files whose `name_key` is `key` (pass a key, not a raw name), sorted."""
        return sorted(self._by_key.get(key, ()))

    def resolve(self, target: str, *, source: str) -> str | None:
        """The path `target`, written in note `source`, leads to; None when it is not created yet."""
        cleaned = _nfc(target).strip()
        if not cleaned:
            return source  # [[#Heading]], [[#^block]]: the note itself
        bucket = self._by_key.get(name_key(cleaned))
        if not bucket:
            return None
        source_folder = _folder(_nfc(source))
        if cleaned.startswith("/"):
            return self._at_path(bucket, cleaned.lstrip("/"))
        if _is_explicitly_relative(cleaned):
            joined = _join(source_folder, cleaned)
            return None if joined is None else self._at_path(bucket, joined)
        exact = self._at_path(bucket, cleaned)
        if exact is not None:
            return exact
        if "/" in cleaned:
            joined = _join(source_folder, cleaned)
            beside = None if joined is None else self._at_path(bucket, joined)
            if beside is not None:
                return beside
        return self._by_name(bucket, cleaned, _fold(source_folder))

    def _at_path(self, bucket: dict[str, None], wanted: str) -> str | None:
        """The file at vault path `wanted` (".md" optional), case-insensitively; exact spelling first."""
        folded = _fold(wanted)
        matches = [p for p in bucket if self._folded[p] in (folded, folded + NOTE_SUFFIX)]
        if not matches:
            return None
        spelled = _nfc(wanted)
        # a file named exactly as written beats "written + .md"; same spelling beats another case
        return min(
            matches,
            key=lambda p: (self._folded[p] != folded, _nfc(p) not in (spelled, spelled + NOTE_SUFFIX), p),
        )

    def _by_name(self, bucket: dict[str, None], target: str, source_folder: str) -> str | None:
        tail = _fold(target).strip("/")
        endings = ("/" + tail, "/" + tail + NOTE_SUFFIX)
        candidates = [p for p in bucket if ("/" + self._folded[p]).endswith(endings)]
        if not candidates:
            return None
        return min(candidates, key=lambda p: (_fold(_folder(p)) != source_folder, len(_nfc(p)), p))


def resolve_links(links: Sequence[Link], *, source: str, files: VaultFileMap) -> list[LinkRecord]:
    """The note's links with where they lead; `position` is the link's index in `links`."""
    records: list[LinkRecord] = []
    for position, link in enumerate(links):
        resolved = files.resolve(link.target, source=source)
        records.append(
            from_same_fields(
                LinkRecord,
                link,
                source=source,
                position=position,
                resolved_path=resolved,
                is_attachment=resolved is not None and files.is_attachment(resolved),
            )
        )
    return records
