"""A quoted recall block of several vaults (application/recall/entries.py): one path in two vaults is two
notes, both quoted and each named by its vault."""

from __future__ import annotations

from dataclasses import replace

from backend.application.recall.entries import packed_entries
from tests.application.result_views import result_view


def test_the_same_path_in_two_vaults_is_two_notes() -> None:
    work = result_view("Daily/2026-03-28.md", "Standup: the cutover moved to Friday.")
    home = result_view("Daily/2026-03-28.md", "Took Rory to football, then the allotment.")
    home = replace(home, chunk_id="home:Daily/2026-03-28.md")
    entries = packed_entries([work, home], 1500, quoted=True, vault_of={id(work): "work", id(home): "home"})
    assert len(entries.packed.included) == 2
    block = entries.block()
    assert "(vault work)" in block
    assert "(vault home)" in block
