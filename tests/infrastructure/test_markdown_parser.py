from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from backend.domain.links import Link, LinkKind
from backend.domain.models import Heading, ParsedNote
from backend.infrastructure.markdown_parser import FRONTMATTER_MAX_BYTES, parse_note

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"


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


# --- links ---------------------------------------------------------------------------------------------

W, E, M = LinkKind.WIKILINK, LinkKind.EMBED, LinkKind.MARKDOWN


@pytest.mark.parametrize(
    ("body", "links"),
    [
        pytest.param("See [[Note]].", [Link("Note", W, 1)], id="plain"),
        pytest.param("[[Note|shown text]]", [Link("Note", W, 1, text="shown text")], id="text"),
        pytest.param("[[Note#Heading]]", [Link("Note", W, 1, anchor="Heading")], id="heading"),
        pytest.param("[[Note#Heading#Sub]]", [Link("Note", W, 1, anchor="Heading#Sub")], id="sub-heading"),
        pytest.param("[[Note#^block-1]]", [Link("Note", W, 1, anchor="^block-1")], id="block"),
        pytest.param("[[#Heading]]", [Link("", W, 1, anchor="Heading")], id="same-note-heading"),
        pytest.param("[[#^b1|here]]", [Link("", W, 1, text="here", anchor="^b1")], id="same-note-block"),
        pytest.param("[[folder/Note]]", [Link("folder/Note", W, 1)], id="folder"),
        pytest.param("[[Note.md]]", [Link("Note.md", W, 1)], id="with-extension"),
        pytest.param(
            "[[Note#Heading|text]]",
            [Link("Note", W, 1, text="text", anchor="Heading")],
            id="heading-and-text",
        ),
        pytest.param("[[ Note | text ]]", [Link("Note", W, 1, text="text")], id="spaces-trimmed"),
        pytest.param("![[Note]]", [Link("Note", E, 1)], id="embed-note"),
        pytest.param("![[image.png]]", [Link("image.png", E, 1)], id="embed-image"),
        pytest.param("![[image.png|300]]", [Link("image.png", E, 1, text="300")], id="embed-size"),
        pytest.param("![[doc.pdf#page=3]]", [Link("doc.pdf", E, 1, anchor="page=3")], id="embed-pdf-page"),
        pytest.param("[t](Other%20Note.md)", [Link("Other Note.md", M, 1, text="t")], id="md-encoded"),
        pytest.param("[t](<Other Note.md>)", [Link("Other Note.md", M, 1, text="t")], id="md-angle"),
        pytest.param(
            "[t](folder/Note.md#Some%20Heading)",
            [Link("folder/Note.md", M, 1, text="t", anchor="Some Heading")],
            id="md-anchor",
        ),
        pytest.param("[**bold** `c`](N.md)", [Link("N.md", M, 1, text="bold c")], id="md-formatted-text"),
        pytest.param("[t](#Local)", [Link("", M, 1, text="t", anchor="Local")], id="md-same-note"),
        pytest.param("![alt](image.png)", [Link("image.png", E, 1, text="alt")], id="md-image"),
        pytest.param("![](a%20b.png)", [Link("a b.png", E, 1)], id="md-image-no-alt"),
        pytest.param(
            "[![i](a.png)](B.md)",
            [Link("B.md", M, 1, text="i"), Link("a.png", E, 1, text="i")],
            id="img-in-link",
        ),
        pytest.param(
            "[t][r]\n\n[r]: Ref%20Note.md", [Link("Ref Note.md", M, 1, text="t")], id="md-reference"
        ),
        pytest.param("**[[Bold]]** _[[Em]]_", [Link("Bold", W, 1), Link("Em", W, 1)], id="in-emphasis"),
        pytest.param("# About [[Topic]]", [Link("Topic", W, 1)], id="in-heading"),
        pytest.param(
            "| a | b |\n|---|---|\n| [[Note\\|text]] | ![[i.png\\|20]] |",
            [Link("Note", W, 3, text="text"), Link("i.png", E, 3, text="20")],
            id="table-escaped-pipe",
        ),
        pytest.param(
            "| x | y |\n|---|---|\n| 1 | 2 |\n![[plot.webp|300]] and [[After]]",
            [Link("plot.webp", E, 4, text="300"), Link("After", W, 4)],
            id="unescaped-pipe-in-a-row-under-a-table",
        ),
        pytest.param(
            "> [!note] Title\n> Inside [[Callout Link|it]] and ![[pic.png]]",
            [Link("Callout Link", W, 2, text="it"), Link("pic.png", E, 2)],
            id="callout",
        ),
        pytest.param("[[Note\\|text]]", [Link("Note", W, 1, text="text")], id="escaped-pipe-outside-table"),
        pytest.param("\\![[Note]]", [Link("Note", W, 1)], id="escaped-bang-is-a-plain-link"),
    ],
)
def test_link_forms(body: str, links: list[Link]) -> None:
    assert list(parse_note("n.md", body).links) == links


