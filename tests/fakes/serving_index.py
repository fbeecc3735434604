"""`ServingIndex` over the in-memory stores, filled the way the indexer writes notes (same chunks, payloads,
keyword and dense vectors), and the `Handles` the use cases of `application/operations.py` run on.

A test hands in notes as Markdown text; what the index reports (complete, refusing searches, answering by
keyword only) is set by the test instead of being the outcome of a sync: the rules that read the index are
tested here, the writer's own rules in tests/application/test_indexing*.py on the real engine."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from backend.application.notes.memory import MemoryService
from backend.application.notes.reading import NoteReader
from backend.application.ports import Embedder
from backend.application.recall.context import ContextService
from backend.application.search.service import SearchOptions, SearchService
from backend.application.serving.embedder_health import EmbedderHealth
from backend.application.serving.live_index import LiveIndex
from backend.application.serving.note_graph import NoteGraph, NoteLinks
from backend.domain.errors import KnowledgeBridgeError
from backend.domain.index.ids import chunk_point_id, content_hash
from backend.domain.index.index_consistency import RecordedNote, StoreDrift, store_drift
from backend.domain.index.index_texts import embedding_text, keyword_fields
from backend.domain.index.payload import chunk_payload
from backend.domain.links import LinkRecord, NoteRecord
from backend.domain.models import IndexIdentity, PointRecord
from backend.domain.notes.chunking import chunk_note
from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.sparse import SparseEncoder
from backend.infrastructure.markdown.parser import parse_note
from tests.fakes.chunk_store import InMemoryChunkStore
from tests.fakes.clock import ManualClock
from tests.fakes.graph_store import InMemoryGraphStore
from tests.fakes.memory_store import InMemoryMemoryStore
from tests.fakes.vault import FakeVault


def identity_of(embedder: Embedder | None, encoder: SparseEncoder) -> IndexIdentity:
    if embedder is None:
        return IndexIdentity("none", None, encoder.fingerprint)
    return IndexIdentity(embedder.model_name, embedder.dimension, encoder.fingerprint)


class FakeServingIndex:
    """Leaves out: the writer (sync, refresh, rebuild, the dense catch-up), generations and their switch,
    and corruption. `refusal` is what `check_searchable` raises (None: searches are served)."""

    def __init__(self, *, embedder: Embedder | None, encoder: SparseEncoder, vault: FakeVault) -> None:
        self.embedder = embedder
        self.encoder = encoder
        self.vault = vault
        self.store = InMemoryChunkStore()
        self.store.create(identity_of(embedder, encoder))
        self.graph_store = InMemoryGraphStore()
        self.graph = NoteGraph(store=self.graph_store, vault=vault)
        self.graph.open(reset=True)
        self.live = LiveIndex("fake", self.store, self.graph_store, self.graph)
        self.clock = ManualClock()  # the embedder health's: a test moves it past the probe interval
        self.embedder_health = (
            None
            if embedder is None
            else EmbedderHealth(embedder, dimension=embedder.dimension, clock=self.clock)
        )
        self.complete = True
        self.keyword_fallback: str | None = None
        self.dense_fallback: str | None = None
        self.refusal: KnowledgeBridgeError | None = None

    def add_notes(self, notes: Mapping[str, str], *, dense: bool = True) -> None:
        """Write these files to the vault and index the notes among them as the indexer would; `dense=False`
        writes keyword vectors only (as while the embedder is down: the notes wait for dense vectors)."""
        self.vault.files.update(notes)
        self.graph.update_files(present=notes, absent=())
        for path, text in notes.items():
            if path.endswith(".md"):
                self._write(path, text, dense=dense and self.embedder is not None)
        self.graph.reresolve(notes)

    def _write(self, path: str, text: str, *, dense: bool) -> None:
        note = parse_note(path, text)
        chunks = chunk_note(note)
        vectors = self.embedder.embed_documents([embedding_text(note, c) for c in chunks]) if dense else None
        digest = content_hash(text)
        self.store.delete_by_note(path)
        self.store.upsert(
            [
                PointRecord(
                    id=chunk_point_id(path, chunk.chunk_index),
                    sparse=self.encoder.encode_document(keyword_fields(note, chunk)),
                    payload=chunk_payload(note, chunk, mtime=1.0, content_hash=digest),
                    dense=tuple(vectors[i]) if vectors else None,
                )
                for i, chunk in enumerate(chunks)
            ]
        )
        record = NoteRecord(
            path=path,
            title=note.title,
            aliases=note.aliases,
            tags=note.tags,
            date=note.date,
            mtime=1.0,
            size=len(text.encode()),  # as the vault states it
            content_hash=digest,
            dense_ready=dense or self.embedder is None,
            link_count=len(note.links),
            chunk_count=len(chunks),
        )
        self.graph.put(record, note.links)

    # -- the port --------------------------------------------------------------------------------

    @property
    def serving_health(self) -> EmbedderHealth | None:
        return self.embedder_health

    @property
    def indexed_notes(self) -> int:
        return len(self.graph.records())

    @property
    def dense_pending(self) -> int:
        if self.embedder is None:
            return 0
        return sum(1 for r in self.graph.records() if not r.dense_ready)

    def check_searchable(self) -> None:
        if self.refusal is not None:
            raise self.refusal

    @contextmanager
    def serving(self) -> Iterator[LiveIndex]:
        with self.live.lease() as live:
            yield live

    def note_record(self, path: str) -> NoteRecord | None:
        return self.graph.record(path)

    def note_links(self, path: str) -> NoteLinks:
        return self.graph.links_of(path)

    def note_records(self) -> list[NoteRecord]:
        return self.graph.records()

    def chunk_count(self) -> int:
        return self.store.count()

    def consistency(self) -> tuple[StoreDrift, list[NoteRecord], list[LinkRecord]]:
        stored, links = self.graph_store.all_notes(), self.graph_store.all_links()
        recorded = {
            r.path: RecordedNote(r.content_hash, r.dense_ready, r.link_count, r.chunk_count) for r in stored
        }
        return store_drift(self.store.inventory(), recorded, Counter(x.source for x in links)), stored, links


@dataclass
class FakeHandles:
    """The `Handles` of application/operations.py on fakes, counting what the doors' rules call."""

    index: FakeServingIndex
    search: SearchService
    policy: ContentPolicy
    notes: NoteReader
    memory: MemoryService
    context: ContextService
    memory_store: InMemoryMemoryStore
    vault: FakeVault
    supervisor: FakeSupervisor = field(default_factory=lambda: FakeSupervisor())

    @property
    def events(self) -> list[str]:
        return self.supervisor.events


