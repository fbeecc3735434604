from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from backend.domain.models import Chunk, Heading, ParsedNote
from backend.domain.notes.chunking import MAX_WORD_CHARS, chunk_note, count_words
from backend.domain.notes.comments import find_comments
from backend.domain.notes.line_map import file_line
from backend.domain.notes.not_text import find_not_text, is_placeholder_title
from backend.infrastructure.markdown.parser import parse_note
from tests.domain.corpus_sample import sample_notes

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"


def words(n: int, prefix: str = "w") -> str:
    return " ".join(f"{prefix}{i}" for i in range(n))


def chunks_of(text: str, path: str = "Note.md", **options: int) -> list[Chunk]:
    return chunk_note(parse_note(path, text), **options)


def word_count(text: str) -> int:
    return count_words(text)


def squash_blank_lines(text: str) -> str:
    return re.sub(r"\n\s*\n(?:\s*\n)*", "\n\n", text)


def _without(text: str, spans: tuple[tuple[int, int], ...], body_offset: int) -> list[str]:
    """The file's lines with what is not text cut out of them (its line breaks stay)."""
    for start, end in reversed(spans):
        start, end = start + body_offset, end + body_offset
        text = text[:start] + re.sub(r"[^\n]", "", text[start:end]) + text[end:]
    return text.split("\n")


def assert_chunks_match_file(text: str, chunks: list[Chunk], note: ParsedNote | None = None) -> None:
    """Each chunk's text is in the file between its start and end line, starting on the first and
    ending on the last; only comment-only lines are left out (and blank lines around them merged), and each
    of its lines is on the file's line its line map names (what a quote of some of its lines cites).
    `note`: the file already parsed (the corpus tests parse 13k notes once, not twice)."""
    note = note if note is not None else parse_note("any.md", text)
    not_text = find_not_text(note.body)
    lines = _without(
        text,
        not_text.spans,
        len("".join(f"{line}\n" for line in text.split("\n")[: note.body_start_line - 1])),
    )
    hidden = {
        note.body_start_line + index
        for index in find_comments(note.body).hidden_lines | not_text.hidden_lines
    }
    for chunk in chunks:
        window = lines[chunk.start_line - 1 : chunk.end_line]
        visible = [line for number, line in enumerate(window, chunk.start_line) if number not in hidden]
        if len(visible) == len(window):
            assert chunk.text in "\n".join(window), chunk
        else:
            assert squash_blank_lines(chunk.text) in squash_blank_lines("\n".join(visible)), chunk
        chunk_lines = chunk.text.split("\n")
        assert chunk_lines[0] in window[0], chunk
        assert chunk_lines[-1] in window[-1], chunk
        assert chunk.text == chunk.text.strip("\n")
        for number, line in enumerate(chunk_lines):
            if line.strip():
                assert line in lines[file_line(chunk.start_line, chunk.line_map, number) - 1], (chunk, number)
        assert file_line(chunk.start_line, chunk.line_map, len(chunk_lines) - 1) == chunk.end_line, chunk
        if len(visible) == len(window):
            assert chunk.line_map == (), chunk


NESTED = """\
---
title: Project note
tags: [x]
---
Preamble text.

# Project

Intro to the project.

## Planning

### Risks

Risk one.

Risk two.

## Budget
Money.
# Appendix
Last words.
"""


def test_sections_carry_their_full_heading_path() -> None:
    chunks = chunks_of(NESTED)

    assert [(c.heading_path, c.text) for c in chunks] == [
        ((), "Preamble text."),
        (("Project",), "# Project\n\nIntro to the project."),
        (("Project", "Planning", "Risks"), "### Risks\n\nRisk one.\n\nRisk two."),
        (("Project", "Budget"), "## Budget\nMoney."),
        (("Appendix",), "# Appendix\nLast words."),
    ]
    assert [(c.start_line, c.end_line) for c in chunks] == [(5, 5), (7, 9), (13, 17), (19, 20), (21, 22)]
    assert [c.chunk_index for c in chunks] == [0, 1, 2, 3, 4]
    assert_chunks_match_file(NESTED, chunks)


