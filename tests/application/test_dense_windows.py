"""Dense windows end to end on the real embedded store and real files: a question about one message of a
long chat finds that chat by meaning, and an index built the other way is never mixed with it."""

from __future__ import annotations

from pathlib import Path

from backend.domain.models import SearchMode
from tests.application.fakes import FakeEmbedder
from tests.harness import Harness

FILLER = [
    "How was the weekend? We went hiking up the ridge and the weather held.",
    "Nice! I finally repainted the kitchen, a pale green this time.",
    "The kids started school again, so mornings are chaos.",
    "Work is busy too, the quarterly report is due on Friday.",
    "Did you watch the football game? What a finish in extra time.",
    "I am thinking of adopting a dog, maybe a beagle or a collie.",
    "My sister visits next month, she is bringing her new baby.",
    "We should plan a barbecue before the summer is over.",
]
CHAT = "# Chat\n\n" + "\n\n".join([*FILLER[:4], "My violin lessons start on Tuesday.", *FILLER[4:]])
DISTRACTOR = (
    "# Instruments\n\nViolin lessons start with strings, bows, rosin, a tuner, a case and a music stand "
    "from the shop downtown.\n"
)
QUESTION = "when do my violin lessons start"


def write_vault(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "Chat.md").write_text(CHAT, encoding="utf-8")
    (root / "Instruments.md").write_text(DISTRACTOR, encoding="utf-8")
    return root


def dense_top(h: Harness) -> tuple[str, float]:
    hit = h.search.search(QUESTION, top_k=2, mode=SearchMode.DENSE).hits[0]
    return hit.payload["note_path"], hit.score


def test_a_question_about_one_message_finds_its_chat_by_meaning(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")
    whole = Harness(vault, tmp_path / "whole", FakeEmbedder(dimension=256))
    windowed = Harness(vault, tmp_path / "windowed", FakeEmbedder(dimension=256), dense_windows=12)
    try:
        for h in (whole, windowed):
            h.index.open()
            h.indexer.sync()
        # one vector for the whole chat averages the message away: the short note about violins wins
        assert dense_top(whole)[0] == "Instruments.md"
        # one vector per window of messages: the chat scores by the window holding the answer
        path, score = dense_top(windowed)
        assert path == "Chat.md"
        assert score > 0.6
    finally:
        whole.close()
        windowed.close()


def test_an_index_built_without_windows_is_not_mixed_with_them(tmp_path: Path) -> None:
    vault = write_vault(tmp_path / "vault")
    first = Harness(vault, tmp_path / "data", FakeEmbedder(dimension=256))
    first.index.open()
    first.indexer.sync()
    first.close()
    later = Harness(vault, tmp_path / "data", FakeEmbedder(dimension=256), dense_windows=12)
    try:
        assert later.index.open() is False
        assert later.index.model_mismatch  # its one-vector chunks never get windows mixed in ...
        outcome = later.search.search(QUESTION)
        assert (outcome.mode, outcome.warnings) == (SearchMode.HYBRID, [])  # ... and they keep answering
        later.indexer.rebuild()
        assert not later.index.model_mismatch
        assert dense_top(later)[0] == "Chat.md"
    finally:
        later.close()
