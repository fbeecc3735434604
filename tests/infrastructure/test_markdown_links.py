"""Links as the parser finds them: every Obsidian and Markdown form, what is not a link, and the real Obsidian
help vault's notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from backend.domain.links import Link, LinkKind
from backend.domain.models import ParsedNote
from backend.infrastructure.markdown.parser import parse_note

CORPORA = Path(__file__).resolve().parents[3] / "shared" / "corpora"


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


def test_links_in_properties_count_on_their_frontmatter_lines() -> None:
    text = (
        "---\n"
        'categories: "[[People]]"\n'
        "related:\n"
        '  - "[[Bob|B]]"\n'
        '  - "[[Conf 2024#Day 1]]"\n'
        "met: at [[Cafe]] in May\n"
        "unquoted: [[Not a link]]\n"  # YAML reads a list in a list: Obsidian shows no link either
        "---\n"
        "Body [[People]]\n"
    )

    links = parse_note("Anna.md", text).links

    assert [(link.target, link.line, link.text, link.anchor) for link in links] == [
        ("People", 2, None, None),
        ("Bob", 4, "B", None),
        ("Conf 2024", 5, None, "Day 1"),
        ("Cafe", 6, None, None),
        ("People", 9, None, None),
    ]
    assert {link.kind for link in links} == {LinkKind.WIKILINK}


def test_a_property_that_refers_to_itself_is_read_a_bounded_number_of_times() -> None:
    text = '---\na: &x ["[[Loop]]", *x]\n---\n'

    links = parse_note("Loop.md", text).links

    assert 1 <= len(links) <= 1000
    assert {link.target for link in links} == {"Loop"}
