"""The Markdown parser on notes given as text: frontmatter, title, aliases, tags, dates, metadata, headings,
comments and block ids (links: test_markdown_links.py)."""

from __future__ import annotations

import json
import sys

import pytest

from backend.domain.models import Heading
from backend.infrastructure.markdown.frontmatter import FRONTMATTER_MAX_BYTES
from backend.infrastructure.markdown.parser import parse_note


def kinds(problems: tuple[str, ...]) -> list[str]:
    return [p.split(":", 1)[0] for p in problems]


# --- frontmatter --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "body", "body_start_line", "problem_kinds"),
    [
        pytest.param("Just text\n", "Just text\n", 1, [], id="none"),
        pytest.param("---\na: 1\n---\nBody\n", "Body\n", 4, [], id="closed-by-dashes"),
        pytest.param("---\na: 1\n...\nBody\n", "Body\n", 4, [], id="closed-by-dots"),
        pytest.param("---\n---\nBody", "Body", 3, [], id="empty"),
        pytest.param("---  \na: 1\n---  \nBody", "Body", 4, [], id="trailing-spaces"),
        pytest.param("---\r\na: 1\r\n---\r\nBody\r\nmore", "Body\nmore", 4, [], id="crlf"),
        pytest.param("\ufeff---\na: 1\n---\nBody", "Body", 4, [], id="bom"),
        pytest.param("---\na: 1\n---", "", 4, [], id="frontmatter-only"),
        pytest.param(
            "---\na: 1\nBody\n", "---\na: 1\nBody\n", 1, ["frontmatter_unclosed"], id="unclosed-read-as-body"
        ),
        pytest.param(
            "---\ntitle: [unclosed\n---\nBody", "Body", 4, ["frontmatter_invalid_yaml"], id="invalid-yaml"
        ),
        pytest.param(
            "---\na: 1\n  b: 2\n---\nBody", "Body", 5, ["frontmatter_invalid_yaml"], id="bad-indent"
        ),
        pytest.param("---\n- a\n- b\n---\nBody", "Body", 5, ["frontmatter_not_mapping"], id="list"),
        pytest.param("---\njust words\n---\nBody", "Body", 4, ["frontmatter_not_mapping"], id="scalar"),
        pytest.param(
            "---\n!!python/object:os.system x\n---\nB", "B", 4, ["frontmatter_invalid_yaml"], id="unsafe"
        ),
        pytest.param("Intro\n---\na: 1\n---\n", "Intro\n---\na: 1\n---\n", 1, [], id="not-on-first-line"),
    ],
)
def test_frontmatter_is_split_from_the_body(
    text: str, body: str, body_start_line: int, problem_kinds: list[str]
) -> None:
    note = parse_note("folder/Note.md", text)

    assert note.body == body
    assert note.body_start_line == body_start_line
    assert kinds(note.problems) == problem_kinds


def test_a_note_with_invalid_frontmatter_is_still_indexed_from_its_body() -> None:
    note = parse_note("Ideas.md", "---\ntitle: [oops\ntags: x\n---\n# Heading\nText #inline\n")

    assert note.title == "Ideas"
    assert note.tags == ("inline",)
    assert note.headings == (Heading(1, "Heading", 5),)


def test_billion_laughs_alias_bomb_is_contained() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(8):
        name, prev = chr(98 + level), chr(97 + level)
        lines.append(f"{name}: &{name} [{','.join([f'*{prev}'] * 9)}]")
    lines += ["tags: *i", "aliases: *i", "title: *i", "keep: yes"]
    text = "---\n" + "\n".join(lines) + "\n---\nBody #real\n"

    note = parse_note("Bomb.md", text)

    assert kinds(note.problems) == ["frontmatter_too_complex"]
    assert note.title == "Bomb"
    assert note.tags == ("real",)
    assert note.metadata == {}
    json.dumps(note.metadata)


@pytest.mark.parametrize(
    "frontmatter",
    [
        pytest.param("a: &a [*a]", id="self-referencing-list"),
        pytest.param("a: &a {k: *a}", id="self-referencing-map"),
    ],
)
def test_recursive_yaml_is_contained(frontmatter: str) -> None:
    note = parse_note("Loop.md", f"---\n{frontmatter}\n---\nBody")

    assert kinds(note.problems) == ["frontmatter_too_complex"]
    assert note.body == "Body"


