"""A live index over HTTP: the real watcher on a temp vault, restarts, and rebuilds under search load.

Every wait polls the API until the change is visible, bounded by the debounce plus a margin: no fixed sleeps.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from watchdog.observers.api import BaseObserver

from backend.bootstrap import Services, build_services
from backend.config import load_settings
from backend.entrypoints.app import create_app
from backend.infrastructure.embedders.cache import CachedEmbedder
from backend.infrastructure.vault.scanner import IN_VAULT_SYMLINK
from tests.api.conftest import wait_for_job
from tests.application.fakes import FakeEmbedder, GatedEmbedder
from tests.vault_files import write, write_notes

DEBOUNCE = 0.2
MARGIN = 15.0  # generous for a loaded 2-core CI machine; a pass normally takes well under a second

NOTES = {
    "Projects/Database migration.md": (
        "# Database migration\n\n## Decision\n\nWe move from MySQL to PostgreSQL in March.\n\n"
        "## Risks\n\nDowntime during the cutover.\n"
    ),
    "Finance/Sreenivas.md": "# Sreenivas\n\nI owe Sreenivas 1200 rupees for the concert tickets.\n",
    "Shopping list.md": "# Shopping list\n\n- oat milk\n- basmati rice\n- lemons\n",
    "Long plan.md": "".join(
        f"## Part {n}\n\n" + " ".join(f"theme{n} item{n}x{i}" for i in range(150)) + "\n\n" for n in range(3)
    ),
}


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return write_notes(tmp_path / "vault", NOTES)


class LiveApp:
    """A service on `vault` with an embedder the test can count, started the way `serve` starts it."""

    def __init__(
        self, vault: Path, data: Path, embedder: FakeEmbedder | CachedEmbedder, **settings: object
    ) -> None:
        values: dict[str, object] = {
            "vault_path": vault,
            "data_dir": data,
            "debounce_seconds": DEBOUNCE,
            "watch": True,
        }
        self.settings = load_settings(**(values | settings))
        self.services: Services = build_services(self.settings, embedder=embedder)
        self.services.supervisor.open()
        self.services.start_watcher()
        self.client = TestClient(
            create_app(self.settings, services=self.services), raise_server_exceptions=False
        )
        self.client.__enter__()
        wait_for_job(self.client)

    def close(self) -> None:
        self.client.__exit__(None, None, None)

    def top(self, query: str, mode: str = "keyword") -> str | None:
        response = self.client.post("/search", json={"query": query, "top_k": 1, "mode": mode})
        assert response.status_code == 200, response.text
        results = response.json()["results"]
        return results[0]["note_path"] if results else None

    def wait_until(
        self, condition: Callable[[], bool], what: str, timeout: float = DEBOUNCE + MARGIN
    ) -> float:
        """Seconds until `condition` held, polling the API."""
        started = time.monotonic()
        while not condition():
            if time.monotonic() - started > timeout:
                raise AssertionError(f"not within {timeout:.1f}s: {what}")
            time.sleep(0.02)
        return time.monotonic() - started

    def status(self) -> dict:
        return self.client.get("/index/status").json()


@pytest.fixture
def fake() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def app(vault: Path, tmp_path: Path, fake: FakeEmbedder) -> Iterator[LiveApp]:
    live = LiveApp(vault, tmp_path / "data", fake)
    yield live
    live.close()


def test_the_watcher_follows_create_edit_rename_folder_move_and_delete(
    app: LiveApp, vault: Path, fake: FakeEmbedder
) -> None:
    write(vault, "Inbox/Idea.md", "# Idea\n\nA trip to zanzibar in spring.\n")
    app.wait_until(lambda: app.top("zanzibar") == "Inbox/Idea.md", "a created note is searchable")

    write(vault, "Inbox/Idea.md", "# Idea\n\nA trip to kilimanjaro in spring.\n")
    app.wait_until(lambda: app.top("kilimanjaro") == "Inbox/Idea.md", "an edit is searchable")
    assert app.top("zanzibar") is None  # and the old text is gone

    calls = fake.calls
    os.rename(vault / "Inbox/Idea.md", vault / "Inbox/Trip.md")
    app.wait_until(
        lambda: app.top("kilimanjaro") == "Inbox/Trip.md", "a renamed note is found at its new path"
    )
    assert fake.calls == calls  # a rename costs no embedding

    os.rename(vault / "Inbox", vault / "Archive")
    app.wait_until(lambda: app.top("kilimanjaro") == "Archive/Trip.md", "a moved folder's notes move")
    assert fake.calls == calls

    (vault / "Archive/Trip.md").unlink()
    app.wait_until(lambda: app.top("kilimanjaro") is None, "a deleted note is gone")

    status = app.status()
    assert status["watcher_running"] is True
    assert (status["watcher_restarts"], status["watcher_error"]) == (0, None)
    assert status["indexed_notes"] == len(NOTES)
    assert status["unindexed_files"] == 0
    assert status["embedder"] == {
        "provider": "onnx",
        "model": "fake-bow",
        "state": "ready",
        "healthy": True,
        "error": None,
        "texts_sent": None,  # the fake counts nothing: no embedding cache in front of it
        "cache_hits": None,
        "query_instruction": None,  # an in-process model: its instructions are its own
        "document_instruction": None,
        "chosen_by": None,  # an embedder handed in (a test's fake), not chosen by the service
        "reason": None,
        "proposal": None,
    }
    assert status["last_sync"] is not None


def test_an_atomic_save_is_picked_up(app: LiveApp, vault: Path) -> None:
    temp = vault / "Finance/.Sreenivas.md.tmp"
    temp.write_text("# Sreenivas\n\nPaid back 1200 rupees; we are square now, wallaby.\n", encoding="utf-8")
    os.replace(temp, vault / "Finance/Sreenivas.md")
    app.wait_until(lambda: app.top("wallaby") == "Finance/Sreenivas.md", "an atomically saved note")


def test_a_burst_of_200_saves_is_indexed_once_or_twice(app: LiveApp, vault: Path, fake: FakeEmbedder) -> None:
    calls = fake.calls
    for n in range(200):
        write(vault, "Shopping list.md", f"# Shopping list\n\n- oat milk\n- version{n}\n")
    app.wait_until(lambda: app.top("version199") == "Shopping list.md", "the last save")
    app.wait_until(lambda: app.status()["pending_changes"] == 0, "the watcher is idle")
    assert 1 <= fake.calls - calls <= 2


def test_hidden_folders_and_other_files_are_ignored(app: LiveApp, vault: Path) -> None:
    write(vault, ".obsidian/workspace.md", "# Workspace\n\nplatypus\n")
    write(vault, ".trash/Old.md", "# Old\n\nplatypus\n")
    write(vault, "Attachments/diagram.txt", "platypus\n")
    write(vault, "Marker.md", "# Marker\n\nquokka\n")  # written last: once it is in, the others were seen
    app.wait_until(lambda: app.top("quokka") == "Marker.md", "the marker note")
    assert app.top("platypus") is None
    assert app.status()["indexed_notes"] == len(NOTES) + 1


def _failed_files(app: LiveApp) -> dict[str, str]:
    return {failed["path"]: failed["reason"] for failed in app.status()["failed_files"]}


def test_a_symlinked_folder_made_while_serving_is_reported_as_a_full_sync_reports_it(
    app: LiveApp, vault: Path, tmp_path: Path
) -> None:
    elsewhere = write_notes(tmp_path / "elsewhere", {"Secret.md": "# Secret\n\nkangaroo\n"})
    os.symlink(elsewhere, vault / "Linked")  # `ln -s /elsewhere Vault/Linked`
    os.symlink(vault / "Finance", vault / "Alias")  # a second path to a folder the index holds
    expected = {"Linked": "symlink points outside the vault", "Alias": IN_VAULT_SYMLINK}
    app.wait_until(lambda: _failed_files(app) == expected, "the symlinks listed in failed_files")
    assert app.top("kangaroo") is None  # never read
    assert app.top("Sreenivas") == "Finance/Sreenivas.md"  # once, under its real path
    assert app.client.post("/index/sync").status_code == 202
    wait_for_job(app.client)
    assert _failed_files(app) == expected  # what the full sync says too

    os.unlink(vault / "Linked")
    os.rename(vault / "Alias", vault / "Alias2")
    app.wait_until(
        lambda: _failed_files(app) == {"Alias2": IN_VAULT_SYMLINK}, "the moved link, the other gone"
    )
    os.unlink(vault / "Alias2")
    app.wait_until(lambda: _failed_files(app) == {}, "a removed symlink leaves failed_files")


def test_sync_on_demand_picks_up_what_no_watcher_saw(vault: Path, tmp_path: Path) -> None:
    live = LiveApp(vault, tmp_path / "data", FakeEmbedder(), watch=False)
    try:
        assert live.status()["watcher_running"] is False
        write(vault, "Recipes/Dal.md", "# Dal\n\nRed lentils and turmeric.\n")
        (vault / "Shopping list.md").unlink()
        assert live.status()["indexed_notes"] == len(NOTES)  # nobody is watching
        response = live.client.post("/index/sync")
        assert response.status_code == 202
        status = wait_for_job(live.client)
        assert status["job"]["kind"] == "sync"
        assert status["job"]["phase"] == "done"
        assert live.top("turmeric") == "Recipes/Dal.md"
        assert live.top("basmati") is None
        assert status["indexed_notes"] == len(NOTES)
    finally:
        live.close()


def index_contents(client: TestClient, services: Services) -> list[tuple[str, int, str]]:
    points, offset = [], None
    while True:
        page, offset = services.index.store.scroll(limit=256, offset=offset)
        points.extend(page)
        if offset is None:
            break
    return sorted((p.payload["note_path"], p.payload["chunk_index"], p.payload["content"]) for p in points)


def test_a_restart_catches_up_with_edits_made_while_it_was_down(vault: Path, tmp_path: Path) -> None:
    cache = tmp_path / "data" / "embedding_cache.sqlite3"
    first = FakeEmbedder()
    live = LiveApp(vault, tmp_path / "data", CachedEmbedder(first, cache), watch=False)
    live.close()

    # while the service is down: edit one section, add, delete and rename notes
    text = (vault / "Long plan.md").read_text(encoding="utf-8")
    write(vault, "Long plan.md", text.replace("theme1 item1x0", "theme1 rewritten", 1))
    write(vault, "Recipes/Dal.md", "# Dal\n\nRed lentils and turmeric.\n")
    (vault / "Shopping list.md").unlink()
    os.rename(vault / "Finance/Sreenivas.md", vault / "Finance/Ledger.md")

    second = FakeEmbedder()
    live = LiveApp(vault, tmp_path / "data", CachedEmbedder(second, cache), watch=False)
    try:
        assert live.status()["job"]["kind"] == "sync"
        # embedded again: the edited section's chunk, the one window of it holding the edit (its other windows
        # come from the cache) and the new note's chunk; nothing for the rename
        assert second.texts_embedded == 3
        embedder = live.status()["embedder"]  # what the restart cost the model, as /index/status says it
        assert embedder["texts_sent"] == 3
        assert embedder["cache_hits"] > 0
        restarted = index_contents(live.client, live.services)
    finally:
        live.close()

    fresh = LiveApp(vault, tmp_path / "fresh", FakeEmbedder(), watch=False)
    try:
        assert restarted == index_contents(fresh.client, fresh.services)  # the index equals the disk
    finally:
        fresh.close()


def test_searches_keep_answering_while_a_rebuild_runs(vault: Path, tmp_path: Path) -> None:
    gated = GatedEmbedder()
    gated.gate.set()
    live = LiveApp(vault, tmp_path / "data", gated, watch=False)
    try:
        generation = live.status()["generation"]
        gated.gate.clear()
        gated.entered.clear()
        assert live.client.post("/index/rebuild").status_code == 202
        answers: list[tuple[int, int]] = []

        def search_once() -> None:
            response = live.client.post("/search", json={"query": "PostgreSQL cutover", "top_k": 3})
            answers.append((response.status_code, len(response.json().get("results", []))))

        assert gated.entered.wait(30)  # the rebuild is filling its new generation now
        for _ in range(20):
            search_once()
        opener = threading.Timer(0.0, gated.gate.set)
        opener.start()
        while live.status()["job"]["finished_at"] is None:
            search_once()
        search_once()
        opener.join()
        assert all(code == 200 and count > 0 for code, count in answers), answers
        status = live.status()
        assert status["job"]["phase"] == "done"
        assert status["generation"] != generation
        assert status["indexed_notes"] == len(NOTES)
    finally:
        gated.gate.set()
        live.close()


def test_a_dead_watcher_is_restarted_reported_and_misses_nothing(app: LiveApp, vault: Path) -> None:
    assert app.services.supervisor.watcher is not None
    # the watchdog observer following this vault is a thread of its own: stopped under the service, as a crash
    # would stop it
    [observer] = [
        t
        for t in threading.enumerate()
        if isinstance(t, BaseObserver)
        and any(Path(e.watch.path).resolve() == vault.resolve() for e in t.emitters)
    ]
    observer.stop()
    write(vault, "While down.md", "# While down\n\nwombat sighting\n")  # nobody may be watching now
    app.wait_until(lambda: app.top("wombat") == "While down.md", "a note saved while the watcher was dead")
    status = app.status()
    assert status["watcher_restarts"] == 1
    assert status["watcher_error"]
    assert status["watcher_running"] is True


def test_verify_of_a_vault_whose_folder_went_away_says_so(app: LiveApp, vault: Path) -> None:
    shutil.rmtree(vault)

    answer = app.client.get("/index/verify")

    assert answer.status_code == 503, answer.text
    body = answer.json()
    assert body["error_code"] == "VAULT_UNAVAILABLE"
    assert body["recoverable"] is True
    assert "folder" in body["suggestion"]


def _link_targets(app: LiveApp, path: str) -> tuple[set[str], set[str]]:
    """The targets of a note's links to attachments, and of its unresolved links (none before the note is
    indexed)."""
    answer = app.client.get(f"/note/{path}/links")
    if answer.status_code == 404:
        return set(), set()
    links = answer.json()
    return {a["target"] for a in links["attachments"]}, {u["target"] for u in links["unresolved"]}


def test_a_pasted_image_and_a_dropped_pdf_are_linked_as_they_come_and_go(app: LiveApp, vault: Path) -> None:
    write(vault, "Trips/Lisbon.md", "# Lisbon\n\nThe tram stop. ![[tram.png]] Tickets in [[tickets.pdf]].\n")
    app.wait_until(
        lambda: _link_targets(app, "Trips/Lisbon.md")[1] == {"tram.png", "tickets.pdf"}, "unresolved"
    )
    # Obsidian's paste: the image, then the note that embeds it, within one debounce
    write(vault, "attachments/tickets.pdf", "%PDF-1.4")
    app.wait_until(lambda: _link_targets(app, "Trips/Lisbon.md") == ({"tickets.pdf"}, {"tram.png"}), "a PDF")
    write(vault, "attachments/tram.png", "png")
    write(vault, "Trips/Porto.md", "# Porto\n\n![[tram.png]]\n")
    app.wait_until(lambda: _link_targets(app, "Trips/Porto.md") == ({"tram.png"}, set()), "a pasted image")
    assert _link_targets(app, "Trips/Lisbon.md") == ({"tickets.pdf", "tram.png"}, set())
    (vault / "attachments/tram.png").unlink()
    app.wait_until(lambda: _link_targets(app, "Trips/Porto.md") == (set(), {"tram.png"}), "an image deleted")
    assert app.client.get("/index/verify").json()["consistent"] is True


def test_a_sync_links_attachments_no_watcher_saw(vault: Path, tmp_path: Path) -> None:
    write(vault, "Trips/Lisbon.md", "# Lisbon\n\n![[tram.png]]\n")
    live = LiveApp(vault, tmp_path / "data", FakeEmbedder(), watch=False)
    try:
        assert _link_targets(live, "Trips/Lisbon.md") == (set(), {"tram.png"})
        write(vault, "tram.png", "png")
        assert live.client.post("/index/sync").status_code == 202
        wait_for_job(live.client)
        assert _link_targets(live, "Trips/Lisbon.md") == ({"tram.png"}, set())
    finally:
        live.close()
