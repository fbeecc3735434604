"""A service started on a built index reads its chunks into search memory in the background (index_supervisor
`warm_search`), and what it reads is what the store holds: searches answer as from the store. It computes what
showing each chunk costs as it reads them (application/search/warm_up.py): a first search then shows its hits
from that, exactly as a service that computed nothing ahead shows them."""

from __future__ import annotations

import threading
from pathlib import Path

from backend.api.answers import search_answer
from backend.api.schemas import SearchRequest
from backend.api.status_answer import status_answer
from backend.application.search import presenting
from backend.bootstrap import Services, build_services
from backend.config import Settings, load_settings
from backend.entrypoints.cli.commands import run_job
from tests.vault_files import write_notes

NOTES = {
    f"Journal/2026-01-{day:02}.md": f"# Day {day}\n\nWalked to the allotment, day {day}.\n"
    for day in range(1, 21)
}


def _journal(tmp_path: Path) -> Settings:
    """Keyword-only settings for a vault of `NOTES` under `tmp_path`."""
    vault = tmp_path / "vault"
    write_notes(vault, NOTES)
    return load_settings(vault_path=vault, data_dir=tmp_path / "data", embedding_provider="none", watch=False)


def _indexed(settings: Settings) -> Services:
    """The services over the vault, opened and fully indexed (no watcher, no warm-up started)."""
    services = build_services(settings)
    services.supervisor.open(start_indexing=False)
    run_job(services, "index")
    return services


def test_a_restarted_service_reads_its_chunks_into_search_memory(tmp_path: Path) -> None:
    settings = _journal(tmp_path)
    first = _indexed(settings)
    try:
        before = [(h.id, h.score, h.payload) for h in first.search.search("allotment", top_k=30).hits]
    finally:
        first.close()

    again = build_services(settings)
    try:
        again.supervisor.open(start_indexing=False)
        again.supervisor.warm_search().join(timeout=60)
        store = again.index.store
        kept = store.payload_cache  # type: ignore[attr-defined]
        assert len(kept) == store.count() == len(NOTES)
        kept.hits = kept.misses = 0
        after = [(h.id, h.score, h.payload) for h in again.search.search("allotment", top_k=30).hits]
        assert after == before
        assert kept.misses == 0  # every candidate's payload came from memory
        assert kept.hits >= len(NOTES)
    finally:
        again.close()


def test_closing_the_service_ends_its_warm_up_first(tmp_path: Path) -> None:
    settings = _journal(tmp_path)
    services = _indexed(settings)
    warming = services.supervisor.warm_search()
    services.close()  # the store is closed after the warm-up has stopped, never under it
    assert not warming.is_alive()


def test_warming_an_index_not_open_yet_leaves_searches_to_fill_it(tmp_path: Path) -> None:
    settings = _journal(tmp_path)
    services = build_services(settings)
    try:
        services.supervisor.warm_search().join(timeout=60)  # nothing open: nothing read, nothing raised
        services.supervisor.open(start_indexing=False)
        run_job(services, "index")
        assert [h.payload["note_path"] for h in services.search.search("day 7", top_k=1).hits] == [
            "Journal/2026-01-07.md"
        ]
    finally:
        services.close()


SHOWN = {
    "Money/Sree.md": "# Sree\n\nI owe Sree 40 euros for the tickets.\n\npassword: allotment-gate-7731\n",
    "Health/Therapy.md": "# Therapy\n\nThe therapist said the allotment helps with my anxiety.\n",
    "Projects/Allotment.md": "# Allotment\n\nDecided on 2026-01-05 to plant beans at the allotment.\n",
}


def _shown(services: Services) -> list[dict]:
    answer, _, _ = search_answer(services, SearchRequest(query="allotment owe therapist", top_k=10))
    return [r.model_dump() for r in answer.results]


