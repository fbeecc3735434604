"""Bodies of GET /note/{path} and GET /notes."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from backend.api import examples


class NoteOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.NOTE]})

    note_path: str = Field(description="Vault-relative path, as search results give it.")
    vault: str = Field("", description="The vault the note is in (its VAULTS name; VAULT_NAME with one).")
    note_title: str
    aliases: list[str]
    tags: list[str]
    date: str | None = Field(None, description="The note's date (frontmatter date/created), ISO day.")
    modified: datetime = Field(description="When the file was last modified, as indexed (UTC).")
    size_bytes: int
    total_lines: int = Field(description="Lines in the whole note (a final newline starts no line).")
    start_line: int = Field(description="First returned line, 1-based (0 for an empty note).")
    end_line: int = Field(description="Last returned line, inclusive (cut to the last line of the note).")
    content: str = Field(description="The lines start_line..end_line of the file, secrets redacted.")
    redactions: int = Field(description="Secrets replaced by [REDACTED:kind] in content.")
    sensitive_categories: list[str] = Field(
        description="Sensitive categories (e.g. health, finance) the returned text touches."
    )
    status: str = Field(description="healthy, or degraded when the file could only be read in part.")
    warnings: list[str]
    obsidian_uri: str = Field(
        description="Opens the note in Obsidian: obsidian://open?vault=<vault>&file=<path>, percent-encoded."
    )


class NoteSummaryOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.NOTE_SUMMARY]})

    note_path: str
    note_title: str
    aliases: list[str]
    tags: list[str]
    date: str | None = None
    modified: datetime
    size_bytes: int
    sensitive_categories: list[str] = Field(description="Categories the note's tags and title touch.")


class NoteListOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.NOTE_LIST]})

    notes: list[NoteSummaryOut]
    total: int = Field(description="Notes matching the filters, all pages together.")
    limit: int
    offset: int
    next_offset: int | None = Field(None, description="Offset of the next page; null on the last page.")
    status: str = Field(description="healthy, or degraded while the first indexing still runs.")
    warnings: list[str] = Field(
        description="The first indexing still running (status degraded), and a folder, tag or date range no "
        "indexed note has, with the closest names the index holds (status stays healthy)."
    )


class StoredChunkOut(BaseModel):
    chunk_id: str
    chunk_index: int = Field(description="Its place in the note, from 0.")
    heading_context: str = Field(description='Headings above the chunk, e.g. "Project > Planning > Risks".')
    start_line: int
    end_line: int
    tags: list[str]
    date: str | None = None
    language: str | None = Field(description="The language its words were stemmed in (ISO 639-1).")
    embedded_text: str = Field(
        description="What the embedding model was given: note title and headings, the tags the note writes "
        "in its text, then the chunk's text (secrets redacted)."
    )


class NoteChunksOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.NOTE_CHUNKS]})

    note_path: str
    note_title: str
    current: bool = Field(
        description="The file on disk is the text these chunks were cut from (false: changed since, or gone; "
        "the index catches up)."
    )
    chunks: list[StoredChunkOut] = Field(description="In the note's order.")


class VaultLinkOut(BaseModel):
    source_path: str = Field(description="The note that holds the link.")
    target: str = Field(description="The link target as written; no such note exists yet.")
    kind: str
    line: int = Field(description="The line of the source note the link is on (1-based).")


class UnresolvedLinksOut(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [examples.UNRESOLVED_LINKS]})

    total: int = Field(description="Links to notes not created yet, in the whole vault.")
    items: list[VaultLinkOut] = Field(description="This page, by source note then as written.")
    next_offset: int | None = Field(None, description="The offset of the next page; null on the last.")
