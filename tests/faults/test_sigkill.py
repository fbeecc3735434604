"""The service killed with SIGKILL in the middle of indexing: the restart finishes the job, and the index
is then exactly the one a fresh indexing of the same vault builds (same chunk points, note records and
links: no duplicate, no ghost, nothing missing); and the vectors made before the kill are not made again.

The service runs as users run it (`python -m backend serve`, its own process) with a look-alike Ollama that
holds embedding requests at a gate once indexing is under way, so the kill lands mid-job every time.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.infrastructure.embedders.cache import COMMIT_EVERY
from backend.infrastructure.index_catalog import EdgeIndexCatalog
from scripts.measure.service import ServiceProcess
from tests.fake_ollama import FakeOllama
from tests.vault_files import write

WORDS = 150  # one chunk per paragraph


def write_vault(root: Path, notes: int, paragraphs: int) -> None:
    for n in range(notes):
        body = "\n\n".join(" ".join(f"w{n}x{p}x{i}" for i in range(WORDS)) for p in range(paragraphs))
        links = f"See [[note {(n + 1) % notes:02}]] and [[missing {n}]]."
        write(root, f"Notes/note {n:02}.md", f"# Note {n}\n\n{links}\n\n{body}\n")


def contents(data: Path) -> dict[str, set[tuple]]:
    """What an index holds, read from its files with the service stopped."""
    catalog = EdgeIndexCatalog(data / "qdrant")
    active = catalog.active()
    assert active is not None
    store, graph = catalog.open(active)
    try:
        points = store.inventory()
        assert store.count() == len(points)
        return {
            "points": {(e.id, e.note_path, e.chunk_index, e.content_hash, e.has_dense) for e in points},
            "notes": {(r.path, r.content_hash, r.size, r.dense_ready) for r in graph.all_notes()},
            "links": {(x.source, x.position, x.target, x.resolved_path) for x in graph.all_links()},
        }
    finally:
        store.close()
        graph.close()


def write_large(root: Path, paragraphs: int) -> None:
    body = "\n\n".join(" ".join(f"big{p}x{i}" for i in range(WORDS)) for p in range(paragraphs))
    write(root, "Notes/large.md", f"# Large\n\n{body}\n")


def killed_while_held(ollama: FakeOllama, vault: Path, data: Path, env: dict[str, str]) -> dict:
    """Start the service, SIGKILL it once an embedding request waits at the look-alike's gate (the dimension
    probe and two requests of 64 chunks are answered before), and return /index/status as it was then.
    One text a chunk (no dense windows), so the requests fall where the tests' counts say."""
    service = ServiceProcess(vault, data, env=env)
    try:
        assert ollama.holding.wait(timeout=120), service.log()
        status = service.get("/index/status").json()
        service.kill()
    finally:
        service.stop()
    assert service.process.returncode == -9
    return status


@pytest.mark.parametrize(
    ("notes", "paragraphs", "large"),
    [
        # written by keyword first, embedded after: the kill falls in the embedding pass; it embeds up to
        # DENSE_WINDOW (1024) chunks a call, so with these 200 chunks while that call is half answered,
        # before any note of it is written
        pytest.param(40, 5, 0, id="killed while embedding"),
        # a large note (more texts than DENSE_WINDOW) is embedded last, in pieces: the kill falls in one
        pytest.param(20, 1, 1100, id="killed while embedding a large note"),
    ],
)
def test_a_restart_after_sigkill_finishes_the_job_with_no_duplicate_or_ghost_chunk(
    tmp_path: Path, notes: int, paragraphs: int, large: int
) -> None:
    vault = tmp_path / "vault"
    write_vault(vault, notes, paragraphs)
    if large:
        write_large(vault, large)
    data = tmp_path / "data"
    with FakeOllama(hold_after=3) as ollama:
        env = ollama.env() | {"WATCH": "false", "DENSE_WINDOW_WORDS": "0"}
        status = killed_while_held(ollama, vault, data, env)
        job = status["job"]
        assert job["phase"] == "embedding", job  # every note was written by keyword first
        assert status["indexed_notes"] == notes + bool(large)
        assert 0 <= job["done"] < job["total"], job

        ollama.release()
        with ServiceProcess(vault, data, env=env) as restarted:
            status = restarted.wait_idle(timeout=300)
            assert status["job"]["phase"] == "done", status["job"]
            assert (status["indexed_notes"], status["dense_pending"]) == (notes + bool(large), 0)
            assert restarted.get("/index/verify").json()["consistent"] is True

        fresh = tmp_path / "fresh"
        with ServiceProcess(vault, fresh, env=env) as reference:
            assert reference.wait_idle(timeout=300)["job"]["phase"] == "done"

    after_restart, reference_index = contents(data), contents(fresh)
    # the links line (the title line) shares the first chunk
    assert len(reference_index["points"]) == notes * paragraphs + large
    for kind in ("points", "notes", "links"):
        assert after_restart[kind] == reference_index[kind], kind


def test_a_restart_after_sigkill_mid_embedding_makes_only_the_vectors_not_made_before(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    notes, paragraphs = 40, 5  # 200 chunks: one call of the dense pass
    write_vault(vault, notes, paragraphs)
    data = tmp_path / "data"
    # COMMIT_EVERY (128) texts are answered in two requests and committed before the service is killed
    with FakeOllama(hold_after=3) as ollama:
        env = ollama.env() | {"WATCH": "false", "DENSE_WINDOW_WORDS": "0"}
        status = killed_while_held(ollama, vault, data, env)
        assert status["dense_pending"] == notes  # no note written dense yet: the call was half answered
        asked_before_restart = ollama.texts
        ollama.release()
        with ServiceProcess(vault, data, env=env) as restarted:
            status = restarted.wait_idle(timeout=300)
            assert (status["indexed_notes"], status["dense_pending"]) == (notes, 0)
        # the 128 vectors made before the kill came from the embedding cache: only the rest was embedded
        assert ollama.texts - asked_before_restart == notes * paragraphs - COMMIT_EVERY
