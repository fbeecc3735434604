"""Ollama dropping out in the middle of an index: the real `OllamaEmbedder` (respx plays the Ollama server),
the real `Indexer`, the embedded store and a temp vault. Nothing may be half-written: each note has
dense vectors on all of its chunks or on none, and a later sync embeds exactly the notes left without."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import respx

from backend.application.indexing import dense_pass
from backend.application.indexing.indexer import build_index
from backend.application.indexing.note_writer import EMBED_BATCH
from backend.application.search.service import SearchService
from backend.domain.errors import ModelNotFoundError
from backend.domain.models import IndexIdentity, PointFilter, SearchMode
from backend.domain.text.sparse import SparseEncoder
from backend.infrastructure.embedders.ollama import OllamaEmbedder
from backend.infrastructure.index_catalog import EdgeIndexCatalog
from backend.infrastructure.markdown.parser import parse_note
from backend.infrastructure.vault.file_system import FileSystemVault
from tests.vault_files import write

OLLAMA = "http://ollama.test:11434"
MODEL = "mxbai-embed-large"
DIM = 1024
NOTES = 40  # more than KEYWORD_FIRST_MIN: the pass writes keyword vectors first, then embeds behind


class FlakyOllama:
    """Ollama's `/api/embed` answering `answer_first` requests, then refusing connections until `back()`."""

    def __init__(self, answer_first: int) -> None:
        self.router = respx.MockRouter(base_url=OLLAMA, assert_all_called=False)
        self.router.post("/api/embed").mock(side_effect=self._embed)
        self.router.get("/api/tags").mock(side_effect=self._tags)
        self.answer_first = answer_first
        self.up = True
        self.answered: list[list[str]] = []  # inputs of the requests answered with vectors
        self.refused = 0

    def back(self) -> None:
        self.up = True
        self.answer_first = 10**9

    def _embed(self, request: httpx.Request) -> httpx.Response:
        if not self.up or len(self.answered) >= self.answer_first:
            self.up = False
            self.refused += 1
            raise httpx.ConnectError("connection refused", request=request)
        texts = json.loads(request.content)["input"]
        self.answered.append(texts)
        vectors = [[float((hash(text) >> shift) & 7) + 1.0 for shift in range(DIM)] for text in texts]
        return httpx.Response(200, json={"model": MODEL, "embeddings": vectors})

    def _tags(self, request: httpx.Request) -> httpx.Response:
        if not self.up:
            raise httpx.ConnectError("connection refused", request=request)
        return httpx.Response(200, json={"models": [{"name": f"{MODEL}:latest"}]})


def note_text(n: int) -> str:
    words = [" ".join(f"word{n}x{part}x{i}" for i in range(120)) for part in range(3)]
    sections = "".join(f"## Part {part}\n\n{text}\n\n" for part, text in enumerate(words))
    return f"# Note {n:02d}\n\nUnique marker zeta{n}.\n\n{sections}"


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    for n in range(NOTES):
        write(root, f"Notes/Note {n:02d}.md", note_text(n))
    return root


class Setup:
    def __init__(self, vault: Path, data: Path, ollama: FlakyOllama, keyword_first_min: int) -> None:
        self.embedder = OllamaEmbedder(
            base_url=OLLAMA,
            model=MODEL,
            batch_size=16,  # an indexing batch (~64 chunks) is several requests: it can fail half way
            max_retries=1,
            transport=httpx.MockTransport(ollama.router.handler),
            sleep=lambda _: None,
        )
        encoder = SparseEncoder()
        self.catalog = EdgeIndexCatalog(data)
        self.index, self.indexer = build_index(
            catalog=self.catalog,
            embedder=self.embedder,
            vault=FileSystemVault(vault),
            parser=parse_note,
            encoder=encoder,
            identity=IndexIdentity(MODEL, self.embedder.dimension, encoder.fingerprint),  # known: no request
            keyword_first_min=keyword_first_min,
        )
        self.search = SearchService(embedder=self.embedder, encoder=encoder, index=self.index)

    def dense_state(self) -> dict[str, tuple[int, int, bool]]:
        """Per note: (chunks, chunks with a dense vector, the note record's dense_ready)."""
        store = self.index.store
        with self.index.serving() as live:
            records = {note.path: note for note in live.graph_store.all_notes()}
        state = {}
        for path, record in records.items():
            chunks = store.count(PointFilter(note_paths=(path,)))
            state[path] = (chunks, len(store.note_vectors(path)), record.dense_ready)
        return state

    def close(self) -> None:
        self.index.close()
        self.catalog.close()
        self.embedder.close()


