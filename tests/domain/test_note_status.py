"""A note says another replaced it by its status, a `superseded_by:` property or a tag; a note that only
writes about something replaced ("SHA-1, largely replaced by SHA-256") says nothing of itself."""

from __future__ import annotations

from typing import Any

import pytest

from backend.domain.notes.note_status import says_replaced


@pytest.mark.parametrize(
    ("metadata", "tags"),
    [
        ({"status": "superseded"}, ()),
        ({"status": "Replaced (see the new plan)"}, ()),
        ({"Status": ["draft", "obsolete"]}, ()),
        ({"superseded_by": "[[Narrowboat electrics]]"}, ()),
        ({}, ("boat", "status/outdated")),
        ({}, ("deprecated",)),
    ],
)
def test_what_says_a_note_was_replaced(metadata: dict[str, Any], tags: tuple[str, ...]) -> None:
    assert says_replaced(metadata, tags)


@pytest.mark.parametrize(
    ("metadata", "tags"),
    [
        ({}, ()),
        ({"status": "done (mostly)"}, ("boat", "draft")),
        ({"status": "in progress"}, ()),
        ({"superseded_by": ""}, ()),
        ({"summary": "SHA-1, largely replaced by SHA-256"}, ()),
        ({}, ("replacement-parts",)),
    ],
)
def test_what_does_not(metadata: dict[str, Any], tags: tuple[str, ...]) -> None:
    assert not says_replaced(metadata, tags)
