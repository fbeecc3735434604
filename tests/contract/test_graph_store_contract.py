"""One behaviour contract for `QdrantGraphStore`, run on both engines against real stores (conftest.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from qdrant_client import QdrantClient

from backend.application.ports import GraphStore
from backend.domain.errors import IndexNotReadyError, IndexUnavailableError, StoreError
from backend.domain.links import LinkKind, LinkRecord, NoteRecord
from backend.domain.models import IndexIdentity
from backend.infrastructure.qdrant.client_engine import ClientEngine
from backend.infrastructure.qdrant.edge_engine import EdgeEngine
from backend.infrastructure.qdrant.engine import Collection
from backend.infrastructure.qdrant.graph_store import QdrantGraphStore
from tests.contract.conftest import Backend, assert_unavailable_without_a_server, failures_beside_one_writer


class CallSpy:
    """Passes everything through to the real library object and records the name of each method called."""

    def __init__(self, target: Any, calls: list[str]) -> None:
        self._target = target
        self._calls = calls

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        if not callable(value):
            return value

        def recorded(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            return value(*args, **kwargs)

        return recorded


class SpiedEdgeEngine(EdgeEngine):
    """The edge engine, each shard it makes wrapped in a `CallSpy`: shards are opened inside the engine, so
    making them is where they can be watched."""

    def __init__(self, root: Path, calls: list[str]) -> None:
        super().__init__(root)
        self._calls = calls

    def _make(self, collection: Collection, identity: IndexIdentity | None) -> Any:
        return CallSpy(super()._make(collection, identity), self._calls)


class GraphBackend(Backend[GraphStore]):
    def spied(self) -> tuple[GraphStore, list[str]]:
        """An ensured store whose every call into the Qdrant library is recorded (after `ensure`)."""
        calls: list[str] = []
        if self.kind == "client":
            store = self.keep(QdrantGraphStore(ClientEngine(CallSpy(QdrantClient(":memory:"), calls))))  # type: ignore[arg-type]
            store.ensure()
        else:
            store = self.keep(QdrantGraphStore(SpiedEdgeEngine(self._tmp / "edge", calls)))
            store.ensure()
        calls.clear()
        return store, calls


@pytest.fixture
def backend(engine_kind: str, tmp_path: Path) -> Iterator[GraphBackend]:
    built = GraphBackend(engine_kind, tmp_path, QdrantGraphStore)
    yield built
    built.close_all()


@pytest.fixture
def graph(backend: GraphBackend) -> GraphStore:
    store = backend.store()
    store.ensure()
    return store


# -- building records ------------------------------------------------------------------------------


def note(path: str, **fields: Any) -> NoteRecord:
    return NoteRecord(path=path, title=fields.pop("title", Path(path).stem), **fields)


def link(
    source: str,
    position: int,
    target: str,
    resolved_path: str | None = None,
    *,
    kind: LinkKind = LinkKind.WIKILINK,
    text: str | None = None,
    anchor: str | None = None,
    is_attachment: bool = False,
) -> LinkRecord:
    return LinkRecord(
        source=source,
        position=position,
        target=target,
        kind=kind,
        line=position + 1,
        text=text,
        anchor=anchor,
        resolved_path=resolved_path,
        is_attachment=is_attachment,
    )


def wikilinks(source: str, *targets: str) -> list[LinkRecord]:
    """Resolved wikilinks `[[target]]` to `target.md`, in order."""
    return [link(source, i, target, f"{target}.md") for i, target in enumerate(targets)]


def put(store: GraphStore, path: str, *targets: str) -> None:
    store.put_note(note(path), wikilinks(path, *targets))


def pairs(links: list[LinkRecord]) -> list[tuple[str, str | None]]:
    return [(x.source, x.resolved_path) for x in links]


# -- lifecycle -------------------------------------------------------------------------------------


def test_ensure_is_idempotent_and_keeps_data(graph: GraphStore) -> None:
    put(graph, "a.md", "b")
    graph.ensure()
    graph.ensure()
    assert list(graph.get_notes(["a.md"])) == ["a.md"]
    assert pairs(graph.outlinks("a.md")) == [("a.md", "b.md")]


def test_reset_empties_both_collections(graph: GraphStore) -> None:
    put(graph, "a.md", "b", "c")
    put(graph, "b.md", "a")
    graph.reset()
    assert graph.all_notes() == []
    assert graph.count_links() == 0
    assert graph.backlinks("a.md") == []
    put(graph, "c.md", "a")  # still usable
    assert [n.path for n in graph.all_notes()] == ["c.md"]


def test_close_then_reopen_keeps_notes_and_links(backend: GraphBackend) -> None:
    first = backend.reopenable()
    first.ensure()
    first.put_note(note("a.md", tags=("t",)), [link("a.md", 0, "b", "b.md"), link("a.md", 1, "nowhere")])
    put(first, "b.md", "a")
    first.close()
    first.close()  # safe twice

    again = backend.reopenable()
    assert [n.path for n in again.all_notes()] == ["a.md", "b.md"]  # readable before ensure
    again.ensure()
    assert again.get_notes(["a.md"])["a.md"].tags == ("t",)
    assert pairs(again.outlinks("a.md")) == [("a.md", "b.md"), ("a.md", None)]
    assert pairs(again.backlinks("a.md")) == [("b.md", "a.md")]
    assert again.count_links(resolved=False) == 1


def test_a_closed_store_refuses_work(graph: GraphStore) -> None:
    graph.close()
    with pytest.raises(StoreError):
        graph.all_notes()
    with pytest.raises(StoreError):
        put(graph, "a.md")


def test_before_ensure_reads_find_nothing_and_writes_refuse(backend: GraphBackend) -> None:
    store = backend.store()
    assert store.all_notes() == []
    assert store.get_notes(["a.md"]) == {}
    assert store.outlinks("a.md") == []
    assert store.note_links_touching(["a.md"]) == []
    assert store.count_links() == 0
    with pytest.raises(IndexNotReadyError):
        put(store, "a.md", "b")


# -- notes -----------------------------------------------------------------------------------------


def test_put_and_get_notes_round_trip_every_field(graph: GraphStore) -> None:
    full = NoteRecord(
        path="Projects/Database migration.md",
        title="Database migration",
        aliases=("DB move", "Migration"),
        tags=("project", "db/postgres"),
        date="2026-01-31",
        mtime=1767225600.25,
        size=4096,
        content_hash="abc123",
        problems=("invalid UTF-8 replaced", "front matter is not a mapping"),
        dense_ready=False,
        link_count=0,
        chunk_count=0,
        acronyms=(("GAD", "generalised anxiety disorder"), ("CBT", "cognitive behavioural therapy")),
    )
    bare = NoteRecord(path="Inbox.md", title="Inbox")  # counts None: a record from before they existed
    graph.put_note(full, [])
    graph.put_note(bare, [])
    found = graph.get_notes([full.path, bare.path, "missing.md", full.path])
    assert found == {full.path: full, bare.path: bare}
    assert found[bare.path].date is None
    assert graph.all_notes() == [bare, full]


def test_put_note_replaces_the_record(graph: GraphStore) -> None:
    graph.put_note(note("a.md", title="Old", tags=("x",)), [])
    graph.put_note(note("a.md", title="New"), [])
    assert graph.all_notes() == [note("a.md", title="New")]


def test_mark_dense_ready_changes_that_flag_of_those_notes_alone(backend: GraphBackend) -> None:
    # The dense pass adds vectors to a note the keyword pass wrote: its record says so, the rest stays.
    graph = backend.reopenable()
    graph.ensure()
    pending = note("pending.md", tags=("t",), dense_ready=False, chunk_count=3, content_hash="h1")
    graph.put_note(pending, wikilinks("pending.md", "b", "c"))
    graph.put_note(note("other.md", dense_ready=False), [])

    graph.mark_dense_ready(["pending.md", "never-written.md"])
    graph.close()

    again = backend.reopenable()
    assert again.get_notes(["pending.md"])["pending.md"] == replace(pending, dense_ready=True)
    assert not again.get_notes(["other.md"])["other.md"].dense_ready
    assert sorted(n.path for n in again.all_notes()) == ["other.md", "pending.md"]  # none created
    assert pairs(again.outlinks("pending.md")) == [("pending.md", "b.md"), ("pending.md", "c.md")]


def test_get_notes_of_nothing_is_empty(graph: GraphStore) -> None:
    put(graph, "a.md")
    assert graph.get_notes([]) == {}


def test_all_notes_pages_through_every_note(backend: GraphBackend) -> None:
    store = backend.store(page_size=3)
    store.ensure()
    for i in range(10):
        put(store, f"n{i:02}.md", f"n{(i + 1) % 10:02}")
    assert [n.path for n in store.all_notes()] == [f"n{i:02}.md" for i in range(10)]
    assert len(store.note_links_touching([f"n{i:02}.md" for i in range(10)])) == 10


# -- links -----------------------------------------------------------------------------------------


def test_links_round_trip_every_field(graph: GraphStore) -> None:
    written = [
        link("a.md", 0, "Folder/B", "Folder/B.md", text="see B", anchor="Heading#Sub"),
        link("a.md", 1, "pic.png", "assets/pic.png", kind=LinkKind.EMBED, is_attachment=True),
        link("a.md", 2, "Not yet", None, kind=LinkKind.MARKDOWN, text="later", anchor="^block1"),
        link("a.md", 3, "", "a.md", anchor="Top"),  # a link to a heading of the same note
    ]
    graph.put_note(note("a.md"), written)
    assert graph.outlinks("a.md") == written


def test_put_note_again_with_fewer_links_leaves_no_stale_ones(graph: GraphStore) -> None:
    put(graph, "a.md", "b", "c", "d")
    put(graph, "a.md", "c")
    assert pairs(graph.outlinks("a.md")) == [("a.md", "c.md")]
    assert graph.count_links() == 1
    assert graph.backlinks("d.md") == []
    assert graph.links_to_names(["b", "d"]) == []
    put(graph, "a.md")
    assert graph.outlinks("a.md") == []
    assert graph.count_links() == 0


def test_put_note_leaves_other_notes_links_alone(graph: GraphStore) -> None:
    put(graph, "a.md", "b", "c")
    put(graph, "a.md.bak", "b", "c")
    put(graph, "x/a.md", "b", "c")
    put(graph, "a.md", "b")
    assert graph.count_links() == 5


def test_delete_note_removes_record_and_outgoing_links_but_not_incoming(graph: GraphStore) -> None:
    put(graph, "a.md", "b")
    put(graph, "b.md", "a", "c")
    graph.delete_note("b.md")
    assert list(graph.get_notes(["a.md", "b.md"])) == ["a.md"]
    assert graph.outlinks("b.md") == []
    assert pairs(graph.backlinks("b.md")) == [("a.md", "b.md")]
    assert graph.backlinks("c.md") == []
    graph.delete_note("never-existed.md")  # harmless


def test_outlinks_come_in_written_order(graph: GraphStore) -> None:
    targets = [f"t{i}" for i in range(12)]
    put(graph, "a.md", *targets)
    assert [x.target for x in graph.outlinks("a.md")] == targets


def test_backlinks_are_the_links_resolving_to_the_note(graph: GraphStore) -> None:
    put(graph, "a.md", "target", "other")
    put(graph, "b.md", "target", "target")
    put(graph, "target.md", "target")  # links to itself count too
    graph.put_note(note("c.md"), [link("c.md", 0, "target")])  # unresolved: a name, no path
    assert pairs(graph.backlinks("target.md")) == [
        ("a.md", "target.md"),
        ("b.md", "target.md"),
        ("b.md", "target.md"),
        ("target.md", "target.md"),
    ]


def test_note_links_touching_are_resolved_note_links_from_or_to_any_of_the_paths(graph: GraphStore) -> None:
    put(graph, "a.md", "b", "x", "b")
    put(graph, "b.md", "c")
    put(graph, "c.md", "a")
    put(graph, "d.md", "x")
    graph.put_note(
        note("e.md"),
        [
            link("e.md", 0, "a", "a.md"),
            link("e.md", 1, "not yet written"),  # unresolved: no end to count
            link("e.md", 2, "a.png", "a.png", kind=LinkKind.EMBED, is_attachment=True),
        ],
    )
    graph.put_note(note("f.md"), [link("f.md", 0, "b.png", "b.png", kind=LinkKind.EMBED, is_attachment=True)])

    touching = graph.note_links_touching(["a.md", "b.md", "b.png"])

    assert sorted(touching) == [
        ("a.md", "b.md"),
        ("a.md", "b.md"),  # two links, two entries: a note linked twice counts its links
        ("a.md", "x.md"),
        ("b.md", "c.md"),
        ("c.md", "a.md"),
        ("e.md", "a.md"),
    ]
    assert all(isinstance(end, str) for ends in touching for end in ends)
    assert graph.note_links_touching(["e.md"]) == [("e.md", "a.md")]
    assert graph.note_links_touching([]) == []


def test_note_links_touching_follow_every_write_of_the_links(graph: GraphStore) -> None:
    # what related notes read is kept between searches: asked again, the same; after any write, the new
    def touching(*paths: str) -> list[tuple[str, str]]:
        found = sorted(graph.note_links_touching(list(paths)))
        assert sorted(graph.note_links_touching(list(paths))) == found  # asked again: kept, not read
        return found

    put(graph, "a.md", "b", "c")
    put(graph, "b.md", "a")
    assert touching("a.md") == [("a.md", "b.md"), ("a.md", "c.md"), ("b.md", "a.md")]
    assert touching("b.md", "a.md") == [("a.md", "b.md"), ("a.md", "c.md"), ("b.md", "a.md")]
    put(graph, "a.md", "c")  # a note saved with fewer links
    assert touching("a.md", "b.md") == [("a.md", "c.md"), ("b.md", "a.md")]
    put(graph, "d.md", "a")  # a new note linking in
    assert touching("a.md") == [("a.md", "c.md"), ("b.md", "a.md"), ("d.md", "a.md")]
    graph.delete_note("b.md")
    assert touching("a.md") == [("a.md", "c.md"), ("d.md", "a.md")]
    graph.put_many([note("e.md")], wikilinks("e.md", "a"))
    assert touching("a.md") == [("a.md", "c.md"), ("d.md", "a.md"), ("e.md", "a.md")]
    graph.put_note(note("f.md"), [link("f.md", 0, "g", None)])  # a link to a note not written yet ...
    assert touching("f.md") == []
    graph.update_resolution([link("f.md", 0, "g", "g.md")])  # ... resolved when it is
    assert touching("f.md", "a.md") == [
        ("a.md", "c.md"),
        ("d.md", "a.md"),
        ("e.md", "a.md"),
        ("f.md", "g.md"),
    ]
    graph.reset()
    assert touching("a.md", "f.md") == []


def test_links_to_names_match_the_file_name_key(graph: GraphStore) -> None:
    graph.put_note(
        note("a.md"),
        [
            link("a.md", 0, "Folder/My Note.md", None, kind=LinkKind.MARKDOWN),
            link("a.md", 1, "my note"),
            link("a.md", 2, "MY NOTE", "Other/MY NOTE.md"),
            link("a.md", 3, "My Notes"),
            link("a.md", 4, "diagram.PNG", None, kind=LinkKind.EMBED),
        ],
    )
    assert [x.position for x in graph.links_to_names(["my note"])] == [0, 1, 2]
    assert [x.position for x in graph.links_to_names(["diagram.png", "unknown"])] == [4]
    assert graph.links_to_names([]) == []


def test_update_resolution_changes_only_the_resolution(graph: GraphStore) -> None:
    put(graph, "b.md", "Target")
    graph.put_note(note("a.md"), [link("a.md", 0, "Target", None, text="shown"), link("a.md", 1, "Other")])
    assert graph.count_links(resolved=False) == 2

    moved = link("a.md", 0, "CHANGED", "Folder/Target.md", text="CHANGED", kind=LinkKind.EMBED)
    unlinked = link("b.md", 0, "Target", None)
    ghost = link("gone.md", 0, "Target", "Folder/Target.md")  # not stored: skipped, not created
    graph.update_resolution([moved, unlinked, ghost])

    first = graph.outlinks("a.md")[0]
    assert first == link("a.md", 0, "Target", "Folder/Target.md", text="shown")
    assert pairs(graph.backlinks("Folder/Target.md")) == [("a.md", "Folder/Target.md")]
    assert graph.backlinks("Target.md") == []
    assert graph.outlinks("b.md")[0].resolved_path is None
    assert graph.count_links() == 3
    assert graph.count_links(resolved=False) == 2
    named = graph.links_to_names(["target"])  # the name key stays what was written
    assert [(x.source, x.position) for x in named] == [("a.md", 0), ("b.md", 0)]
    graph.update_resolution([])


def test_update_resolution_marks_attachments(graph: GraphStore) -> None:
    graph.put_note(note("a.md"), [link("a.md", 0, "pic.png", None, kind=LinkKind.EMBED)])
    found = link("a.md", 0, "pic.png", "img/pic.png", kind=LinkKind.EMBED, is_attachment=True)
    graph.update_resolution([found])
    (stored,) = graph.outlinks("a.md")
    assert (stored.resolved_path, stored.is_attachment, stored.resolved) == ("img/pic.png", True, True)


def test_count_links_by_resolution_and_kind(graph: GraphStore) -> None:
    graph.put_note(
        note("a.md"),
        [
            link("a.md", 0, "b", "b.md"),
            link("a.md", 1, "c", None),
            link("a.md", 2, "pic.png", "pic.png", kind=LinkKind.EMBED, is_attachment=True),
            link("a.md", 3, "missing.png", None, kind=LinkKind.EMBED),
            link("a.md", 4, "b.md", "b.md", kind=LinkKind.MARKDOWN),
        ],
    )
    assert graph.count_links() == 5
    assert graph.count_links(resolved=True) == 3
    assert graph.count_links(resolved=False) == 2
    assert graph.count_links(kind="embed") == 2
    assert graph.count_links(kind=LinkKind.WIKILINK) == 2
    assert graph.count_links(resolved=False, kind="embed") == 1
    assert graph.count_links(resolved=True, kind="markdown") == 1


def test_unresolved_links_are_those_of_every_note_to_nothing_yet_in_order(graph: GraphStore) -> None:
    graph.put_note(note("b.md"), [link("b.md", 0, "Someday", None), link("b.md", 1, "a", "a.md")])
    graph.put_note(
        note("a.md"),
        [
            link("a.md", 0, "b", "b.md"),
            link("a.md", 1, "Later", None),
            link("a.md", 2, "missing.png", None, kind=LinkKind.EMBED),
        ],
    )
    assert [(x.source, x.target) for x in graph.unresolved_links()] == [
        ("a.md", "Later"),
        ("a.md", "missing.png"),
        ("b.md", "Someday"),
    ]
    graph.delete_note("b.md")
    assert [x.target for x in graph.unresolved_links()] == ["Later", "missing.png"]


def test_unicode_paths_and_names(graph: GraphStore) -> None:
    cafe = "Ärger/Café ☕ Ünïcödé.md"
    tokyo = "日本語/東京 ノート.md"
    graph.put_note(note(cafe, aliases=("Кофе",)), [link(cafe, 0, "東京 ノート", tokyo, text="東京")])
    graph.put_note(note(tokyo), [link(tokyo, 0, "Ärger/Café ☕ Ünïcödé", cafe), link(tokyo, 1, "ÉTÉ")])
    assert graph.get_notes([cafe])[cafe].aliases == ("Кофе",)
    assert pairs(graph.backlinks(cafe)) == [(tokyo, cafe)]
    assert pairs(graph.outlinks(cafe)) == [(cafe, tokyo)]
    assert [x.source for x in graph.links_to_names(["café ☕ ünïcödé"])] == [tokyo]
    assert [x.position for x in graph.links_to_names(["été"])] == [1]
    decomposed = "Cafe\u0301 noir"  # NFD, as macOS may write it
    graph.put_note(note("x.md"), [link("x.md", 0, decomposed)])
    assert [x.target for x in graph.links_to_names(["café noir"])] == [decomposed]
    assert sorted(graph.note_links_touching([cafe])) == [(cafe, tokyo), (tokyo, cafe)]
    graph.delete_note(cafe)
    assert graph.get_notes([cafe, tokyo]).keys() == {tokyo}


# -- one store call --------------------------------------------------------------------------------


@pytest.mark.parametrize("how_many", [1, 50])
def test_note_links_touching_is_one_store_call(backend: GraphBackend, how_many: int) -> None:
    store, calls = backend.spied()
    paths = [f"n{i:03}.md" for i in range(60)]
    written = [wikilinks(path, f"n{(i + 1) % 60:03}", f"n{(i + 7) % 60:03}") for i, path in enumerate(paths)]
    for path, links in zip(paths, written, strict=True):
        store.put_note(note(path), links)
    calls.clear()

    touching = store.note_links_touching(paths[:how_many])

    assert len(calls) == 1, calls
    wanted = set(paths[:how_many])
    expected = [x for links in written for x in links if x.source in wanted or x.resolved_path in wanted]
    assert sorted(touching) == sorted((x.source, x.resolved_path) for x in expected)
    assert len(touching) == {1: 4, 50: 108}[how_many]  # n000: 2 out, 2 in; n000-n049: 100 out, 8 in


def test_after_warming_related_notes_read_no_store_and_follow_writes(backend: GraphBackend) -> None:
    store, calls = backend.spied()
    paths = [f"n{i:03}.md" for i in range(60)]
    for i, path in enumerate(paths):
        store.put_note(note(path), wikilinks(path, f"n{(i + 1) % 60:03}", "not yet written"))
    put(store, "alone.md")  # no link at all: kept too, as none
    expected = {path: sorted(store.note_links_touching([path])) for path in [*paths, "alone.md"]}
    store.put_note(note("n000.md"), wikilinks("n000.md", "n001"))  # a write: what was kept goes
    store.put_note(note("n000.md"), wikilinks("n000.md", "n001", "not yet written"))
    calls.clear()

    assert store.warm() == 61
    calls.clear()
    for path, ends in expected.items():
        assert sorted(store.note_links_touching([path])) == ends
    assert calls == []  # every note's link ends from memory
    put(store, "n005.md", "alone")  # a write after the warm-up: read again, as written
    assert sorted(store.note_links_touching(["alone.md"])) == [("n005.md", "alone.md")]


def test_get_notes_is_one_store_call(backend: GraphBackend) -> None:
    store, calls = backend.spied()
    paths = [f"n{i:03}.md" for i in range(30)]
    for path in paths:
        put(store, path)
    calls.clear()
    assert set(store.get_notes(paths)) == set(paths)
    assert len(calls) == 1, calls


# -- concurrency and adapter-specific failure modes ------------------------------------------------


def test_all_links_lists_every_link_by_source_and_position(graph: GraphStore) -> None:
    assert graph.all_links() == []
    put(graph, "b.md", "c", "a")
    put(graph, "a.md", "b")
    picture = link("z.md", 1, "pic.png", "pic.png", is_attachment=True)
    graph.put_note(note("z.md"), [link("z.md", 0, "Nowhere"), picture])

    everything = graph.all_links()

    order = [(x.source, x.position) for x in everything]
    assert order == [("a.md", 0), ("b.md", 0), ("b.md", 1), ("z.md", 0), ("z.md", 1)]
    assert everything[3].resolved_path is None
    assert everything[4].is_attachment is True


def test_put_many_stores_what_put_note_would(backend: GraphBackend) -> None:
    one_by_one, bulk = backend.store(), backend.other()
    one_by_one.ensure()
    bulk.ensure()
    records = {f"n{i}.md": wikilinks(f"n{i}.md", *(f"n{j}" for j in range(i))) for i in range(5)}
    for path, links in records.items():
        one_by_one.put_note(note(path, tags=("t",), dense_ready=False), links)

    bulk.put_many(
        [note(path, tags=("t",), dense_ready=False) for path in records],
        [x for links in records.values() for x in links],
    )

    assert bulk.all_notes() == one_by_one.all_notes()
    assert bulk.all_links() == one_by_one.all_links()
    assert bulk.backlinks("n0.md") == one_by_one.backlinks("n0.md")
    assert bulk.count_links(resolved=True) == 10


def test_reads_keep_working_while_one_writer_updates(graph: GraphStore) -> None:
    put(graph, "seed.md", "n0")

    def read() -> None:
        graph.note_links_touching(["seed.md", "n0.md"])
        graph.all_notes()
        graph.count_links(resolved=True)

    def write() -> None:
        for i in range(40):
            put(graph, f"n{i}.md", "seed", f"n{i + 1}")
            if i % 10 == 9:
                graph.delete_note(f"n{i - 1}.md")

    assert failures_beside_one_writer(read, write) == []
    assert len(graph.all_notes()) == 1 + 40 - 4
    assert len(graph.backlinks("seed.md")) == 40 - 4


def test_edge_graph_held_by_another_owner_is_unavailable(tmp_path: Path) -> None:
    owner = QdrantGraphStore(EdgeEngine(tmp_path))
    owner.ensure()
    put(owner, "a.md", "b")
    intruder = QdrantGraphStore(EdgeEngine(tmp_path))
    try:
        with pytest.raises(IndexUnavailableError):
            intruder.all_notes()
        with pytest.raises(IndexUnavailableError):
            intruder.ensure()
        with pytest.raises(IndexUnavailableError):
            intruder.reset()  # must not delete the files under the owner
        assert owner.count_links() == 1
    finally:
        intruder.close()
        owner.close()


def test_edge_graph_lays_out_one_shard_per_collection(tmp_path: Path) -> None:
    store = QdrantGraphStore(EdgeEngine(tmp_path))
    try:
        store.ensure()
        assert (tmp_path / "obsidian_notes").is_dir()
        assert (tmp_path / "obsidian_links").is_dir()
    finally:
        store.close()


def test_client_graph_without_a_server_is_unavailable() -> None:
    assert_unavailable_without_a_server(
        QdrantGraphStore, lambda store: store.ensure(), lambda store: store.note_links_touching(["a.md"])
    )