def test_deeply_nested_yaml_is_a_problem_not_a_crash() -> None:
    # past the recursion limit (PyYAML takes about two frames a level), not far past it: the cost of the
    # failing parse grows faster than the depth (1000 levels: ~3 s, 600: ~0.5 s)
    depth = sys.getrecursionlimit() * 3 // 5
    note = parse_note("Deep.md", f"---\na: {'[' * depth}{']' * depth}\n---\nBody")

    assert kinds(note.problems) == ["frontmatter_invalid_yaml"]
    assert note.body == "Body"


def test_a_tab_after_a_value_keeps_the_frontmatter() -> None:
    # Typed by hand in a real vault (real-dev's "Ethernet" note): the pure-Python YAML scanner refused the
    # trailing tab and the note lost its title, date and tags; libyaml, as YAML allows, reads past it.
    note = parse_note(
        "Ethernet.md", "---\ntitle: Ethernet\t\ndate: 2020-10-12 13:51:12\t\ntags:\n- 'networking'\n---\nBody"
    )

    assert note.problems == ()
    assert (note.title, note.date, note.tags) == ("Ethernet", "2020-10-12", ("networking",))


def test_frontmatter_with_more_brackets_than_libyaml_is_trusted_with_is_read_the_same() -> None:
    # Many flow collections go to the pure-Python loader (the C one could overflow its stack): same values.
    lists = "\n".join(f"k{i}: [{i}, [{i}]]" for i in range(12))
    note = parse_note("Brackets.md", f"---\na: {'[' * 18}x{']' * 18}\ntags: [one, two]\n{lists}\n---\nBody")

    assert note.problems == ()
    assert note.tags == ("one", "two")
    assert note.metadata["k11"] == [11, [11]]


def test_frontmatter_over_the_size_limit_is_ignored() -> None:
    big = "x" * (FRONTMATTER_MAX_BYTES + 1)
    note = parse_note("Big.md", f"---\ntitle: Big title\nblob: {big}\n---\nBody")

    assert kinds(note.problems) == ["frontmatter_too_large"]
    assert note.title == "Big"
    assert note.body == "Body"
    assert note.body_start_line == 5


# --- title, aliases, tags ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel_path", "frontmatter", "title"),
    [
        pytest.param("a/My Note.md", "", "My Note", id="stem"),
        pytest.param("a/Upper.MD", "", "Upper", id="stem-upper-suffix"),
        pytest.param("a/x.md", "title: '  Real title '", "Real title", id="frontmatter"),
        pytest.param("a/x.md", "title: ''", "x", id="empty-string"),
        pytest.param("a/x.md", "title: 1984", "x", id="not-a-string"),
        pytest.param("a/x.md", "title:", "x", id="null"),
    ],
)
def test_title_is_frontmatter_title_else_file_name(rel_path: str, frontmatter: str, title: str) -> None:
    assert parse_note(rel_path, f"---\n{frontmatter}\n---\n# First heading\n").title == title


@pytest.mark.parametrize(
    ("frontmatter", "aliases"),
    [
        pytest.param("aliases: [One, ' Two ']", ("One", "Two"), id="list"),
        pytest.param("aliases:\n  - One\n  - 2\n  - ''\n  - [x]", ("One",), id="strings-only"),
        pytest.param("aliases: Solo", ("Solo",), id="string"),
        pytest.param("alias: Solo", ("Solo",), id="singular-key"),
        pytest.param("aliases: [Dup, dup]", ("Dup",), id="deduped"),
        pytest.param("aliases:", (), id="null"),
        pytest.param("aliases: {a: 1}", (), id="mapping-ignored"),
    ],
)
def test_aliases(frontmatter: str, aliases: tuple[str, ...]) -> None:
    assert parse_note("n.md", f"---\n{frontmatter}\n---\n").aliases == aliases


@pytest.mark.parametrize(
    ("frontmatter", "tags"),
    [
        pytest.param("tags: [python, '#ml', area/sub]", ("python", "ml", "area/sub"), id="list"),
        pytest.param("tags:\n  - a\n  - '#B'\n  - b\n  - 2024", ("a", "B"), id="yaml-list-dedupe-numbers"),
        pytest.param("tags: python, ml", ("python", "ml"), id="comma-string"),
        pytest.param("tags: '#python #ml'", ("python", "ml"), id="hash-space-string"),
        pytest.param("tag: solo", ("solo",), id="singular-key"),
        pytest.param("tags: Python, python, PYTHON", ("Python",), id="case-insensitive-dedupe"),
        pytest.param("tags:", (), id="null"),
    ],
)
def test_frontmatter_tags(frontmatter: str, tags: tuple[str, ...]) -> None:
    assert parse_note("n.md", f"---\n{frontmatter}\n---\nno inline tags here\n").tags == tags


