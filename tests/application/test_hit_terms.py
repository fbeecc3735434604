"""A hit's confidence counts the question's words its chunk holds, read from the keyword terms the index
stored for it (application/search/hit_confidence.py): the same count as encoding its text again, stop words
too."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from backend.bootstrap import build_encoder
from backend.config import load_settings
from backend.domain.models import SearchMode
from tests.harness import Harness
from tests.vault_files import write_notes

NOTES = {
    # "other" is a stop word (indexed, at a low weight); "others" in a question stems to the same term
    "Team/Offsite.md": "The other teams met at the lake.\n",
    "Team/Helpers.md": "Others helped carry the boats to the lake.\n",
    "Team/Budget.md": "The offsite budget was approved in March.\n",
}


def _indexed(vault: Path, make_harness: Callable[..., Harness]) -> Harness:
    """The vault indexed as the service indexes it: stop words in the index (KEYWORD_STOP_WEIGHT 0.5)."""
    encoder = build_encoder(load_settings(vault_path=vault, data_dir=vault.parent / "data", watch=False))
    assert encoder.analyzer.stop_weight > 0
    harness = make_harness(vault, None, encoder=encoder)
    harness.index.open()
    harness.indexer.sync()
    return harness


def _covered(harness: Harness, query: str) -> dict[str, int]:
    outcome = harness.search.search(query, top_k=10, mode=SearchMode.KEYWORD)
    return {
        str(hit.payload["note_path"]): shown.covered
        for hit, shown in zip(outcome.hits, outcome.evidence, strict=True)
    }


def test_a_stop_word_of_the_note_is_not_a_word_of_the_question(
    tmp_path: Path, make_harness: Callable[..., Harness]
) -> None:
    harness = _indexed(write_notes(tmp_path / "vault", NOTES), make_harness)
    covered = _covered(harness, "others lake")
    assert covered["Team/Helpers.md"] == 2  # both words
    assert covered["Team/Offsite.md"] == 1  # the lake only: its "other" is the stop word
    assert _covered(harness, "offsite budget march")["Team/Budget.md"] == 3


def test_an_edited_note_is_judged_by_its_new_words(
    tmp_path: Path, make_harness: Callable[..., Harness]
) -> None:
    vault = write_notes(tmp_path / "vault", NOTES)
    harness = _indexed(vault, make_harness)
    assert _covered(harness, "budget approved kayaks")["Team/Budget.md"] == 2
    (vault / "Team/Budget.md").write_text("The kayaks budget was approved.\n", encoding="utf-8")
    harness.indexer.sync()
    assert _covered(harness, "budget approved kayaks")["Team/Budget.md"] == 3
