"""Reading notes for an agent: one note (or some of its lines) and listings of the indexed notes.

Only indexed notes can be read, and only through the Vault port, after the path check every entry point
shares (`domain.vault_paths`). The text comes from the disk as it is now; line numbers are file lines, the
ones search results carry, so `start_line`/`end_line` of a hit read back exactly that hit and a wider range
reads around it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from backend.application.ports import Vault
from backend.application.serving.serving_index import ServingIndex
from backend.domain.errors import NoteNotFoundError, SecurityViolationError
from backend.domain.links import NoteRecord
from backend.domain.models import PointFilter
from backend.domain.notes.line_ranges import LineWindow, as_indexed, line_window
from backend.domain.notes.note_listing import NoteListFilter, NoteOrder, NotePage, list_notes
from backend.domain.notes.note_lookup import NoteLookup, lookup_note
from backend.domain.notes.vault_paths import canonical, vault_folder, vault_path
from backend.domain.ranking.filter_check import unmatched_filters
from backend.domain.text.content_policy import ContentPolicy
from backend.domain.text.secrets import MARKER_PREFIX


@dataclass(frozen=True, slots=True)
class NoteView:
    record: NoteRecord
    window: LineWindow  # text already cleaned by the content policy
    redactions: int  # secrets replaced in window.text
    sensitive_categories: list[str]
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class NoteListing:
    page: NotePage
    sensitive: dict[str, list[str]]  # path -> categories, for the notes of the page
    warnings: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # a folder or tag no indexed note has


class NoteReader:
    def __init__(self, *, index: ServingIndex, vault: Vault, policy: ContentPolicy) -> None:
        self._index = index
        self._vault = vault
        self._policy = policy

    def find(self, asked: str) -> NoteRecord:
        """The indexed note `asked` means: its path, the path without `.md`, or (when only one note answers
        to it) its title, alias or file name, in any letter case (rules: `domain.note_lookup`). A 404 names
        the closest paths, or the notes an ambiguous name could mean. The one place note names are resolved:
        every way a client names a note goes through here."""
        asked = vault_path(asked)  # checked, and in NFC: the form the index stores
        found = self.lookup(asked)
        if found.found is not None:
            return found.found
        hint = "" if self.complete else " (the first indexing is still running)"
        if found.ambiguous:
            raise NoteNotFoundError(
                f"{asked!r} could mean {len(found.ambiguous)} notes{hint}",
                suggestion="Use one of these paths: " + ", ".join(found.ambiguous),
            )
        suggestion = NoteNotFoundError.suggestion
        if found.closest:
            suggestion = "Did you mean: " + ", ".join(found.closest) + "?"
        raise NoteNotFoundError(f"no indexed note at {asked!r}{hint}", suggestion=suggestion)

    def lookup(self, asked: str) -> NoteLookup:
        """What `asked` means in this vault, a miss included, without raising for one: what `find` decides
        by, and what a service of several vaults weighs across its vaults (`vault_set.Library.holding`)."""
        asked = vault_path(asked)  # checked, and in NFC: the form the index stores
        record = self._index.note_record(asked)
        if record is not None:
            return NoteLookup(record)  # the common case: a path as search results give it, one point lookup
        return lookup_note(asked, self._index.note_records())

    @property
    def complete(self) -> bool:
        """The first indexing is over: a miss is a miss, not a note still to come."""
        return self._index.complete

    def read(self, path: str, *, start_line: int | None = None, end_line: int | None = None) -> NoteView:
        record = self.find(path)
        path = record.path
        try:
            text, problems = self._vault.read_text(path)
        except PermissionError as exc:  # the adapter's own wall: the file resolves outside the vault
            raise SecurityViolationError(f"path leaves the vault: {path!r}") from exc
        except OSError as exc:
            raise NoteNotFoundError(
                f"the note {path!r} is indexed but no longer on the disk; the index catches up shortly"
            ) from exc
        # line breaks as the index counts them, whatever the file's (search results name its lines)
        text = as_indexed(text)
        # The whole note first: a key block is recognised whole even when the window cuts through it, and
        # redaction keeps every line where it was, so the window still holds the lines asked for.
        window = line_window(self._policy.clean(text).text, start_line, end_line)
        raw = line_window(text, start_line, end_line).text
        redactions = max(0, window.text.count(MARKER_PREFIX) - raw.count(MARKER_PREFIX))
        categories = self._policy.categories_of(window.text, tags=record.tags, headings=_headings_in(raw))
        return NoteView(
            record=record,
            window=window,
            redactions=redactions,
            sensitive_categories=categories,
            warnings=list(problems),
        )

    def list(
        self,
        wanted: NoteListFilter,
        *,
        order: NoteOrder = NoteOrder.PATH,
        limit: int = 50,
        offset: int = 0,
    ) -> NoteListing:
        wanted = NoteListFilter(
            folder=vault_folder(wanted.folder),
            tag=canonical(wanted.tag) if wanted.tag else wanted.tag,
            date_from=wanted.date_from,
            date_to=wanted.date_to,
            modified_since=wanted.modified_since,
        )
        records = self._index.note_records()
        page = list_notes(records, wanted, order=order, limit=limit, offset=offset)
        unmatched = PointFilter(
            folders=(wanted.folder,) if wanted.folder else (),
            tags=(wanted.tag,) if wanted.tag else (),
            date_from=wanted.date_from,
            date_to=wanted.date_to,
        )
        # modified_since is left out: a moment, not a name to mistype
        notices = unmatched_filters(unmatched, records, answered=page.total > 0)
        warnings = []
        if not self._index.complete:
            warnings.append(
                f"the first indexing is still running ({self._index.indexed_notes} notes so far); "
                "the list may be incomplete"
            )
        sensitive = {
            r.path: self._policy.categories_of(r.title, tags=r.tags, headings=()) for r in page.notes
        }
        return NoteListing(page, sensitive, warnings, notices)


def _headings_in(text: str) -> list[str]:
    """ATX heading texts of the window (for section-name rules); good enough without a full parse."""
    found = []
    for line in text.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("#"):
            title = stripped.lstrip("#")
            if title[:1] in (" ", "\t"):
                found.append(title.strip())
    return found
