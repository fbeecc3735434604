"""What no one wrote to be read, found in a note's body: pasted blobs, Templater and Dataview code,
placeholder names; and a chunk cut around them keeping the file's lines (on a real index:
tests/application/test_not_text.py)."""

from __future__ import annotations

import base64
import random

import pytest

from backend.domain.notes.chunking import chunk_note
from backend.domain.notes.not_text import find_not_text, is_placeholder_title, readable
from backend.infrastructure.markdown.parser import parse_note

BLOB = base64.b64encode(random.Random(7).randbytes(3000)).decode()


def cut(body: str) -> list[str]:
    return [body[start:end] for start, end in find_not_text(body).spans]


@pytest.mark.parametrize(
    ("body", "gone"),
    [
        pytest.param(
            f"![shot](data:image/png;base64,{BLOB})", f"![shot](data:image/png;base64,{BLOB})", id="md"
        ),
        pytest.param(
            f'<img src="data:image/jpeg;base64,{BLOB}" width="300">',
            f'<img src="data:image/jpeg;base64,{BLOB}" width="300">',
            id="html",
        ),
        pytest.param(
            f"raw data:application/pdf;base64,{BLOB} end", f"data:application/pdf;base64,{BLOB}", id="bare"
        ),
        pytest.param(f"key {BLOB[:400]} end", BLOB[:400], id="base64-run"),
        pytest.param("sum " + "9f86d081884c7d65" * 10 + " end", "9f86d081884c7d65" * 10, id="hex-run"),
    ],
)
def test_an_encoded_blob_is_cut_and_the_words_around_it_stay(body: str, gone: str) -> None:
    assert cut(body) == [gone]


def test_a_pasted_key_wrapped_over_lines_is_cut_line_by_line() -> None:
    lines = [BLOB[i : i + 64] for i in range(0, 640, 64)]
    body = "-----BEGIN PUBLIC KEY-----\n" + "\n".join(lines) + "\n-----END PUBLIC KEY-----"

    found = find_not_text(body)

    assert cut(body) == lines
    assert found.hidden_lines == frozenset(range(1, 11))


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("Antidisestablishmentarianism " * 3, id="words"),
        pytest.param("x" * 300, id="one-letter run"),
        pytest.param("sha512 " + "cf83e1357eefb8bd" * 8, id="a digest, kept to be looked up"),
        pytest.param(
            "AVeryLongCamelCaseNameThatGoesOnAndOnWithoutEndingAnywhereSoonAtAllReallyNotEverNoNoNoNo",
            id="name",
        ),
        pytest.param(
            f"https://storage.example.com/file?sig={BLOB[:300]}", id="signed URL: the link stays whole"
        ),
        pytest.param(
            f"```\n![x](data:image/png;base64,{BLOB[:200]})\n<% tp.file.title %>\n```", id="fenced code"
        ),
        pytest.param("Write `<% tp.date.now() %>` in a template", id="code span"),
        pytest.param("A pure virtual: `= 0`, and a proof step `= (len l2)`", id="code that starts with ="),
    ],
)
def test_text_and_code_that_only_look_like_it_stay(body: str) -> None:
    assert cut(body) == []


def test_templater_commands_are_cut_across_lines() -> None:
    body = "Made <% tp.date.now('YYYY') %> by\n<%*\nconst x = 1;\ntR += x\n%>\nme"

    assert cut(body) == ["<% tp.date.now('YYYY') %>", "<%*\nconst x = 1;\ntR += x\n%>"]
    assert find_not_text(body).hidden_lines == frozenset({1, 2, 3, 4})


@pytest.mark.parametrize("language", ["dataview", "dataviewjs", "tasks", "query", "base"])
def test_query_blocks_are_cut_fences_included(language: str) -> None:
    body = f"Before\n\n```{language}\nTABLE file.ctime FROM #project\n```\n\nAfter"

    assert cut(body) == [f"```{language}\nTABLE file.ctime FROM #project\n```"]
    assert find_not_text(body).hidden_lines == frozenset({2, 3, 4})


def test_inline_dataview_queries_are_cut() -> None:
    body = "Due `= this.due` for `= [[Project]].owner`, `$= dv.current().file.name` and `=x`"

    assert cut(body) == ["`= this.due`", "`= [[Project]].owner`", "`$= dv.current().file.name`"]


@pytest.mark.parametrize(
    "name",
    [
        "Untitled",
        "Untitled 1",
        "untitled 12",
        "20250803152246-Untitled 1",
        "2024-03-01 Untitled",
        "Invalid date",
        "Unbenannt 2",
        "<% tp.file.title %>",
        "   ",
    ],
)
def test_placeholder_names(name: str) -> None:
    assert is_placeholder_title(name)


@pytest.mark.parametrize(
    "name", ["Untitled Goose Game", "Dates that are invalid", "20250803152246-ai", "Meeting"]
)
def test_names_that_name_something(name: str) -> None:
    assert not is_placeholder_title(name)


def test_a_chunk_after_a_cut_blob_reports_the_lines_of_the_file() -> None:
    image = f"![](data:image/png;base64,{BLOB})"
    text = f"---\ntitle: Log\n---\n# Monday\n{image}\n\nMet Anna <% tp.date.now() %> today.\n"
    lines = text.split("\n")

    (chunk,) = chunk_note(parse_note("Log.md", text))

    assert chunk.text == "# Monday\n\nMet Anna  today."
    assert (chunk.start_line, chunk.end_line) == (4, 7)
    assert lines[chunk.end_line - 1].startswith("Met Anna")


def test_a_language_is_detected_from_the_words_not_the_pasted_image() -> None:
    body = f"![](data:image/png;base64,{BLOB})\nHeute haben wir den Garten umgegraben <% tp.file.title %>."

    assert readable(body).split() == ["Heute", "haben", "wir", "den", "Garten", "umgegraben", "."]


def test_a_templater_command_left_as_the_title_gives_way_to_the_file_name() -> None:
    note = parse_note("Trips/Inishmore.md", "---\ntitle: <% tp.file.title %>\n---\nFerry at nine.\n")

    assert note.title == "Inishmore"
