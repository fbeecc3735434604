"""The wikilink graph: note records and resolved links in Qdrant, the vault file map in memory.

Links are resolved when their note is written, against the file map of the whole vault. When notes appear or
disappear, only the links whose target *name* matches them are re-resolved (one filtered query per batch of
names), so a new note turns "not created yet" links into real ones without re-reading the vault.
"""

from __future__ import annotations

import threading
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from backend.application.ports import GraphStore, Vault
from backend.domain.errors import NoteNotFoundError
from backend.domain.links import Link, LinkEnds, LinkRecord, NoteRecord
from backend.domain.models import PointFilter
from backend.domain.notes.link_resolution import VaultFileMap, name_key, resolve_links
from backend.domain.notes.note_listing import tag_matches

RESOLVE_BATCH = 256  # target names per re-resolution query
# related notes a search returns by default: a hub among the results links hundreds of notes, and an agent
# reading them all learns little from the hundredth
RELATED_LIMIT = 20


@dataclass(frozen=True, slots=True)
class TagVocabulary:
    tags: frozenset[str]
    definitions: tuple[tuple[str, str], ...]  # (acronym that is a tag of the vault, its expansion)


@dataclass(frozen=True, slots=True)
class LinkedNote:
    path: str
    title: str
    kind: str  # wikilink | embed | markdown
    anchor: str | None
    text: str | None
    line: int  # line of the link in the linking note


@dataclass(frozen=True, slots=True)
class NoteLinks:
    path: str
    title: str
    outlinks: list[LinkedNote]
    backlinks: list[LinkedNote]
    unresolved: list[LinkRecord]
    attachments: list[LinkRecord]


@dataclass(frozen=True, slots=True)
class LinkCounts:
    total: int
    resolved: int
    unresolved: int
    embeds: int


@dataclass(frozen=True, slots=True)
class RelatedNote:
    path: str
    title: str
    relationship: str  # "backlink" (it links to a result) or "outlink" (a result links to it)
    link_count: int  # how many results it links to, or is linked from


