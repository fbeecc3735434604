"""Windows of a chunk for the dense side: whole blocks, bounded in words, overlapping by half."""

from __future__ import annotations

import pytest

from backend.domain.notes.dense_windows import chunk_windows


def message(i: int, words: int = 10) -> str:
    return f"**Speaker {i}**: " + " ".join(f"w{i}x{j}" for j in range(words - 2))


def test_a_chunk_of_one_block_has_no_windows() -> None:
    # an abstract or a paragraph of prose: its own vector is all it needs, however long
    assert chunk_windows(" ".join(["word"] * 300), 48) == []
    assert chunk_windows("line one\nline two of the same block", 2) == []


def test_a_short_chunk_of_several_blocks_is_one_window_so_none() -> None:
    assert chunk_windows(f"{message(1)}\n\n{message(2)}", 48) == []


def test_messages_are_packed_whole_and_every_message_is_in_a_window() -> None:
    messages = [message(i) for i in range(12)]
    windows = chunk_windows("\n\n".join(messages), 30)
    assert len(windows) > 1
    for window in windows:
        assert len(window.split()) <= 30
        assert all(part in messages for part in window.split("\n\n"))  # never a cut message
    assert {part for window in windows for part in window.split("\n\n")} == set(messages)


def test_windows_overlap_so_a_pair_cut_by_one_boundary_is_whole_in_the_next() -> None:
    messages = [message(i) for i in range(8)]
    windows = chunk_windows("\n\n".join(messages), 30)  # three messages a window
    assert windows[0].split("\n\n") == messages[0:3]
    assert windows[1].split("\n\n") == messages[1:4]  # starts halfway through the previous one


def test_a_block_longer_than_a_window_is_a_window_alone() -> None:
    long_one = message(0, words=80)
    windows = chunk_windows("\n\n".join([long_one, message(1), message(2)]), 30)
    assert windows[0] == long_one
    assert windows[-1].split("\n\n") == [message(1), message(2)]


def test_a_window_needs_at_least_one_word() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        chunk_windows("a\n\nb", 0)