@pytest.mark.parametrize(
    "body",
    [
        pytest.param("`[[Code]]` and `![[img.png]]` and `[t](N.md)`", id="code-span"),
        pytest.param("``a ` [[Code]]``", id="double-backtick-span"),
        pytest.param("```\n[[Fenced]]\n[t](N.md)\n```", id="fence"),
        pytest.param("~~~md\n![[Fenced.png]]\n~~~", id="tilde-fence"),
        pytest.param("Text\n\n    [[Indented]]", id="indented-code"),
        pytest.param("- item\n\n  ```\n  [[In list fence]]\n  ```", id="fence-in-list"),
        pytest.param("x %%[[Inline comment]]%% y", id="inline-comment"),
        pytest.param("%%\n[[Block]]\n\n![[Still hidden.png]]\n%%", id="multi-line-comment"),
        pytest.param("Text %% starts\n\n[[Hidden]]\nends %% after", id="comment-across-paragraphs"),
        pytest.param("%% never closed\n\n[[Hidden]]", id="unclosed-comment"),
        pytest.param("a <!-- [[Html comment]] --> b", id="html-comment-inline"),
        pytest.param("<!--\n[[Html]]\n\n[[comment]]\n-->", id="html-comment-block"),
        pytest.param("<div>[[In html]]</div>", id="html-block"),
        pytest.param(
            "[a](https://x.org/Note.md) [b](http://x) [c](mailto:a@b.c) [d](obsidian://open?vault=v&file=N)"
            " [e](file:///tmp/N.md) [f](//host/N.md) ![g](https://x.org/i.png) <https://auto.link/N.md>",
            id="external",
        ),
        pytest.param("> [!note] Title\n> [!tip]- Folded", id="callout-markers"),
        pytest.param("\\[[Escaped]] is [[]] or [[ ]] or [[|t]] or [ [x] ]", id="not-links"),
        pytest.param("[[Two\nlines]]", id="no-line-breaks"),
        pytest.param("[t]()", id="empty-destination"),
    ],
)
def test_text_that_is_not_a_link(body: str) -> None:
    assert parse_note("n.md", body).links == ()


def test_links_keep_order_and_file_line_numbers() -> None:
    text = (
        "---\n"  # 1
        "tags: [a]\n"  # 2
        "---\n"  # 3
        "# Title with [[H1 link]]\n"  # 4
        "\n"  # 5
        "A paragraph [[First]]\n"  # 6
        "continues [[Second|2]] and\n"  # 7
        "ends [md](Third.md)\n"  # 8
        "\n"  # 9
        "- item ![[Fourth.png]]\n"  # 10
        "  - nested [[Fifth#^b]]\n"  # 11
        "\n"  # 12
        "> quote `[[not]]`\n"  # 13
        "> more [[Sixth]]\n"  # 14
        "lazy [[Seventh]]\n"  # 15
        "\n"  # 16
        "| c | d |\n"  # 17
        "|---|---|\n"  # 18
        "| [[Eighth]] | x |\n"  # 19
        "\n"  # 20
        "%%\n"  # 21
        "[[Hidden]]\n"  # 22
        "%%\n"  # 23
        "Setext [[Ninth]]\n"  # 24
        "===\n"  # 25
        "Code span `a\n"  # 26
        "b` then [[Tenth]]\n"  # 27
    )
    links = parse_note("n.md", text).links

    assert [(link.target, link.line) for link in links] == [
        ("H1 link", 4),
        ("First", 6),
        ("Second", 7),
        ("Third.md", 8),
        ("Fourth.png", 10),
        ("Fifth", 11),
        ("Sixth", 14),
        ("Seventh", 15),
        ("Eighth", 19),
        ("Ninth", 24),
        ("Tenth", 27),
    ]
    lines = text.split("\n")
    assert all(link.target in lines[link.line - 1] for link in links)


