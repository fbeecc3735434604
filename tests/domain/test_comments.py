from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from backend.domain.notes.comments import find_comments


@pytest.mark.parametrize(
    ("text", "hidden_texts", "hidden_lines"),
    [
        pytest.param("no comments here", [], set(), id="none"),
        pytest.param("a %%b%% c", ["%%b%%"], set(), id="inline"),
        pytest.param("%%b%%\n  %% c %%  ", ["%%b%%", "%% c %%"], {0, 1}, id="whole-lines"),
        pytest.param("x\n%%\ny\n\nz\n%%\nw", ["%%\ny\n\nz\n%%"], {1, 2, 3, 4, 5}, id="block-with-blank-line"),
        pytest.param("a %% b\nc %% d", ["%% b\nc %%"], set(), id="prose-on-both-ends"),
        pytest.param("a\n%% open\nrest", ["%% open\nrest"], {1, 2}, id="unclosed-runs-to-the-end"),
        pytest.param("`%%` a `` %% `` b", [], set(), id="code-spans"),
        pytest.param("`%% a %%", ["%% a %%"], set(), id="unmatched-backtick-is-text"),
        pytest.param("```\n%%\n```\n%%x%%", ["%%x%%"], {3}, id="fenced-code"),
        pytest.param(
            '%%\n```json\n{"t": "%%"}\n```\n%%',
            ['%%\n```json\n{"t": "%%"}\n```\n%%'],
            {0, 1, 2, 3, 4},
            id="fence-inside",
        ),
        pytest.param("%% `x %% y", ["%% `x %%"], set(), id="backtick-inside-a-comment-is-raw"),
    ],
)
def test_comments(text: str, hidden_texts: list[str], hidden_lines: set[int]) -> None:
    comments = find_comments(text)

    assert [text[start:end] for start, end in comments.spans] == hidden_texts
    assert comments.hidden_lines == hidden_lines


def _hidden_by_definition(text: str, spans: tuple[tuple[int, int], ...]) -> set[int]:
    """A line is hidden when a comment touches it and every non-space character of it is commented."""
    covered = {position for start, end in spans for position in range(start, end)}
    hidden, start = set(), 0
    for index, line in enumerate(text.split("\n")):
        columns = range(start, start + len(line))
        touched = any(a <= start + len(line) and b > start for a, b in spans)
        if touched and all(p in covered or text[p].isspace() for p in columns):
            hidden.add(index)
        start += len(line) + 1
    return hidden


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(["%%", "a", " ", "\n", "`", "```", "b c", "\n\n"]), max_size=40))
def test_hidden_lines_follow_their_definition(pieces: list[str]) -> None:
    text = "".join(pieces)
    comments = find_comments(text)

    assert comments.hidden_lines == _hidden_by_definition(text, comments.spans)


def test_a_long_commented_line_is_hidden() -> None:
    # Excalidraw drawings keep their JSON on lines of tens of kilobytes inside one comment.
    text = "prose\n%%\n" + '{"x": 1}, ' * 20_000 + "\n%%\nafter"

    assert find_comments(text).hidden_lines == {1, 2, 3}
