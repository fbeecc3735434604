from __future__ import annotations

import pytest

from backend.domain.errors import InvalidRequestError
from backend.domain.notes.line_ranges import line_window, split_lines

TEXT = "one\ntwo\nthree\nfour\n"


@pytest.mark.parametrize(
    ("start", "end", "text", "first", "last"),
    [
        (None, None, "one\ntwo\nthree\nfour", 1, 4),
        (2, 3, "two\nthree", 2, 3),
        (3, None, "three\nfour", 3, 4),
        (None, 2, "one\ntwo", 1, 2),
        (4, 4, "four", 4, 4),
        (3, 99, "three\nfour", 3, 4),  # past the end: cut to the end
    ],
)
def test_windows(start: int | None, end: int | None, text: str, first: int, last: int) -> None:
    window = line_window(TEXT, start, end)
    assert (window.text, window.start_line, window.end_line, window.total_lines) == (text, first, last, 4)


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [(5, None, "past the end"), (3, 2, "before start_line"), (0, 2, "count from 1"), (1, 0, "count from 1")],
)
def test_impossible_windows(start: int, end: int | None, message: str) -> None:
    with pytest.raises(InvalidRequestError, match=message):
        line_window(TEXT, start, end)


def test_crlf_and_missing_final_newline_count_the_same() -> None:
    assert split_lines("a\r\nb\r\n") == split_lines("a\nb") == ["a", "b"]
    assert split_lines("a\n\n") == ["a", ""]


def test_an_empty_note_has_no_lines() -> None:
    window = line_window("")
    assert (window.text, window.start_line, window.end_line, window.total_lines) == ("", 0, 0, 0)
    with pytest.raises(InvalidRequestError, match="empty"):
        line_window("", 2)


def test_a_bare_carriage_return_ends_a_line_as_the_indexer_counts_it() -> None:
    # an old Mac file, a carriage return pasted into a line, a conversion that doubled them
    assert split_lines("a\rb\r") == ["a", "b"]
    assert split_lines("pasted\rline\nnext") == ["pasted", "line", "next"]
    assert split_lines("a\r\r\nb") == ["a", "", "b"]