def test_a_restarted_service_shows_its_first_hits_from_what_it_computed_at_start(tmp_path: Path) -> None:
    settings = _journal(tmp_path)
    write_notes(settings.vault_path, SHOWN)
    first = _indexed(settings)
    try:
        presenting._cleaned.cache_clear()  # noqa: SLF001  # a service that computed nothing ahead
        expected = _shown(first)
        assert any("[REDACTED" in r["content"] for r in expected)  # the secret rules ran
        assert {"finance", "health"} <= {c for r in expected for c in r["sensitive_categories"]}
        assert all(r["highlights"] for r in expected)
    finally:
        first.close()

    presenting._cleaned.cache_clear()  # noqa: SLF001
    again = build_services(settings)
    try:
        again.supervisor.open(start_indexing=False)
        again.warm_search().join(timeout=60)
        computed = presenting._cleaned.cache_info().misses  # noqa: SLF001
        assert computed == len(NOTES) + len(SHOWN)  # every stored chunk, once
        assert _shown(again) == expected
        assert presenting._cleaned.cache_info().misses == computed  # no hit computed again
    finally:
        again.close()


class _HeldPage:
    """A page reader that waits until let go: the warm-up is caught while it runs."""

    def __init__(self) -> None:
        self.reading, self.go_on = threading.Event(), threading.Event()
        self.chunks = 0

    def __call__(self, payloads: list[dict], stop: object = None) -> None:
        self.reading.set()
        self.go_on.wait(timeout=60)
        self.chunks += len(payloads)


def test_the_status_says_while_the_warm_up_runs(tmp_path: Path) -> None:
    services = _indexed(_journal(tmp_path))
    try:
        assert status_answer(services).search_warming is False
        held = _HeldPage()
        warming = services.supervisor.warm_search(held)  # type: ignore[arg-type]
        assert held.reading.wait(timeout=60)
        assert status_answer(services).search_warming is True
        held.go_on.set()
        warming.join(timeout=60)
        assert status_answer(services).search_warming is False
        assert held.chunks == len(NOTES)
    finally:
        services.close()


def test_what_the_warm_up_read_in_is_frozen_out_of_later_collections(tmp_path: Path) -> None:
    # a collection walking the 25,714 payloads read in after the heap was settled slowed every search of the
    # Zettelkasten by a quarter, and settling again collected for 350 ms with the service answering: the
    # warm-up freezes each page it read (docs/measurements.md)
    settings = _journal(tmp_path)
    _indexed(settings).close()
    kept_when_frozen: list[int] = []
    again = build_services(
        settings,
        freeze=lambda: kept_when_frozen.append(len(again.index.store.payload_cache)),  # type: ignore[attr-defined]
    )
    try:
        again.supervisor.open(start_indexing=False)
        again.warm_search().join(timeout=60)
        assert kept_when_frozen[-1:] == [len(NOTES)]
    finally:
        again.close()


def test_a_job_that_changed_nothing_freezes_the_heap_and_one_that_wrote_settles_it(tmp_path: Path) -> None:
    # a full collection holds the interpreter (344 ms on the Zettelkasten's heap, with the service answering):
    # only a job that replaced notes leaves garbage worth one
    settings = _journal(tmp_path)
    calls: list[str] = []
    services = build_services(
        settings, settle=lambda: calls.append("settle"), freeze=lambda: calls.append("freeze")
    )
    try:
        services.supervisor.open(start_indexing=False)
        calls.clear()
        run_job(services, "index")  # the first index writes every note
        assert calls == ["settle"]
        calls.clear()
        run_job(services, "sync")  # nothing changed on the disk
        assert calls == ["freeze"]
        calls.clear()
        write_notes(settings.vault_path, {"Journal/2026-02-01.md": "# New day\n\nAt the allotment again.\n"})
        run_job(services, "sync")
        assert calls == ["settle"]
        calls.clear()
        services.indexer.sync()  # a pass outside any job, changing nothing, judges no later job
        run_job(services, "rebuild")  # a whole generation replaced
        assert calls == ["settle"]
    finally:
        services.close()
