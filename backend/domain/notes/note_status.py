"""A note that says it was replaced: `status: superseded` (or replaced, obsolete, outdated, deprecated), a
`superseded_by:` / `replaced_by:` property, or such a tag. People keep the first draft of a plan beside the
plan that replaced it ("Narrowboat electrics - first draft", status: superseded); asked what the setup
cost, the draft's sums are the wrong answer however well they match."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

_REPLACED = re.compile(r"\b(superseded|replaced|obsolete|outdated|deprecated)\b", re.I)
_STATUS_KEYS = ("status", "state")
_BY_KEYS = ("superseded_by", "superseded-by", "replaced_by", "replaced-by", "supersededby", "replacedby")


def says_replaced(metadata: Mapping[str, Any], tags: Iterable[str]) -> bool:
    """Whether a note's properties or tags say another note replaced it."""
    for key, value in metadata.items():
        name = str(key).casefold()
        if name in _BY_KEYS and value:
            return True
        if name in _STATUS_KEYS and any(_REPLACED.search(str(item)) for item in _items(value)):
            return True
    return any(_REPLACED.fullmatch(tag.rsplit("/", 1)[-1]) for tag in tags)


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else [value]
