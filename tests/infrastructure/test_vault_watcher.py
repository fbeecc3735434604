"""The vault watcher on a real temp vault with the real watchdog observer: what reaches the indexer, when.

Absences ("this file is ignored") are checked with a sentinel note written afterwards: events arrive in
order and every path waits the same debounce, so anything wrongly reported would have come out no later
than the sentinel.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from backend.infrastructure.vault.watcher import VaultChanges, VaultWatcher
from tests.vault_files import write

DEBOUNCE = 0.2
WAIT = 10.0  # generous deadline for a slow CI machine; a passing test waits only as long as it must


class Recorder:
    """The `on_changes` callback: keeps every batch and lets a test wait for one."""

    def __init__(self, fail_times: int = 0) -> None:
        self._cond = threading.Condition()
        self.batches: list[VaultChanges] = []
        self.failures: list[VaultChanges] = []
        self._fail_times = fail_times

    def __call__(self, changes: VaultChanges) -> None:
        with self._cond:
            if len(self.failures) < self._fail_times:
                self.failures.append(changes)
                self._cond.notify_all()
                raise RuntimeError("store down")
            self.batches.append(changes)
            self._cond.notify_all()

    def wait_for(self, predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
        with self._cond:
            return self._cond.wait_for(predicate, timeout)

    def wait_for_path(self, path: str, timeout: float = WAIT) -> VaultChanges:
        assert self.wait_for(lambda: any(path in b.paths for b in self.batches), timeout), (
            f"no batch with {path}"
        )
        return self.with_path(path)[0]

    def wait_for_folder(self, folder: str) -> VaultChanges:
        assert self.wait_for(lambda: any(folder in b.folders for b in self.batches)), (
            f"no batch with {folder}"
        )
        return next(b for b in self.snapshot() if folder in b.folders)

    def snapshot(self) -> list[VaultChanges]:
        with self._cond:
            return list(self.batches)

    def with_path(self, path: str) -> list[VaultChanges]:
        return [b for b in self.snapshot() if path in b.paths]

    def all_paths(self) -> set[str]:
        return {p for b in self.snapshot() for p in b.paths}

    def all_folders(self) -> set[str]:
        return {f for b in self.snapshot() for f in b.folders}


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "existing.md")
    write(root, "projects/alpha/plan.md")
    (root / ".obsidian").mkdir()
    (root / ".trash").mkdir()
    return root


WatcherFactory = Callable[..., tuple[VaultWatcher, Recorder]]


@pytest.fixture
def watch(vault: Path) -> Iterator[WatcherFactory]:
    watchers: list[VaultWatcher] = []

    def make(
        root: Path | None = None, fail_times: int = 0, **options: object
    ) -> tuple[VaultWatcher, Recorder]:
        recorder = Recorder(fail_times)
        options.setdefault("debounce_seconds", DEBOUNCE)
        watcher = VaultWatcher(root or vault, recorder, **options)  # type: ignore[arg-type]
        watchers.append(watcher)
        watcher.start()
        assert watcher.running
        return watcher, recorder

    yield make
    for watcher in watchers:
        watcher.stop()


def test_created_edited_and_deleted_notes_are_each_reported(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch()

    write(vault, "new.md", "first")
    recorder.wait_for_path("new.md")
    write(vault, "new.md", "second")
    assert recorder.wait_for(lambda: len(recorder.with_path("new.md")) == 2)
    (vault / "new.md").unlink()
    assert recorder.wait_for(lambda: len(recorder.with_path("new.md")) == 3)

    write(vault, "projects/alpha/plan.md", "edited in a subfolder")
    batch = recorder.wait_for_path("projects/alpha/plan.md")
    assert batch.rescan is False


def test_a_note_made_readable_again_is_reported(vault: Path, watch: WatcherFactory) -> None:
    # unreadable when its edit was read, it is read again once its mode lets it be (nothing else changes)
    locked = write(vault, "locked.md", "edited while locked")
    _, recorder = watch()
    locked.chmod(0)
    locked.chmod(0o644)
    recorder.wait_for_path("locked.md")


def test_an_attachment_appearing_or_going_is_reported_apart_from_notes(
    vault: Path, watch: WatcherFactory
) -> None:
    _, recorder = watch()
    write(vault, "assets/pic.png", "png")
    added = recorder.wait_for(lambda: any("assets/pic.png" in b.attachments for b in recorder.batches))
    assert added
    (vault / "assets/pic.png").unlink()
    assert recorder.wait_for(lambda: sum("assets/pic.png" in b.attachments for b in recorder.batches) == 2)
    assert not any("assets/pic.png" in b.paths for b in recorder.batches)  # no note to read
    # hidden files are no attachments: Obsidian's own settings change all the time
    write(vault, ".obsidian/workspace.json", "{}")
    write(vault, "sentinel.md", "after")
    recorder.wait_for_path("sentinel.md")
    assert not any(a.startswith(".obsidian") for b in recorder.batches for a in b.attachments)


def test_a_renamed_note_reports_both_paths_in_one_batch(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch()

    os.rename(vault / "existing.md", vault / "renamed.md")

    batch = recorder.wait_for_path("renamed.md")
    assert {"existing.md", "renamed.md"} <= batch.paths


@pytest.mark.parametrize("temp_name", [".existing.md.tmp", "existing.md~", "existing.md.swp"])
def test_an_atomic_save_reports_the_note_not_the_temp_file(
    vault: Path, watch: WatcherFactory, temp_name: str
) -> None:
    _, recorder = watch()

    write(vault, temp_name, "saved through a temp file")
    os.replace(vault / temp_name, vault / "existing.md")
    write(vault, "sentinel.md")

    recorder.wait_for_path("existing.md")
    recorder.wait_for_path("sentinel.md")
    assert recorder.all_paths() == {"existing.md", "sentinel.md"}
    assert (vault / "existing.md").read_text(encoding="utf-8") == "saved through a temp file"


def test_folders_created_moved_and_deleted_are_reported_whole(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch()

    (vault / "archive").mkdir()
    recorder.wait_for_folder("archive")
    os.rename(vault / "projects", vault / "archive" / "projects")
    moved = recorder.wait_for_folder("archive/projects")
    assert "projects" in moved.folders
    # the notes inside are covered by their folder: no need to list each of them as well
    assert not any(p.startswith(("projects/", "archive/projects/")) for p in moved.paths)
    shutil.rmtree(vault / "archive")
    assert recorder.wait_for(lambda: sum("archive" in b.folders for b in recorder.batches) == 2)


def test_a_symlink_made_in_the_vault_is_rechecked_as_a_folder(
    vault: Path, watch: WatcherFactory, tmp_path: Path
) -> None:
    # a symlink comes as a file event, even to a folder (`ln -s /elsewhere Vault/linked`): the recheck of it
    # as a folder is what lists it in failed_files, as a full sync does
    _, recorder = watch()
    (tmp_path / "elsewhere").mkdir()

    (vault / "linked").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    recorder.wait_for_folder("linked")
    os.rename(vault / "linked", vault / "moved")
    recorder.wait_for_folder("moved")
    (vault / "moved").unlink()  # gone: rechecked as the attachment its name may be
    assert recorder.wait_for(
        lambda: any("moved" in b.attachments and not b.folders for b in recorder.batches)
    )


def test_hidden_non_markdown_and_trashed_files_are_ignored(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch()

    write(vault, ".obsidian/workspace.json", "{}")
    write(vault, ".obsidian/snippets/theme.md", "css notes")
    write(vault, ".hidden.md")
    write(vault, "projects/.draft.md")
    write(vault, ".git/HEAD.md")
    write(vault, "image.png", "png")
    write(vault, "notes.txt")
    (vault / ".stash").mkdir()
    with (vault / "existing.md").open(encoding="utf-8") as note:  # opened and closed without writing
        note.read()
    os.rename(vault / "projects/alpha/plan.md", vault / ".trash/plan.md")  # Obsidian's delete
    write(vault, "sentinel.md")

    recorder.wait_for_path("sentinel.md")
    assert recorder.all_paths() == {"projects/alpha/plan.md", "sentinel.md"}
    assert recorder.all_folders() == set()


def test_denied_and_not_allowed_folders_are_ignored(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch(deny_dirs=["private"], allow_dirs=["projects"])

    write(vault, "projects/private/secret.md")
    write(vault, "outside.md")
    (vault / "elsewhere").mkdir()
    (vault / "projects/private/more").mkdir()
    write(vault, "projects/alpha/sentinel.md")

    recorder.wait_for_path("projects/alpha/sentinel.md")
    assert recorder.all_paths() == {"projects/alpha/sentinel.md"}
    assert recorder.all_folders() == set()


def test_a_burst_of_writes_to_one_note_makes_one_batch(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch(debounce_seconds=0.3)

    for i in range(200):
        write(vault, "existing.md", f"autosave {i}")
    recorder.wait_for_path("existing.md")
    write(vault, "sentinel.md")
    recorder.wait_for_path("sentinel.md")

    assert 1 <= len(recorder.with_path("existing.md")) <= 2


def test_notes_saved_together_share_one_batch(vault: Path, watch: WatcherFactory) -> None:
    _, recorder = watch(debounce_seconds=0.4)
    names = [f"together-{i}.md" for i in range(5)]

    for name in names:
        write(vault, name)

    batch = recorder.wait_for_path(names[0])
    assert set(names) <= batch.paths
    assert len(recorder.snapshot()) == 1


def test_a_note_written_continuously_is_dispatched_after_the_max_delay(
    vault: Path, watch: WatcherFactory
) -> None:
    debounce, max_delay = 1.0, 2.0
    _, recorder = watch(debounce_seconds=debounce, max_delay_seconds=max_delay)
    started = time.monotonic()
    written_at = [started]

    # an autosave every 50 ms: never quiet for the debounce, yet the note must reach the index
    while not recorder.wait_for(lambda: bool(recorder.batches), timeout=0.05):
        write(vault, "existing.md", f"autosave {len(written_at)}")
        written_at.append(time.monotonic())
        assert written_at[-1] - started < WAIT, "a note written continuously was never dispatched"

    elapsed = time.monotonic() - started
    assert recorder.snapshot()[0].paths == {"existing.md"}
    # the case under test holds only if the writer never paused for a whole debounce window (a loaded CI
    # machine may stall the loop for a few hundred ms, so the window is wide)
    longest_pause = max(b - a for a, b in zip(written_at, written_at[1:], strict=False))
    assert longest_pause < debounce, f"the writer paused {longest_pause:.2f} s: the debounce alone could fire"
    assert max_delay - 0.1 <= elapsed < max_delay + 3.0


def test_a_failing_callback_is_retried_and_reported(vault: Path, watch: WatcherFactory) -> None:
    watcher, recorder = watch(fail_times=2)

    write(vault, "new.md")
    assert recorder.wait_for(lambda: len(recorder.failures) == 1)
    write(vault, "later.md")  # arrives while the store is down: must not be lost either

    recorder.wait_for_path("new.md")
    recorder.wait_for_path("later.md")
    assert all("new.md" in failed.paths for failed in recorder.failures)
    assert watcher.last_error is not None
    assert "store down" in watcher.last_error
    assert wait_until(lambda: watcher.pending_changes == 0)
    assert watcher.running


@pytest.mark.parametrize("victim", ["observer", "inotify reader"])
def test_a_dead_observer_is_restarted_with_a_rescan(vault: Path, watch: WatcherFactory, victim: str) -> None:
    watcher, recorder = watch(supervise_seconds=0.05)
    observer = watcher._observer
    assert observer is not None
    thread = observer if victim == "observer" else getattr(observer, "_inotify_fd", None)
    if thread is None:
        pytest.skip("this platform's observer has no separate inotify reader thread")

    thread.stop()  # it dies under us: nothing would report changes any more

    assert recorder.wait_for(lambda: any(b.rescan for b in recorder.batches))
    assert watcher.restarts == 1
    assert watcher.running
    assert watcher.last_error is not None
    write(vault, "after-restart.md")
    recorder.wait_for_path("after-restart.md")


def test_a_vanished_vault_is_retried_until_it_returns(vault: Path, watch: WatcherFactory) -> None:
    watcher, recorder = watch(supervise_seconds=0.05)

    shutil.rmtree(vault)
    assert wait_until(lambda: not watcher.running and watcher.last_error is not None)
    assert str(vault) in (watcher.last_error or "")
    assert watcher.restarts == 0

    write(vault, "restored.md")
    assert wait_until(lambda: watcher.running)
    assert recorder.wait_for(lambda: any(b.rescan for b in recorder.batches))
    assert watcher.restarts == 1
    write(vault, "after-return.md")
    recorder.wait_for_path("after-return.md")


def test_a_symlinked_vault_reports_paths_relative_to_the_real_folder(
    vault: Path, tmp_path: Path, watch: WatcherFactory
) -> None:
    link = tmp_path / "vault-link"
    link.symlink_to(vault, target_is_directory=True)
    _, recorder = watch(root=link)

    write(vault, "projects/via-link.md")

    assert recorder.wait_for_path("projects/via-link.md").paths == {"projects/via-link.md"}


def test_stop_drops_pending_changes_and_is_idempotent(vault: Path, watch: WatcherFactory) -> None:
    watcher, recorder = watch(debounce_seconds=30.0)

    write(vault, "new.md")
    assert wait_until(lambda: watcher.pending_changes == 1)
    watcher.stop()
    watcher.stop()

    assert watcher.running is False
    assert watcher.pending_changes == 0
    assert recorder.snapshot() == []


def test_stop_before_start_is_harmless(vault: Path) -> None:
    watcher = VaultWatcher(vault, lambda changes: None)

    watcher.stop()

    assert watcher.running is False
    assert watcher.restarts == 0
    assert watcher.last_error is None