class NoteGraph:
    def __init__(self, *, store: GraphStore, vault: Vault) -> None:
        self._store = store
        self._vault = vault
        self._lock = threading.Lock()
        self._files = VaultFileMap(())
        self._records: dict[str, NoteRecord] = {}  # what the notes collection holds, for reads and listings
        # name (title, alias or file stem, as `entity_key` folds it) -> paths, for the entity shortcut
        self._names: dict[str, set[str]] = defaultdict(set)
        self._names_of: dict[str, set[str]] = {}
        # tag -> how many notes carry it: a search's tag filter is widened to the vault's tags it means,
        # without a pass over every note
        self._tags: Counter[str] = Counter()
        # (acronym, expansion) -> how many notes define it; with the tags, what a question's words may mean
        self._acronyms: Counter[tuple[str, str]] = Counter()
        self._vocabulary: TagVocabulary | None = None  # None: tags or definitions changed since it was made

    def open(self, *, reset: bool) -> list[NoteRecord]:
        """Create (or empty, when the chunk index was created anew) the graph; return the stored notes.
        The vault's files are listed here too: a search resolves a map line's link from them, and an index
        opened without a sync after it (the CLI beside no service, a service's first searches before its
        catch-up scan) would otherwise follow no pointer."""
        if reset:
            self._store.reset()
        else:
            self._store.ensure()
        self.refresh_files()
        records = self._store.all_notes()
        with self._lock:
            self._records = {r.path: r for r in records}
            self._names.clear()
            self._names_of = {}
            self._tags = Counter(tag for r in records for tag in set(r.tags))
            self._acronyms = Counter(pair for r in records for pair in set(r.acronyms))
            self._vocabulary = None
            for r in records:
                self._add_names(r)
        return records

    def reset(self) -> None:
        self._store.reset()
        with self._lock:
            self._records = {}
            self._names.clear()
            self._names_of = {}
            self._tags = Counter()
            self._acronyms = Counter()
            self._vocabulary = None

    def refresh_files(self) -> set[str]:
        """The vault's files listed again; those that appeared or went since the map was last made."""
        files = VaultFileMap(self._vault.list_files())
        with self._lock:
            before, self._files = self._files, files
        return set(before).symmetric_difference(files)

    def update_files(self, *, present: Iterable[str], absent: Iterable[str]) -> None:
        """Follow notes that appeared or went without listing the whole vault again (the watcher's case)."""
        with self._lock:
            for path in absent:
                self._files.remove(path)
            for path in present:
                self._files.add(path)

    def put(self, record: NoteRecord, parsed_links: Sequence[Link]) -> None:
        with self._lock:  # resolved under the lock: the watcher updates the file map in place
            links = resolve_links(parsed_links, source=record.path, files=self._files)
        self._store.put_note(record, links)
        with self._lock:
            self._count_tags(self._records.get(record.path), -1)
            self._records[record.path] = record
            self._count_tags(record, 1)
            self._drop_names(record.path)
            self._add_names(record)

    def mark_dense_ready(self, paths: Sequence[str]) -> None:
        """The notes' chunks got their dense vectors (nothing else of them changed: names and tags stay)."""
        self._store.mark_dense_ready(paths)
        with self._lock:
            for path in paths:
                record = self._records.get(path)
                if record is not None:
                    self._records[path] = replace(record, dense_ready=True)

    def remove(self, path: str) -> None:
        self._store.delete_note(path)
        with self._lock:
            self._count_tags(self._records.pop(path, None), -1)
            self._drop_names(path)

    def reresolve(self, changed_paths: Iterable[str]) -> int:
        """Re-resolve links that may now lead elsewhere because these files appeared or went."""
        keys = sorted({name_key(path) for path in changed_paths})
        updated = 0
        for start in range(0, len(keys), RESOLVE_BATCH):
            changed = []
            for link in self._store.links_to_names(keys[start : start + RESOLVE_BATCH]):
                with self._lock:
                    target = self._files.resolve(link.target, source=link.source)
                    attachment = target is not None and self._files.is_attachment(target)
                if target != link.resolved_path:
                    changed.append(replace(link, resolved_path=target, is_attachment=attachment))
            if changed:
                self._store.update_resolution(changed)
                updated += len(changed)
        return updated

    def counts(self) -> LinkCounts:
        total = self._store.count_links()
        resolved = self._store.count_links(resolved=True)
        return LinkCounts(total, resolved, total - resolved, self._store.count_links(kind="embed"))

    def notes_named(self, query: str) -> list[str]:
        """Paths of the notes whose title, alias or file name is exactly `query` (see `entity_key`)."""
        key = entity_key(query)
        if not key:
            return []
        with self._lock:
            return sorted(self._names.get(key, ()))

    def resolve_note(self, target: str, *, source: str) -> str | None:
        """The indexed note a link to `target` written in `source` leads to; None when it leads nowhere
        (a note not created yet), to an attachment, or to a note not indexed. From the file map in memory:
        no store query."""
        with self._lock:
            path = self._files.resolve(target, source=source)
            if path is None or self._files.is_attachment(path) or path not in self._records:
                return None
            return path

    def _add_names(self, record: NoteRecord) -> None:
        keys = {entity_key(name) for name in (record.title, *record.aliases, _stem(record.path))} - {""}
        self._names_of[record.path] = keys
        for key in keys:
            self._names[key].add(record.path)

    def _drop_names(self, path: str) -> None:
        for key in self._names_of.pop(path, ()):
            paths = self._names.get(key)
            if paths is not None:
                paths.discard(path)
                if not paths:
                    del self._names[key]

    def _count_tags(self, record: NoteRecord | None, step: int) -> None:
        if record is None:
            return
        for tag in set(record.tags):
            self._tags[tag] += step
            if self._tags[tag] <= 0:
                del self._tags[tag]
            if self._tags.get(tag, 0) == (1 if step > 0 else 0):  # a tag appeared or went
                self._vocabulary = None
        for pair in set(record.acronyms):
            self._acronyms[pair] += step
            if self._acronyms[pair] <= 0:
                del self._acronyms[pair]
            if self._acronyms.get(pair, 0) == (1 if step > 0 else 0):
                self._vocabulary = None

    def vocabulary(self) -> TagVocabulary:
        """The vault's tags and the acronyms among them that a note defines: the same object until one
        appears or goes, so what a search works out from it can be kept until then."""
        with self._lock:
            if self._vocabulary is None:
                tags = frozenset(self._tags)
                folded = {tag.casefold() for tag in tags}
                definitions = tuple(sorted(pair for pair in self._acronyms if pair[0].casefold() in folded))
                self._vocabulary = TagVocabulary(tags, definitions)
            return self._vocabulary

    def tags_meant(self, wanted: str) -> list[str]:
        """The vault's tags that `wanted` finds as Obsidian does (any case, nested tags too), sorted."""
        with self._lock:
            tags = list(self._tags)
        return sorted(tag for tag in tags if tag_matches(tag, wanted))

    def tag_filter(self, point_filter: PointFilter | None) -> PointFilter | None:
        """`point_filter` as the store reads it: each tag widened to the vault's tags it finds, since the
        store matches tags exactly. A tag that finds none stays as asked: it matches nothing, and the
        search's notice names it."""
        if point_filter is None or not point_filter.tags:
            return point_filter
        tags = [tag for wanted in point_filter.tags for tag in (self.tags_meant(wanted) or [wanted])]
        return replace(point_filter, tags=tuple(dict.fromkeys(tags)))

    def title(self, path: str) -> str:
        with self._lock:
            record = self._records.get(path)
        return record.title if record is not None and record.title else _stem(path)

    def record(self, path: str) -> NoteRecord | None:
        """The indexed note at `path` (title, aliases, tags, date, mtime, size), or None."""
        with self._lock:
            return self._records.get(path)

    def records(self) -> list[NoteRecord]:
        """Every indexed note, in no particular order (a snapshot)."""
        with self._lock:
            return list(self._records.values())

    def links_of(self, path: str) -> NoteLinks:
        records = self._store.get_notes([path])
        if path not in records:
            raise NoteNotFoundError(f"no indexed note at {path!r}")
        outgoing = self._store.outlinks(path)
        incoming = self._store.backlinks(path)
        return NoteLinks(
            path=path,
            title=records[path].title,
            outlinks=[self._linked(link, link.resolved_path) for link in outgoing if _is_note_link(link)],
            backlinks=[self._linked(link, link.source) for link in incoming],
            unresolved=[link for link in outgoing if not link.resolved],
            attachments=[link for link in outgoing if link.resolved and link.is_attachment],
        )

    def related(self, result_paths: Sequence[str], limit: int = RELATED_LIMIT) -> list[RelatedNote]:
        """The `limit` notes most linked to or from the results (not among them), found with one store
        query for all of them: by how many results each links to or is linked from, then backlinks first,
        then by path."""
        return self.relating(result_paths).of(result_paths, limit) if limit > 0 else []

    def relating(self, result_paths: Sequence[str]) -> Relating:
        """The links touching these results, read once (one store query), from which the related notes of
        any of them are found in memory: those of the results a merge of several vaults keeps."""
        paths = frozenset(result_paths)
        ends = self._store.note_links_touching(sorted(paths)) if paths else []
        return Relating(paths, ends, self.title)

    def _linked(self, link: LinkRecord, path: str | None) -> LinkedNote:
        assert path is not None
        return LinkedNote(
            path=path,
            title=self.title(path),
            kind=str(link.kind),
            anchor=link.anchor,
            text=link.text,
            line=link.line,
        )