def test_chunks_never_contain_the_frontmatter() -> None:
    chunks = chunks_of(NESTED)

    assert all("title:" not in c.text and "---" not in c.text for c in chunks)
    assert min(c.start_line for c in chunks) == 5


def test_a_heading_with_no_text_emits_no_chunk_but_stays_in_the_path() -> None:
    chunks = chunks_of("# Empty\n\n\n## Child\nText\n")

    assert [(c.heading_path, c.text) for c in chunks] == [(("Empty", "Child"), "## Child\nText")]


def test_setext_headings_start_sections() -> None:
    text = "Title\n=====\n\nBody one.\n\nSub\n---\nBody two.\n"

    chunks = chunks_of(text)

    assert [(c.heading_path, c.text) for c in chunks] == [
        (("Title",), "Title\n=====\n\nBody one."),
        (("Title", "Sub"), "Sub\n---\nBody two."),
    ]


def test_hash_lines_inside_code_fences_do_not_start_sections() -> None:
    text = "# Real\n\n```bash\n# comment\n\necho hi\n```\n"

    (chunk,) = chunks_of(text)

    assert chunk.heading_path == ("Real",)
    assert chunk.text == text.strip()


@pytest.mark.parametrize(("max_tokens", "overlap_tokens"), [(200, 30), (50, 10), (20, 0), (5, 4), (1, 0)])
def test_cap_is_respected_and_lines_match_the_file(max_tokens: int, overlap_tokens: int) -> None:
    paragraphs = [words(n, f"p{n}_") for n in (3, 40, 7, 260, 1, 90)]
    long_lines = "\n".join(words(12, f"l{i}_") for i in range(30))
    text = (
        "# A\n\n" + "\n\n".join(paragraphs) + "\n\n## B\n" + long_lines + "\n\n```\n" + long_lines + "\n```\n"
    )

    chunks = chunks_of(text, max_tokens=max_tokens, overlap_tokens=overlap_tokens)

    assert all(word_count(c.text) <= max_tokens for c in chunks)
    assert_chunks_match_file(text, chunks)
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))


def test_every_word_of_the_note_is_in_some_chunk() -> None:
    text = "# A\n\n" + "\n\n".join(words(n, f"p{n}_") for n in (3, 40, 7, 260, 1, 90))

    chunks = chunks_of(text, max_tokens=50, overlap_tokens=10)

    assert set(text.split()) == {w for c in chunks for w in c.text.split()}


def test_paragraphs_are_packed_whole() -> None:
    text = "\n\n".join(words(40, f"p{i}_") for i in range(5))

    chunks = chunks_of(text, max_tokens=100, overlap_tokens=0)

    assert [c.text for c in chunks] == [
        words(40, "p0_") + "\n\n" + words(40, "p1_"),
        words(40, "p2_") + "\n\n" + words(40, "p3_"),
        words(40, "p4_"),
    ]
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 3), (5, 7), (9, 9)]


def test_next_chunk_of_a_section_starts_with_the_tail_of_the_previous() -> None:
    text = "# Long\n" + words(500)

    chunks = chunks_of(text, max_tokens=100, overlap_tokens=20)

    assert len(chunks) > 1
    for previous, current in zip(chunks, chunks[1:], strict=False):
        assert current.text.split()[:20] == previous.text.split()[-20:]
    assert all(c.heading_path == ("Long",) for c in chunks)


def test_overlap_does_not_cross_sections() -> None:
    text = f"# One\n{words(30, 'a')}\n# Two\n{words(30, 'b')}\n"

    chunks = chunks_of(text, max_tokens=100, overlap_tokens=20)

    assert [c.text.split()[:2] for c in chunks] == [["#", "One"], ["#", "Two"]]


