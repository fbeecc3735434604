"""`GraphStore` in memory: note records and links in two dicts, with the port's orders and rules.

Leaves out: persistence (a `GraphShelf` handed to a second store plays "reopen the same data"), paging
(`page_size` is accepted and ignored) and the engines' own failure modes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from backend.domain.errors import IndexNotReadyError
from backend.domain.links import LinkEnds, LinkKind, LinkRecord, NoteRecord
from backend.domain.notes.link_resolution import name_key
from tests.fakes._engine import Switchable


@dataclass
class GraphShelf:
    ensured: bool = False
    notes: dict[str, NoteRecord] = field(default_factory=dict)
    links: dict[tuple[str, int], LinkRecord] = field(default_factory=dict)


class InMemoryGraphStore(Switchable):
    def __init__(self, shelf: GraphShelf | None = None, *, page_size: int | None = None) -> None:
        super().__init__()
        self.shelf = shelf if shelf is not None else GraphShelf()

    def ensure(self) -> None:
        with self._lock:
            self._enter("ensure")
            self.shelf.ensured = True

    def reset(self) -> None:
        with self._lock:
            self._enter("reset")
            self.shelf.ensured, self.shelf.notes, self.shelf.links = True, {}, {}

    def put_note(self, note: NoteRecord, links: Sequence[LinkRecord]) -> None:
        with self._lock:
            self._writable("put_note")
            self.shelf.links = {key: x for key, x in self.shelf.links.items() if x.source != note.path}
            self._store([note], links)

    def put_many(self, notes: Sequence[NoteRecord], links: Sequence[LinkRecord]) -> None:
        with self._lock:
            self._writable("put_many")
            self._store(notes, links)

    def mark_dense_ready(self, paths: Sequence[str]) -> None:
        with self._lock:
            self._writable("mark_dense_ready")
            for path in paths:
                stored = self.shelf.notes.get(path)
                if stored is not None:  # a note no longer stored is skipped, never created
                    self.shelf.notes[path] = replace(stored, dense_ready=True)

    def delete_note(self, path: str) -> None:
        with self._lock:
            self._writable("delete_note")
            self.shelf.notes.pop(path, None)
            self.shelf.links = {key: x for key, x in self.shelf.links.items() if x.source != path}

    def get_notes(self, paths: Sequence[str]) -> dict[str, NoteRecord]:
        with self._lock:
            self._enter("get_notes")
            return {p: self.shelf.notes[p] for p in paths if p in self.shelf.notes}

    def all_notes(self) -> list[NoteRecord]:
        with self._lock:
            self._enter("all_notes")
            return [self.shelf.notes[p] for p in sorted(self.shelf.notes)]

    def all_links(self) -> list[LinkRecord]:
        return self._links("all_links", lambda x: True)

    def outlinks(self, source: str) -> list[LinkRecord]:
        return self._links("outlinks", lambda x: x.source == source)

    def backlinks(self, target_path: str) -> list[LinkRecord]:
        return self._links("backlinks", lambda x: x.resolved_path == target_path)

    def unresolved_links(self) -> list[LinkRecord]:
        return self._links("unresolved_links", lambda x: not x.resolved)

    def warm(self) -> int:
        return 0  # everything is in memory already

    def note_links_touching(self, paths: Sequence[str]) -> list[LinkEnds]:
        wanted = set(paths)
        links = self._links("note_links_touching", lambda x: x.source in wanted or x.resolved_path in wanted)
        return [
            LinkEnds(x.source, x.resolved_path)
            for x in links
            if x.resolved_path is not None and not x.is_attachment
        ]

    def links_to_names(self, names: Sequence[str]) -> list[LinkRecord]:
        wanted = set(names)
        return self._links("links_to_names", lambda x: name_key(x.target) in wanted)

    def update_resolution(self, links: Sequence[LinkRecord]) -> None:
        with self._lock:
            self._writable("update_resolution")
            for link in links:
                stored = self.shelf.links.get((link.source, link.position))
                if stored is not None:  # a link no longer stored is skipped, never created
                    self.shelf.links[(link.source, link.position)] = replace(
                        stored, resolved_path=link.resolved_path, is_attachment=link.is_attachment
                    )

    def count_links(self, *, resolved: bool | None = None, kind: str | None = None) -> int:
        wanted = None if kind is None else LinkKind(kind)
        return len(
            self._links(
                "count_links",
                lambda x: (
                    (resolved is None or x.resolved == resolved) and (wanted is None or x.kind == wanted)
                ),
            )
        )

    # -- helpers ---------------------------------------------------------------------------------

    def _writable(self, method: str) -> None:
        self._enter(method)
        if not self.shelf.ensured:
            raise IndexNotReadyError("the note graph has not been created")

    def _store(self, notes: Iterable[NoteRecord], links: Iterable[LinkRecord]) -> None:
        self.shelf.notes.update((n.path, n) for n in notes)
        self.shelf.links.update(((x.source, x.position), x) for x in links)

    def _links(self, method: str, keep: Callable[[LinkRecord], bool]) -> list[LinkRecord]:
        with self._lock:
            self._enter(method)
            return [self.shelf.links[key] for key in sorted(self.shelf.links) if keep(self.shelf.links[key])]