@dataclass
class FakeSupervisor:
    """The index rules the use cases ask for (`IndexRules`), counted in the order they were asked."""

    events: list[str] = field(default_factory=list)

    def open(self) -> None:
        self.events.append("open")

    def catch_up_dense(self) -> None:
        self.events.append("catch_up_dense")


def wire(
    notes: Mapping[str, str] | None = None,
    *,
    embedder: Embedder | None,
    policy: ContentPolicy | None = None,
    options: SearchOptions | None = None,
    encoder: SparseEncoder | None = None,
    clock: Callable[[], float] = lambda: 1_800_000_000.0,
) -> FakeHandles:
    """Every use case wired on fakes, the notes indexed (with dense vectors when there is an embedder)."""
    encoder = encoder or SparseEncoder()
    policy = policy or ContentPolicy()
    vault = FakeVault()
    index = FakeServingIndex(embedder=embedder, encoder=encoder, vault=vault)
    index.add_notes(notes or {})
    search = SearchService(embedder=embedder, encoder=encoder, index=index, options=options)
    reader = NoteReader(index=index, vault=vault, policy=policy)
    memory_store = InMemoryMemoryStore()
    memory = MemoryService(
        store=memory_store,
        embedder=embedder,
        encoder=encoder,
        identity=identity_of(embedder, encoder),
        index=index,
        notes=reader,
        policy=policy,
        clock=clock,
    )
    context = ContextService(search=search, memory=memory, policy=policy)
    return FakeHandles(index, search, policy, reader, memory, context, memory_store, vault)