@pytest.mark.parametrize(
    ("body", "tags"),
    [
        pytest.param("#start of line", ("start",), id="line-start"),
        pytest.param(
            "text #area/sub and #kebab-case_x.", ("area/sub", "kebab-case_x"), id="nested-and-punct"
        ),
        pytest.param("Use `#code` here", (), id="code-span"),
        pytest.param("```\n#fenced\n```", (), id="fence"),
        pytest.param("    #indented code", (), id="indented-code"),
        pytest.param("see http://x.org/#anchor and <https://y/#z>", (), id="urls"),
        pytest.param("[[Note#Heading]] and [[#Local]] and [l](http://a/#b)", (), id="links"),
        pytest.param("# Heading\n## Another", (), id="heading-markers"),
        pytest.param("## Heading with #tag", ("tag",), id="tag-in-heading"),
        pytest.param("#123 and #2024 but #y2024", ("y2024",), id="pure-numbers"),
        pytest.param(r"\#escaped", (), id="escaped"),
        pytest.param("issue#12 and a#b", (), id="no-leading-space"),
        pytest.param("#Tag then #tag", ("Tag",), id="dedupe-keeps-first-case"),
        pytest.param("- item #list\n> quote #quoted", ("list", "quoted"), id="list-and-quote"),
        pytest.param("<div>#html</div>", (), id="html-block"),
        pytest.param("#café #日本", ("café", "日本"), id="unicode"),
    ],
)
def test_inline_tags(body: str, tags: tuple[str, ...]) -> None:
    assert parse_note("n.md", body).tags == tags


def test_frontmatter_tags_come_before_inline_tags_without_duplicates() -> None:
    note = parse_note("n.md", "---\ntags: [Project]\n---\nAbout #project and #other\n")

    assert note.tags == ("Project", "other")


# --- dates ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel_path", "frontmatter", "date", "problem_kinds"),
    [
        pytest.param("n.md", "date: 2024-01-05", "2024-01-05", [], id="yaml-date"),
        pytest.param("n.md", "date: 2024-01-05T10:30:00Z", "2024-01-05", [], id="yaml-datetime"),
        pytest.param("n.md", "date: 2024-01-05 10:30", "2024-01-05", [], id="datetime-string"),
        pytest.param("n.md", "date: '2024-1-5'", "2024-01-05", [], id="short-string"),
        pytest.param("n.md", "created: 2023-12-31", "2023-12-31", [], id="created"),
        pytest.param("n.md", "date: 2024-01-05\ncreated: 2023-12-31", "2024-01-05", [], id="date-wins"),
        pytest.param("j/2022-03-04 standup.md", "", "2022-03-04", [], id="file-name"),
        pytest.param("2022-03-04/x.md", "", None, [], id="folder-name-ignored"),
        pytest.param("j/2022-03-04.md", "date: 2024-01-05", "2024-01-05", [], id="frontmatter-beats-name"),
        pytest.param("n.md", "date: 2024-02-30", None, ["invalid_date"], id="impossible-day"),
        pytest.param("n.md", "date: '{{date}}'", None, ["invalid_date"], id="template"),
        pytest.param("n.md", "date: 20240105", None, ["invalid_date"], id="number"),
        pytest.param(
            "n.md", "date: soon\ncreated: 2023-12-31", "2023-12-31", ["invalid_date"], id="falls-back"
        ),
        pytest.param("n.md", "date: '1:56 pm on 8 May, 2023'", "2023-05-08", [], id="chat-export-day"),
        pytest.param("n.md", "date: May 8th, 2023", "2023-05-08", [], id="written-out-day"),
        pytest.param("2022-13-45.md", "", None, [], id="invalid-name-date"),
        pytest.param("n.md", "date:", None, [], id="empty"),
    ],
)
def test_date(rel_path: str, frontmatter: str, date: str | None, problem_kinds: list[str]) -> None:
    note = parse_note(rel_path, f"---\n{frontmatter}\n---\nBody")

    assert note.date == date
    assert kinds(note.problems) == problem_kinds


@pytest.mark.parametrize(
    ("rel_path", "date"),
    [
        pytest.param("Journal/2025-W12.md", "2025-03-17", id="week-monday"),
        pytest.param("Journal/2025-03.md", "2025-03-01", id="month-first-day"),
        pytest.param("Meetings/Standup 14 May 2024.md", "2024-05-14", id="written-out-day"),
        pytest.param("Money/Budget 2024.md", None, id="a-year-is-no-day"),
        pytest.param("Journal/2024/reflections.md", None, id="a-folder-year-is-no-day"),
    ],
)
def test_a_date_from_the_file_name(rel_path: str, date: str | None) -> None:
    assert parse_note(rel_path, "Body").date == date