@pytest.fixture
def make_setup(vault: Path, tmp_path: Path) -> Iterator:
    made: list[Setup] = []

    def make(ollama: FlakyOllama, keyword_first_min: int) -> Setup:
        setup = Setup(vault, tmp_path / "data", ollama, keyword_first_min)
        made.append(setup)
        return setup

    yield make
    for setup in made:
        setup.close()


def title_of(text: str) -> str:
    return text.split("\n", 1)[0].split(" > ", 1)[0]  # embedding text: "<title> > <headings>\n\n<chunk>"


@pytest.mark.parametrize(
    "keyword_first_min",
    [32, 1000],
    ids=["keyword-first-then-dense", "dense-with-each-batch"],
)
def test_ollama_dropping_mid_index_leaves_no_note_half_dense_and_a_sync_embeds_exactly_the_rest(
    make_setup, keyword_first_min: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dense_pass, "DENSE_WINDOW", EMBED_BATCH)  # the dense pass in calls of 64 chunks too
    ollama = FlakyOllama(answer_first=6)  # 6 requests of 16 texts: the second batch of notes fails half way
    setup = make_setup(ollama, keyword_first_min)
    assert setup.index.open() is True

    report = setup.indexer.sync()

    # indexing completed by keyword: every note is written and searchable
    assert report.indexed == NOTES
    assert ollama.refused > 0
    hits = setup.search.search("zeta33", top_k=1, mode=SearchMode.KEYWORD).hits
    assert hits[0].payload["note_path"] == "Notes/Note 33.md"
    # no note half-written: all of a note's chunks are dense, or none is
    state = setup.dense_state()
    assert len(state) == NOTES
    for path, (chunks, dense, ready) in state.items():
        assert chunks >= 3, path
        assert dense in (0, chunks), f"{path}: {dense} of {chunks} chunks dense"
        assert ready == (dense == chunks), path
    pending = {path for path, (_, dense, _) in state.items() if dense == 0}
    assert 0 < len(pending) < NOTES  # the drop came after some notes were embedded
    assert setup.index.dense_pending == len(pending)
    outcome = setup.search.search("zeta33 word33x1x5", top_k=3)
    assert outcome.degraded
    assert any("no dense vectors yet" in w for w in outcome.warnings)

    # Ollama is back: a sync embeds exactly the chunks of the pending notes, nothing else
    ollama.back()
    before = len(ollama.answered)
    setup.indexer.sync()
    sent_after = [text for batch in ollama.answered[before:] for text in batch]
    pending_titles = {f"Note {Path(p).stem.split()[-1]}" for p in pending}
    assert {title_of(text) for text in sent_after} == pending_titles
    pending_chunks = sum(state[path][0] for path in pending)
    assert len(sent_after) == pending_chunks
    assert setup.index.dense_pending == 0
    for path, (chunks, dense, ready) in setup.dense_state().items():
        assert (dense, ready) == (chunks, True), path
    healed = setup.search.search("zeta33 word33x1x5", top_k=3)
    assert healed.mode is SearchMode.HYBRID
    assert healed.warnings == []


def test_a_missing_model_mid_index_leaves_a_keyword_index_that_says_how_to_pull_it(make_setup) -> None:
    ollama = FlakyOllama(answer_first=10**9)
    ollama.router.post("/api/embed").mock(
        return_value=httpx.Response(404, json={"error": f'model "{MODEL}" not found, try pulling it first'})
    )
    ollama.router.get("/api/tags").mock(return_value=httpx.Response(200, json={"models": []}))
    setup = make_setup(ollama, 32)
    setup.index.open()

    report = setup.indexer.sync()  # does not raise: the notes are written by keyword

    assert report.indexed == NOTES
    assert setup.index.dense_pending == NOTES
    problem = setup.index.embedder_health.problem  # what /index/status shows
    assert isinstance(problem, ModelNotFoundError)
    assert f"ollama pull {MODEL}" in problem.suggestion
    outcome = setup.search.search("zeta7", top_k=1)
    assert outcome.mode is SearchMode.KEYWORD
    assert outcome.hits[0].payload["note_path"] == "Notes/Note 07.md"
    assert any("MODEL_NOT_FOUND" in w and f"ollama pull {MODEL}" in w for w in outcome.warnings)