def test_overlap_starts_on_the_line_it_comes_from() -> None:
    text = "\n".join(words(10, f"l{i}_") for i in range(10))

    first, second = chunks_of(text, max_tokens=60, overlap_tokens=15)[:2]

    # The 100-word paragraph is cut after 4 lines (40 words, leaving room for the overlap).
    assert first.text.endswith("l3_9")
    assert second.text.startswith("l2_5 l2_6")
    assert (first.start_line, first.end_line, second.start_line) == (1, 4, 3)


def test_a_code_fence_that_fits_is_kept_whole() -> None:
    fence = "```python\ndef f():\n\n    return 1\n\n\n# end\n```"
    text = f"{words(70)}\n\n{fence}\n\n{words(10, 'x')}"

    chunks = chunks_of(text, max_tokens=75, overlap_tokens=10)

    assert len(chunks) == 2
    assert fence in chunks[1].text
    assert all(fence in c.text for c in chunks if "```python" in c.text)
    assert_chunks_match_file(text, chunks)


def test_a_table_that_fits_is_kept_whole() -> None:
    table = "| a | b |\n|---|---|\n" + "\n".join(f"| r{i} | v{i} |" for i in range(8))
    text = f"{words(60)}\n\n{table}\n"

    chunks = chunks_of(text, max_tokens=80, overlap_tokens=0)

    assert [c.text for c in chunks] == [words(60), table]


def test_an_oversized_block_is_split_between_lines() -> None:
    lines = [words(8, f"l{i}_") for i in range(10)]
    text = "\n".join(lines)

    chunks = chunks_of(text, max_tokens=20, overlap_tokens=0)

    assert [c.text for c in chunks] == ["\n".join(lines[i : i + 2]) for i in range(0, 10, 2)]


def test_an_unbroken_run_that_is_not_an_encoding_is_still_capped() -> None:
    # not base64 (no digits, one case) nor hex: such runs (encoded blobs) are cut out instead (test_not_text)
    text = "# Data\n" + "x" * (MAX_WORD_CHARS * 50)

    chunks = chunks_of(text, max_tokens=20, overlap_tokens=0)

    assert len(chunks) >= 3
    assert all(word_count(c.text) <= 20 for c in chunks)
    assert "".join(c.text for c in chunks) == text.replace("\n", "")


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="empty"),
        pytest.param("---\ntitle: Only frontmatter\n---\n", id="frontmatter-only"),
        pytest.param("\n\n   \n", id="blank"),
    ],
)
def test_a_note_without_words_has_no_chunk_to_quote(text: str) -> None:
    assert chunk_note(parse_note("folder/Only Title.md", text)) == []


def test_a_note_of_headings_alone_is_one_chunk_holding_its_title() -> None:
    note = parse_note("folder/Only Title.md", "# Heading\n## Another\n")

    assert chunk_note(note) == [Chunk("folder/Only Title.md", 0, note.title, (), 1, 2, title_only=True)]


def test_a_note_of_a_query_alone_is_cited_by_its_lines() -> None:
    # a map of content Dataview keeps: its title is on no line, so the citation reads back the whole note
    text = "---\ntags: [moc]\n---\n# Active projects\n\n```dataview\nLIST FROM #project\n```\n"
    note = parse_note("Projects MOC.md", text)

    assert chunk_note(note) == [Chunk("Projects MOC.md", 0, "Projects MOC", (), 1, 8, title_only=True)]


def test_indented_first_line_keeps_its_indentation() -> None:
    text = "Intro\n\n    indented code\n    more"

    (chunk,) = chunks_of(text)

    assert chunk.text == text


def test_headings_outside_the_body_are_ignored() -> None:
    note = ParsedNote(
        path="n.md",
        title="n",
        body="Line one\n# H\ntext",
        body_start_line=3,
        headings=(Heading(1, "Ghost", 1), Heading(1, "H", 4), Heading(1, "Past end", 99)),
    )

    chunks = chunk_note(note)

    assert [(c.heading_path, c.start_line, c.end_line) for c in chunks] == [((), 3, 3), (("H",), 4, 5)]


