"""What languages a vault is written in, told from an even sample of its notes at start-up: the languages
every query is also stemmed in, and which in-process embedding model suits the vault (bootstrap)."""

from __future__ import annotations

import logging

from backend.application.ports import NoteParser, Vault
from backend.domain.index.index_texts import declared_language
from backend.domain.notes.not_text import readable
from backend.domain.text.language_mix import LanguageMix
from backend.domain.text.text_analysis import TextAnalyzer

log = logging.getLogger(__name__)

SAMPLE_NOTES = 200  # enough to tell a vault's main languages apart; a few hundred ms at start-up
SAMPLE_CHARS = 20_000  # of each note: its frontmatter and the start of its text


def survey_languages(
    vault: Vault, parser: NoteParser, analyzer: TextAnalyzer, *, limit: int = SAMPLE_NOTES
) -> LanguageMix:
    """The languages of up to `limit` notes spread evenly over the vault (by path): each note's own
    (frontmatter `lang`/`language`), else detected from its text; notes too short to tell are `unknown`."""
    try:
        files, _ = vault.scan()
    except OSError as exc:
        log.warning("could not survey the vault's languages: %s", exc)
        return LanguageMix()
    step = max(1, len(files) // limit)
    languages: list[str | None] = []
    for file in files[::step][:limit]:
        try:
            text, _ = vault.read_text(file.rel_path)
        except OSError:
            continue
        note = parser(file.rel_path, text[:SAMPLE_CHARS])
        languages.append(declared_language(note) or analyzer.detected(readable(note.body)))
    return LanguageMix.of(languages)
