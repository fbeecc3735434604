"""A note's properties as the person wrote them, for the keyword side: "finished 2024-03-17", "author Oliver
Burkeman", "attendees Fiona Grace", "practitioner Ailsa". People file much of what a note is about in its
properties (who a meeting was with, who wrote a book and when they finished it, where a trip went), and a
question names it in words ("books I finished in 2024", "meetings with Fiona").

Left out: what the note's names and tags already say (`title`, `aliases`, `tags`), when the file was made
or edited (`created:`, `modified:`, `updated:`...: templates put them on every note, and they say nothing of
what it speaks of), its `date:` (its period, read apart), addresses (where a clipping came from:
note_origin) and the properties that only lay a note out (`cssclasses`, `publish`...)."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

_NOT_SAID = frozenset(
    {"title", "aliases", "alias", "tags", "tag", "date", "lang", "language"}
    | {"cssclasses", "cssclass", "publish", "permalink", "uid", "id", "template", "banner", "cover", "icon"}
)
_STAMP = re.compile(r"creat|modif|updat|edit|review|access|sync|last|mtime", re.I)
_ADDRESS = re.compile(r"^\s*(?:https?://|www\.)\S*\s*$", re.I)
_LINK = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
MAX_PROPERTY_CHARS = 300  # a long description is prose the note's body says better


def property_texts(
    metadata: Mapping[str, Any], keep: Callable[[str, str], bool] = lambda name, said: True
) -> tuple[str, ...]:
    """Each property worth a keyword as "name value" (a list's items joined, a link by its note's name);
    `keep`: which (name as written, value) pairs are (the index leaves secrets out: index_texts.py)."""
    texts = []
    for key, value in metadata.items():
        name = str(key)
        if name.casefold() in _NOT_SAID or _STAMP.search(name):
            continue
        said = _value_text(value)
        if said and keep(name, said):
            texts.append(f"{name.replace('_', ' ').replace('-', ' ')} {said}"[:MAX_PROPERTY_CHARS])
    return tuple(texts)


def _value_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return " ".join(text for text in map(_value_text, value) if text)
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()[:10]
    if value is None or isinstance(value, bool | dict):  # a flag or a nested map says no words of its own
        return ""
    text = str(value)
    if _ADDRESS.match(text):
        return ""
    return _LINK.sub(lambda m: m.group(2) or m.group(1), text).strip()