@pytest.mark.parametrize(("max_tokens", "overlap_tokens"), [(0, 0), (10, 10), (10, -1)])
def test_invalid_options_are_rejected(max_tokens: int, overlap_tokens: int) -> None:
    with pytest.raises(ValueError, match="tokens"):
        chunks_of("text", max_tokens=max_tokens, overlap_tokens=overlap_tokens)


# --- %%comments%% --------------------------------------------------------------------------------------


def test_a_comment_block_is_cut_out_of_the_chunk_that_spans_it() -> None:
    text = "First para.\n\n%%\nsecret words\n\nmore secret\n%%\n\nLast para.\n"

    (chunk,) = chunks_of(text)

    assert chunk.text == "First para.\n\nLast para."
    assert (chunk.start_line, chunk.end_line) == (1, 9)
    assert file_line(chunk.start_line, chunk.line_map, 2) == 9  # "Last para." quoted alone cites line 9
    assert_chunks_match_file(text, [chunk])


def test_a_line_after_a_query_block_and_a_comment_is_cited_at_its_own_line() -> None:
    # a daily note's template: a Dataview block and a comment above what the person wrote
    text = (
        "---\ndate: 2025-03-02\n---\n# Sunday\n\n```dataview\nLIST FROM #todo\n```\n\n"
        "%%\nFrom the daily template\n%%\n\nSplit the rhubarb by the shed.\nSowed the broad beans.\n"
    )

    (chunk,) = chunks_of(text)

    shown = chunk.text.split("\n")
    assert [line for line in shown if line] == [
        "# Sunday",
        "Split the rhubarb by the shed.",
        "Sowed the broad beans.",
    ]
    assert (chunk.start_line, chunk.end_line) == (4, 15)
    last = len(shown) - 1
    assert [file_line(chunk.start_line, chunk.line_map, n) for n in (0, last - 1, last)] == [4, 14, 15]
    assert_chunks_match_file(text, [chunk])


def test_lines_between_two_hidden_runs_keep_their_own_numbers() -> None:
    text = "one\n%%\nx\n%%\ntwo\n\n\n```query\nfoo\n```\nthree\nfour\n"

    (chunk,) = chunks_of(text)

    shown = chunk.text.split("\n")
    assert shown == ["one", "", "two", "", "three", "four"]
    assert [file_line(chunk.start_line, chunk.line_map, n) for n in (0, 2, 4, 5)] == [1, 5, 11, 12]


def test_comment_lines_separate_blocks_even_without_blank_lines() -> None:
    text = "alpha\n%% hidden %%\nbeta"

    (chunk,) = chunks_of(text)

    assert chunk.text == "alpha\n\nbeta"
    assert (chunk.start_line, chunk.end_line) == (1, 3)


def test_comment_words_do_not_count_against_the_cap() -> None:
    text = f"a b c\n%%\n{words(50, 'hidden')}\n%%\nd e"

    chunks = chunks_of(text, max_tokens=5, overlap_tokens=0)

    assert [c.text for c in chunks] == ["a b c\n\nd e"]


def test_an_excalidraw_drawing_is_not_indexed() -> None:
    drawing = '{"type": "excalidraw", "elements": [{"text": "100%% sure"}], "files": {}}'
    text = (
        "---\nexcalidraw-plugin: parsed\ntags: [excalidraw]\n---\n"  # 1-4
        "# Text Elements\n"  # 5
        "Pipeline stage ^8Se2yKq2\n"  # 6
        "\n"  # 7
        "%%\n"  # 8
        "# Drawing\n"  # 9
        f"```json\n{drawing}\n```\n"  # 10-12
        "%%\n"  # 13
    )

    chunks = chunks_of(text, path="Excalidraw/Drawing.excalidraw.md")

    assert [(c.heading_path, c.text, c.start_line, c.end_line) for c in chunks] == [
        (("Text Elements",), "# Text Elements\nPipeline stage ^8Se2yKq2", 5, 6)
    ]