def test_a_link_inside_a_tag_position_is_not_a_tag_and_callout_markers_are_not_tags() -> None:
    note = parse_note("n.md", "> [!note] Title\n> text [[Note#Section]] #real\n\nfoo [[x]]#no")

    assert note.tags == ("real",)
    assert [link.target for link in note.links] == ["Note", "x"]


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


# --- the real Obsidian help vault ----------------------------------------------------------------------

HELP = CORPORA / "obsidian-help" / "vault"


def help_note(rel_path: str) -> ParsedNote:
    path = HELP / rel_path
    if not path.is_file():
        pytest.skip(f"corpus not available at {path}")
    return parse_note(rel_path, path.read_text())


def test_help_vault_link_notes() -> None:
    note = help_note("Getting started/Link notes.md")

    assert note.links == (
        Link("Create your first note", W, 12, text="Create a note"),
        Link("lucide-more-horizontal.svg", E, 49, anchor="icon"),
        Link("lucide-more-horizontal.svg", E, 55, anchor="icon"),
        # Written lower-case; the file is "Plugins/Graph view.md". Resolution, not parsing, matches them.
        Link("graph view", W, 61),
    )
    assert (HELP / "Plugins" / "Graph view.md").is_file()


def test_help_vault_callouts_links_are_found_in_callouts_but_not_in_code() -> None:
    note = help_note("Editing and formatting/Callouts.md")

    # Lines 14-19 repeat the callout inside a ```markdown fence: none of those count.
    assert note.links[:7] == (
        Link("", W, 12, anchor="Supported types"),
        Link("Introduction to Obsidian Publish", W, 12, text="Obsidian Publish"),
        Link("Internal links", W, 23, text="Wikilinks"),
        Link("Embed files", W, 23, text="embeds"),
        Link("Engelbart.jpg", E, 24),
        Link("Command palette", W, 26, text="command"),
        Link("Views and editing mode", W, 30, text="Live Preview", anchor="Live Preview"),
    )
    assert Link("Credits", E, 101, anchor="^lucide") in note.links
    assert not [link for link in note.links if "lucide.dev" in link.target or "docs.obsidian" in link.target]
    assert note.tags == ()  # "[!info]" markers and `#000000` in code are no tags


def test_help_vault_internal_links_markdown_links_and_block_ids() -> None:
    note = help_note("Linking notes and files/Internal links.md")

    assert note.block_ids == ("b15695", "callout-internal-links-link-text")
    assert note.links[:3] == (
        Link("Settings", W, 17),
        Link("Settings", W, 17, text="Files and links", anchor="Files and links"),
        Link(
            "Settings",
            W,
            17,
            text="Automatically update internal links",
            anchor="Automatically update internal links",
        ),
    )
    assert Link("Quick switcher", E, 57, anchor="^search-autocomplete-large") in note.links
    assert Link("Embed Files", W, 61) in note.links  # the file is "Embed files.md"
    assert (
        Link("Help and support", W, 86, anchor="Questions and advice#Report bugs and request features")
        in note.links
    )
    assert [link for link in note.links if link.kind == M] == [
        Link("Example.md", M, 168, text="Custom name"),
        Link("Example.md", M, 169, text="Section name", anchor="Details"),
    ]
    # Every example written in code spans (`[[Three laws of motion]]`, `[[Figure 1.png]]`) is skipped.
    assert not [link for link in note.links if link.target in ("Three laws of motion", "Figure 1.png")]


def test_help_vault_refund_policy_block_ids_and_their_embeds() -> None:
    policy = help_note("Licenses and payment/Refund policy.md")
    discount = help_note("Licenses and payment/Education and non-profit discount.md")

    assert policy.block_ids == ("discount-then-refund", "purchase-then-discount-then-refund")
    assert (
        Link("Help and support", W, 40, text="Obsidian support", anchor="Contact Obsidian support")
        in policy.links
    )
    assert [link for link in discount.links if link.kind == E] == [
        Link("Refund policy", E, 48, anchor="^discount-then-refund"),
        Link("Refund policy", E, 50, anchor="^purchase-then-discount-then-refund"),
    ]
