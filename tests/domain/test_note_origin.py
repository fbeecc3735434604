"""Whose words a note holds: a clipper's `source:`/`url:` address (one spelling for every copy of a page),
its folder (SAVED_FOLDERS) or its tag; `author:` alone is no clipping; a question about something read or
saved; a page saved twice kept once."""

from __future__ import annotations

from typing import Any

import pytest

from backend.domain.index.payload import folders_of
from backend.domain.notes.note_origin import asks_about_saved, once_per_source, saved_from, source_url


@pytest.mark.parametrize(
    ("metadata", "url"),
    [
        (
            {"source": "https://www.example.com/blog/15-steps/?utm_source=x&id=3#top"},
            "example.com/blog/15-steps?id=3",
        ),
        ({"url": "http://Example.com/a/"}, "example.com/a"),
        ({"Source": ["[[Web]]", "https://example.com/b"]}, "example.com/b"),
        ({"source": "Mum's, adapted"}, None),  # a recipe's source: a person, not a page
        ({"source": "scifact"}, None),
        ({"author": "Oliver Burkeman"}, None),
        ({"homepage": "https://example.com"}, None),
        # a credential in the address is never shown, nor part of it
        ({"source": "https://example.com/doc?access_token=ghp_abc123&id=5"}, "example.com/doc?id=5"),
        ({"url": "https://alice:Hunter2pass@Example.com/private"}, "example.com/private"),
        (
            {"url": "https://s3.example.com/f.pdf?X-Amz-Signature=ab12&apiKey=k9&session_id=7&page=2"},
            "s3.example.com/f.pdf?page=2",
        ),
        # what the page is: two searches with other keywords, two articles by other authors, are two pages
        (
            {"url": "https://example.com/search?keyword=sleep&author=walker"},
            "example.com/search?keyword=sleep&author=walker",
        ),
        ({"url": "https://example.com/list?monkey=1&hotkeys=on"}, "example.com/list?monkey=1&hotkeys=on"),
    ],
)
def test_the_address_a_note_was_saved_from(metadata: dict[str, Any], url: str | None) -> None:
    assert source_url(metadata) == url


def test_a_clippers_folder_or_tag_says_it_too() -> None:
    folders = ["Clippings"]
    assert saved_from(None, folders_of("Clippings/Sleep.md"), (), folders) == "Clippings/"
    assert saved_from(None, folders_of("Inbox/clippings/2025/Sleep.md"), (), folders) == "Inbox/clippings/"
    assert saved_from(None, folders_of("Web/Saved/Sleep.md"), (), ["Web/Saved"]) == "Web/Saved/"
    assert saved_from(None, folders_of("Notes/Sleep.md"), ("clippings",), folders) == "#clippings"
    assert saved_from(None, folders_of("Notes/Sleep.md"), ("sleep",), folders) is None
    assert saved_from("example.com/a", folders_of("Notes/Sleep.md"), (), folders) == "example.com/a"


@pytest.mark.parametrize(
    ("question", "asks"),
    [
        ("that article about sleep I saved", True),
        ("what did I read about launching a startup", True),
        ("the blog post on sourdough", True),
        ("what advice did I give Sam about his startup", False),
        ("how much is the chemistry budget this year", False),
    ],
)
def test_a_question_about_something_read_or_saved(question: str, asks: bool) -> None:
    assert asks_about_saved(question) is asks


def test_a_page_saved_twice_counts_once() -> None:
    hits = [
        ("root.md", "example.com/a"),
        ("own.md", None),
        ("Clippings/a.md", "example.com/a"),
        ("root.md", "example.com/a"),
    ]

    kept = once_per_source(hits, lambda h: h[0], lambda h: h[1])

    assert kept == [("root.md", "example.com/a"), ("own.md", None), ("root.md", "example.com/a")]