def test_a_section_holding_only_a_comment_emits_no_chunk() -> None:
    text = "# Draft\n%%\ntodo\n%%\n# Done\nText"

    chunks = chunks_of(text)

    assert [(c.heading_path, c.text) for c in chunks] == [(("Done",), "# Done\nText")]


def test_a_note_that_is_all_comment_has_no_chunk() -> None:
    assert chunk_note(parse_note("Hidden.md", "%%\nnothing to read\n%%\n")) == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param(
            "Visible %%inline note%% text", "Visible %%inline note%% text", id="inline-comment-stays"
        ),
        pytest.param("Use `%%` here.\n\nNext one.", "Use `%%` here.\n\nNext one.", id="marker-in-code-span"),
        pytest.param("```\n%%\n```\n\nNext one.", "```\n%%\n```\n\nNext one.", id="marker-in-fence"),
        # The line that opens the comment has prose, so it stays whole; the lines after it are hidden.
        pytest.param("Text %% opens here\nhidden\n%%", "Text %% opens here", id="comment-after-text"),
    ],
)
def test_text_that_is_not_a_whole_line_comment_is_kept(text: str, expected: str) -> None:
    (chunk,) = chunks_of(text)

    assert chunk.text == expected


@pytest.mark.slow
@pytest.mark.parametrize("vault", ["obsidian-help", "zettelkasten", "scifact"])
def test_every_corpus_note_chunks_within_the_cap_on_its_own_lines(vault: str) -> None:
    """Every real note parses (metadata that serialises), and chunks within the cap on its own lines: one
    pass over each corpus, since parsing is most of the time; over a sample of a large one (the longest and
    shortest notes, a few of every kind, every 40th: tests/domain/corpus_sample.py), ~1,000 of the
    Zettelkasten's 13k notes, which all cost 35 s of CPU."""
    root = CORPORA / vault / "vault"
    if not root.is_dir():
        pytest.skip(f"corpus not available at {root}")
    for path, raw in sample_notes(root):
        text = raw.replace("\r\n", "\n").replace("\r", "\n")
        note = parse_note(path.relative_to(root).as_posix(), text)
        json.dumps(note.metadata)  # what the payload stores: every real note's frontmatter must serialise
        chunks = chunk_note(note)
        if not chunks:  # a note with no words at all (or only headings under a placeholder name)
            not_text = find_not_text(note.body)
            hidden = find_comments(note.body).hidden_lines | not_text.hidden_lines
            shown = [line for i, line in enumerate(_without(note.body, not_text.spans, 0)) if i not in hidden]
            assert not "".join(shown).strip() or is_placeholder_title(note.title), note.path
        assert all(word_count(c.text) <= 200 for c in chunks)
        if chunks and chunks[0].text != path.stem:
            assert_chunks_match_file(text.removeprefix("\ufeff"), chunks, note)


def test_text_without_spaces_is_counted_by_characters_so_long_notes_are_cut() -> None:
    # a Chinese note of 3,000 characters is not one 75-"word" chunk that a model reads only the start of
    sentence = "我们决定在三月把订单数据库从旧服务器迁移到新的集群，先迁移只读副本，再切换主库。"
    text = "# 迁移\n\n" + "\n\n".join([sentence * 3] * 25)
    chunks = chunks_of(text, max_tokens=200, overlap_tokens=30)
    assert len(chunks) > 5
    assert all(len(chunk.text) <= 2 * 200 + 40 for chunk in chunks)
    assert_chunks_match_file(text, chunks)
    assert count_words("数据库迁移计划") == 4  # two characters a word
    assert count_words("ราเมนทงคตสึ") == 3  # Thai: four letters (with their marks) a word
    assert count_words("Plain English text, 2026.") == 4  # unchanged