@pytest.mark.parametrize(
    ("rel_path", "frontmatter", "periods"),
    [
        pytest.param("n.md", "date: 2024-01-05", ("2024-01-05",), id="its-day"),
        pytest.param("Journal/2025-W12.md", "", ("2025-03-17/2025-03-23",), id="a-week-note-is-its-week"),
        pytest.param("Journal/2025-03.md", "", ("2025-03-01/2025-03-31",), id="a-month-note-is-its-month"),
        pytest.param("Trips/Font Oct 2024.md", "", ("2024-10-01/2024-10-31",), id="a-month-in-the-name"),
        pytest.param("Journal/2024/reflections.md", "", ("2024-01-01/2024-12-31",), id="its-folder-year"),
        pytest.param("Journal/2024/03/notes.md", "", ("2024-03-01/2024-03-31",), id="its-folder-month"),
        pytest.param("Journal/2024/2025-01-02.md", "", ("2025-01-02",), id="the-name-before-the-folder"),
        pytest.param(
            "Books/Klara.md", "finished: 2024-11-28\nrating: 4", ("2024-11-28",), id="a-day-property"
        ),
        pytest.param(
            "Trips/Font.md",
            "dates: 2024-10-26 to 2024-11-02",
            ("2024-10-26/2024-11-02",),
            id="a-range-property",
        ),
        pytest.param("Bees/Hives.md", "year: 2024", ("2024-01-01/2024-12-31",), id="a-year-property"),
        pytest.param(
            "Journal/2023/n.md",
            "modified: 2025-06-01\nupdated: 2025-06-02\nlast_reviewed: 2025-06-03",
            ("2023-01-01/2023-12-31",),
            id="edit-stamps-are-not-periods",
        ),
        pytest.param("People/Mum.md", "aliases: [mum]", (), id="undated"),
        pytest.param("Projects/Cutover.md", "created: 2024-01-05", (), id="created-says-when-it-was-made"),
        # however a template writes the key (the Linter plugin: "date created")
        pytest.param("Projects/Cutover.md", "Created: 2024-01-05", (), id="Created"),
        pytest.param(
            "Projects/Cutover.md",
            "date created: Wednesday, October 2nd 2024, 4:40:45 pm",
            (),
            id="date-created",
        ),
        pytest.param("Projects/Cutover.md", "created_at: 2024-01-05T10:00:00Z", (), id="created-at"),
        pytest.param("Music/1990s music.md", "", ("1990-01-01/1999-12-31",), id="a-decade"),
        pytest.param("Travel/Flight BA2025.md", "", (), id="a-year-glued-to-a-code"),
        pytest.param("What changed since 1989.md", "", (), id="a-year-a-name-only-mentions"),
        pytest.param(
            "Trip to Lisbon 2019.md", "", ("2019-01-01/2019-12-31",), id="a-year-that-labels-a-name"
        ),
    ],
)
def test_the_periods_a_note_is_of(rel_path: str, frontmatter: str, periods: tuple[str, ...]) -> None:
    assert parse_note(rel_path, f"---\n{frontmatter}\n---\nBody").periods == periods


def test_a_year_a_name_only_mentions_is_a_period_it_does_not_state() -> None:
    """A note says what time it is of by its `date:`, its name's label, properties or folder; a year in the
    middle of its name (a note named by its first words) is only mentioned (search_ranking.time_factor)."""
    project = parse_note("Projects/Cutover.md", "---\ndate: 2024-01-05\n---\nBody")
    assert (project.periods, project.stated_periods) == (("2024-01-05",), ("2024-01-05",))
    named = parse_note("Im Jahr 2010 erlitt der Amazonas-Regenwald.md", "Body")
    assert (named.periods, named.stated_periods) == (("2010-01-01/2010-12-31",), ())
    zettel = parse_note("20201009143049-nic.md", "Body")
    assert (zettel.periods, zettel.date) == (("2020-10-09",), "2020-10-09")


# --- metadata ------------------------------------------------------------------------------------------


