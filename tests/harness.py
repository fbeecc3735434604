"""The indexing and search use cases wired on the real embedded store and real files, with a fake embedder:
what the application tests (and a few others) drive. Fixtures `make_harness` (tests/conftest.py) and
`harness` (tests/application/conftest.py) hand it out and close it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from backend.application.indexing.index_supervisor import IndexSupervisor
from backend.application.indexing.indexer import KEYWORD_FIRST_MIN, build_index
from backend.application.indexing.jobs import JobRunner
from backend.application.ports import ChunkStore, Embedder, GraphStore, IndexCatalog, Vault
from backend.application.search.service import SearchService
from backend.application.serving.index_handle import ServingEmbedder
from backend.domain.models import IndexIdentity, SearchMode
from backend.domain.text.sparse import SparseEncoder
from backend.infrastructure.index_catalog import EdgeIndexCatalog
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.application.fakes import FakeEmbedder

NOTES = {
    "Projects/Database migration.md": (
        "---\ntags: [work, project]\ndate: 2026-02-01\n---\n# Database migration\n\n"
        "## Decision\n\nWe move from MySQL to PostgreSQL in March.\n\n"
        "## Risks\n\nDowntime during the cutover.\n"
    ),
    "Finance/Sreenivas.md": (
        "---\ntags: [finance]\n---\n# Sreenivas\n\nI owe Sreenivas 1200 rupees for the concert tickets.\n"
    ),
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n- lemons\n",
}


class SwappableEmbedder:
    """Hands every call to `current`: a test can make the same model slow or failing from now on, while the
    index keeps the embedder (and its health record) it was built with."""

    def __init__(self, current: Embedder) -> None:
        self.current = current

    @property
    def model_name(self) -> str:
        return self.current.model_name

    @property
    def dimension(self) -> int | None:
        return self.current.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return self.current.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.current.embed_query(text)

    def health(self) -> bool:
        return self.current.health()

    def close(self) -> None:
        self.current.close()


class Harness:
    def __init__(
        self,
        vault: Path,
        data: Path,
        embedder: FakeEmbedder | None,
        encoder: SparseEncoder | None = None,
        *,
        vault_reader: Vault | None = None,
        keyword_first_min: int = KEYWORD_FIRST_MIN,
        dense_windows: int = 0,
        catalog: IndexCatalog | None = None,
        serving_embedder: ServingEmbedder | None = None,
    ) -> None:
        self.embedder = embedder
        self._swappable = SwappableEmbedder(embedder) if embedder is not None else None
        encoder = encoder or SparseEncoder()
        self.catalog = catalog or EdgeIndexCatalog(data)
        identity = IndexIdentity(
            embedder.model_name if embedder else "none",
            embedder.dimension if embedder else None,
            encoder.fingerprint,
            dense_windows,
        )
        self.index, self.indexer = build_index(
            catalog=self.catalog,
            embedder=self._swappable,
            vault=vault_reader or FileSystemVault(vault),
            parser=parse_note,
            encoder=encoder,
            identity=identity,
            keyword_first_min=keyword_first_min,
            serving_embedder=serving_embedder,
        )
        self.encoder = encoder
        self.search = SearchService(embedder=embedder, encoder=encoder, index=self.index)

    @property
    def store(self) -> ChunkStore:
        return self.index.store

    @property
    def graph_store(self) -> GraphStore:
        """The real graph store of the serving index, to watch or to damage."""
        with self.index.serving() as live:
            return live.graph_store

    def swap_embedder(self, embedder: FakeEmbedder) -> None:
        """The same model behaving differently from now on (slow, failing): indexing uses it at once."""
        assert self._swappable is not None, "built without an embedder"
        self._swappable.current = embedder

    def supervisor(self, vault: Path, *, auto_reembed: bool) -> IndexSupervisor:
        """The service's supervisor over this index (what starts its jobs on open), not opened yet."""
        return IndexSupervisor(
            index=self.index,
            indexer=self.indexer,
            jobs=JobRunner(),
            catalog=self.catalog,
            embedder=self.embedder,
            vault_path=str(vault),
            auto_reembed=auto_reembed,
        )

    def top_note(self, query: str, mode: SearchMode = SearchMode.HYBRID, **kw: object) -> str | None:
        hits = self.search.search(query, top_k=3, mode=mode, **kw).hits  # type: ignore[arg-type]
        return hits[0].payload["note_path"] if hits else None

    def close(self) -> None:
        self.index.close()
        self.catalog.close()
