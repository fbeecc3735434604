from __future__ import annotations

import pytest

from backend.domain.comments import find_comments


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
