"""Whose words a note holds: the person's own, or what they saved from elsewhere.

A web clipper (Obsidian Web Clipper, MarkDownload, read-later exports) writes the page's address into a
`source:` or `url:` property, files the note in its folder (`Clippings/` by default) or tags it
`#clippings`. Such a note is still found, but the person's own note on the same question answers it: a
question about the advice they gave a friend's startup is not answered by "15 steps to launch your own
startup". A clipping answers when the question asks about something read or saved ("that article about
sleep"), or when nothing of the person's own does. The same page saved twice is one source.

`author:` alone says nothing: people write it on their own notes about books they read.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar
from urllib.parse import urlsplit

SOURCE_KEYS = ("source", "url", "link", "source_url", "clipped_from", "original")
CLIPPING_TAGS = frozenset({"clippings", "clipping", "clipped", "webclip", "web-clip", "web-clipping"})
T = TypeVar("T")
_URL = re.compile(r"https?://[^\s\]\)>\"']+", re.I)
_TRACKING = re.compile(r"^(utm_\w+|fbclid|gclid|ref|ref_src|mc_\w+)=", re.I)
# a query parameter carrying a credential ("access_token=ghp_…", "apiKey=…", "X-Amz-Signature=…"): never
# shown, nor part of the address. By the words of its name, not their letters: `keyword=` and `author=` name
# what the page is, and two pages differing by them are two pages.
_CREDENTIAL_WORDS = frozenset(
    {
        "token", "key", "apikey", "secret", "password", "passwd", "pwd", "passcode", "auth", "authorization",
        "sig", "signature", "session", "sessionid", "sid", "credential", "credentials", "jwt",
    }
)  # fmt: skip
# the words of a parameter's name: "access_token", "X-Amz-Signature", "apiKey" (its capitals too)
_NAME_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# what a question about something read or saved says
_ASKS_SAVED = re.compile(
    r"\b(read|reading|article|articles|saved|clip|clipped|clipping|clippings|bookmark(?:ed|s)?|blog|"
    r"post|posts|paper|papers|website|web\s?page|online|link|links|newsletter)\b",
    re.I,
)


def source_url(metadata: Mapping[str, Any]) -> str | None:
    """The address a note was saved from (its first `source:`/`url:`... property holding one), in one
    spelling for every copy of the page: no scheme, `www.`, fragment, tracking parameters or final slash."""
    for key, value in metadata.items():
        if str(key).casefold() not in SOURCE_KEYS:
            continue
        for item in value if isinstance(value, list) else [value]:
            found = _URL.search(str(item))
            if found is not None:
                return _spelled_once(found.group(0))
    return None


def saved_from(
    url: str | None, folders: Iterable[str], tags: Iterable[str], saved_folders: Collection[str]
) -> str | None:
    """Where a note was saved from: its address, else the clipper's folder it lies in (any of
    `saved_folders`, by name or vault-relative path, case aside), else `#clippings`; None for the person's
    own note. `folders`: every ancestor folder of the note (payload.folders_of)."""
    if url:
        return url
    wanted = _folded_folders(tuple(saved_folders))
    for folder in folders:
        name = folder.rsplit("/", 1)[-1]
        if folder.casefold() in wanted or name.casefold() in wanted:
            return f"{folder}/"
    for tag in tags:
        if tag.casefold().rsplit("/", 1)[-1] in CLIPPING_TAGS:
            return f"#{tag}"
    return None


@lru_cache(maxsize=16)
def _folded_folders(saved_folders: tuple[str, ...]) -> frozenset[str]:
    """The clippers' folders as `saved_from` compares them: folded once, not for every hit of every search."""
    return frozenset(folder.strip("/").casefold() for folder in saved_folders if folder.strip("/"))


def asks_about_saved(question: str) -> bool:
    """Whether a question asks about something read or saved, which a clipping answers as well as any."""
    return _ASKS_SAVED.search(question) is not None


def _spelled_once(url: str) -> str:
    parts = urlsplit(url.rstrip(".,;"))
    host = parts.netloc.rsplit("@", 1)[-1].casefold().removeprefix("www.")  # no "user:password@"
    query = "&".join(
        p for p in parts.query.split("&") if p and not _TRACKING.match(p) and not _is_credential(p)
    )
    path = parts.path.rstrip("/")
    return f"{host}{path}" + (f"?{query}" if query else "")


def once_per_source(
    hits: Sequence[T], note_path: Callable[[T], str], url: Callable[[T], str | None]
) -> list[T]:
    """The hits without those of a note saved from the same address as a better-ranked note's (the page
    clipped twice, into `Clippings/` and the root): one source, counted once. Order unchanged."""
    first: dict[str, str] = {}  # address -> the note that holds it first
    kept = []
    for hit in hits:
        address, path = url(hit), note_path(hit)
        if address and first.setdefault(address, path) != path:
            continue
        kept.append(hit)
    return kept


def _is_credential(parameter: str) -> bool:
    name = parameter.split("=", 1)[0]
    return name.casefold() in _CREDENTIAL_WORDS or any(
        word.casefold() in _CREDENTIAL_WORDS for word in _NAME_WORD.findall(name)
    )
