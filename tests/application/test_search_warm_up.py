"""A service started on a built index reads its chunks into search memory in the background (index_supervisor
`warm_search`), and what it reads is what the store holds: searches answer as from the store."""

from __future__ import annotations

from pathlib import Path

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