def test_metadata_keeps_other_keys_json_safe() -> None:
    frontmatter = (
        "title: T\ntags: [a]\naliases: [b]\ndate: 2024-01-01\ncreated: 2024-01-02\n"
        "status: draft\nrating: 4.5\nnan: .nan\ndue: 2024-05-06\nwhen: 2024-05-06T07:08:09\n"
        "nested: {when: 2024-01-01, list: [1, 2024-02-02]}\nblob: !!binary aGVsbG8=\n"
        "labels: !!set {b, a}\n1: numeric key\n"
    )
    note = parse_note("n.md", f"---\n{frontmatter}---\n")

    assert note.metadata == {
        "status": "draft",
        "rating": 4.5,
        "due": "2024-05-06",
        "when": "2024-05-06T07:08:09",
        "nested": {"when": "2024-01-01", "list": [1, "2024-02-02"]},
        "labels": ["a", "b"],
        "1": "numeric key",
    }
    json.dumps(note.metadata, allow_nan=False)
    assert note.problems == ()


# --- headings ------------------------------------------------------------------------------------------


def test_headings_have_file_line_numbers_and_ignore_code() -> None:
    text = (
        "---\n"  # 1
        "title: T\n"  # 2
        "---\n"  # 3
        "# Top\n"  # 4
        "\n"  # 5
        "```python\n"  # 6
        "# a comment, not a heading\n"  # 7
        "```\n"  # 8
        "Setext title\n"  # 9
        "============\n"  # 10
        "\n"  # 11
        "Second level\n"  # 12
        "---\n"  # 13
        "> ## quoted, not outline\n"  # 14
        "#no-space-is-a-tag\n"  # 15
        "###### Deep ######\n"  # 16
        "    # indented code\n"  # 17
    )
    note = parse_note("n.md", text)

    assert note.headings == (
        Heading(1, "Top", 4),
        Heading(1, "Setext title", 9),
        Heading(2, "Second level", 12),
        Heading(6, "Deep", 16),
    )
    file_lines = text.split("\n")
    for heading in note.headings:
        assert heading.text in file_lines[heading.line - 1]


def test_multiline_setext_heading_text_is_joined() -> None:
    note = parse_note("n.md", "First line\nsecond line\n---\n")

    assert note.headings == (Heading(2, "First line second line", 1),)


# --- comments, block ids -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "tags"),
    [
        pytest.param("%% #secret %% and #shown", ("shown",), id="inline"),
        pytest.param("%%\n#secret\n\n#also-secret\n%%\n#shown", ("shown",), id="block"),
        pytest.param("Use `%%` for comments #shown", ("shown",), id="marker-in-code-span"),
        pytest.param("```\n%%\n```\n#shown", ("shown",), id="marker-in-fence"),
        pytest.param("%% unclosed\n#secret", (), id="unclosed"),
    ],
)
def test_tags_in_comments_do_not_count(body: str, tags: tuple[str, ...]) -> None:
    assert parse_note("n.md", body).tags == tags


def test_headings_inside_a_comment_are_not_in_the_outline() -> None:
    text = '# Text Elements\nhello ^abc\n\n%%\n# Drawing\n```json\n{"a": "%%"}\n```\n%%\n## After\n'

    note = parse_note("x.excalidraw.md", text)

    assert note.headings == (Heading(1, "Text Elements", 1), Heading(2, "After", 10))
    assert note.block_ids == ("abc",)


def test_a_heading_with_an_inline_comment_keeps_its_visible_text() -> None:
    assert parse_note("n.md", "## Plan %%draft%%\n").headings == (Heading(2, "Plan", 1),)


@pytest.mark.parametrize(
    ("body", "block_ids"),
    [
        pytest.param("A paragraph. ^abc-123", ("abc-123",), id="paragraph-end"),
        pytest.param("Line one\nline two ^last", ("last",), id="last-line"),
        pytest.param("> quote\n\n^quote-id\n\nNext", ("quote-id",), id="own-line-after-block"),
        pytest.param("> [!tip] T\n> text\n^callout-id", ("callout-id",), id="lazy-after-callout"),
        pytest.param("- one ^i1\n- two ^i2", ("i1", "i2"), id="list-items"),
        pytest.param("A ^dup\n\nB ^dup", ("dup",), id="deduped"),
        pytest.param("x ^a  ", ("a",), id="trailing-spaces"),
        pytest.param("```\ntext ^code\n```", (), id="fence"),
        pytest.param("    text ^indented", (), id="indented-code"),
        pytest.param("`text ^span`", (), id="code-span"),
        pytest.param("%% text ^hidden %%", (), id="comment"),
        pytest.param("word^glued", (), id="no-space"),
        pytest.param("^mid of line", (), id="not-at-end"),
        pytest.param("bad ^under_score", (), id="invalid-char"),
        pytest.param("# Heading ^h", (), id="heading"),
        pytest.param("x^[inline footnote]", (), id="footnote"),
    ],
)
def test_block_ids(body: str, block_ids: tuple[str, ...]) -> None:
    assert parse_note("n.md", body).block_ids == block_ids