@dataclass(frozen=True, slots=True)
class Relating:
    """The resolved links touching some results (`paths`), and the note titles to name related notes by."""

    paths: frozenset[str]
    ends: Sequence[LinkEnds]
    title: Callable[[str], str]

    def of(self, result_paths: Iterable[str], limit: int = RELATED_LIMIT) -> list[RelatedNote]:
        """`NoteGraph.related` of these results, all among `paths` (every link touching them was read)."""
        results = set(result_paths)
        assert results <= self.paths, "the links of a result not read"
        if not results or limit < 1:
            return []
        touching: dict[tuple[str, str], set[str]] = defaultdict(set)
        for source, target in self.ends:
            if target == source:
                continue
            if source in results and target not in results:
                touching[(target, "outlink")].add(source)
            elif target in results and source not in results:
                touching[(source, "backlink")].add(target)
        # the sort key needs no title: only the notes kept are named
        kept = sorted(touching.items(), key=lambda item: (-len(item[1]), item[0][1], item[0][0]))[:limit]
        return [
            RelatedNote(path=path, title=self.title(path), relationship=rel, link_count=len(linked))
            for (path, rel), linked in kept
        ]


def _is_note_link(link: LinkRecord) -> bool:
    return link.resolved and not link.is_attachment


def entity_key(text: str) -> str:
    """How a query is compared with note names: NFC, case-folded, spaces collapsed, without a trailing "?"
    and without the `[[` `]]` of a pasted wikilink, so "[[Sreenivas]]" and "sreenivas?" name one note."""
    key = " ".join(unicodedata.normalize("NFC", text).casefold().split())
    key = key.removesuffix("?").rstrip()
    if key.startswith("[[") and key.endswith("]]"):
        key = key[2:-2].strip()
    return key


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name
