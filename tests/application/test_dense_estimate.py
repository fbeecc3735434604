"""What a dense pass promises: vectors left count chunks and windows, notes left from an earlier pass at the
mean of those done, and the time left weighs long texts as the model does, so short notes embedded first do
not promise the long prose behind them at their pace."""

from __future__ import annotations

from backend.application.indexing.dense_estimate import DenseEstimate, text_work
from tests.fakes.clock import ManualClock


def test_the_time_left_weighs_long_texts_as_the_model_does() -> None:
    clock = ManualClock()
    estimate = DenseEstimate(clock)
    short, prose = ["a short note"] * 10, ["word " * 240] * 10  # ten texts each: prose costs far more
    estimate.plan("short.md", len(short), text_work(short))
    estimate.plan("book.md", len(prose), text_work(prose))
    estimate.start()
    assert (estimate.vectors_left(), estimate.seconds_left()) == (20, None)  # no pace yet
    clock.now = 10.0
    estimate.done("short.md", len(short), text_work(short))
    assert estimate.vectors_left() == 10
    seconds = estimate.seconds_left()
    assert seconds is not None
    # half the texts are done, but the prose left is many times the work: far more than another 10 s
    assert seconds > 10 * 10
    assert seconds == 10.0 * text_work(prose) / text_work(short)


def test_notes_from_an_earlier_pass_count_at_the_mean_of_those_done() -> None:
    clock = ManualClock()
    estimate = DenseEstimate(clock)
    estimate.plan_unread(3)
    estimate.start()
    texts = ["a chunk of some note"] * 4
    clock.now = 20.0
    estimate.done("one.md", len(texts), text_work(texts))
    assert estimate.vectors_left() == 2 * 4
    assert estimate.seconds_left() == 2 * 20.0


def test_a_large_note_counts_down_piece_by_piece() -> None:
    clock = ManualClock()
    estimate = DenseEstimate(clock)
    texts = ["paragraph of the big log"] * 100
    estimate.plan("big.md", len(texts), text_work(texts))
    estimate.start()
    clock.now = 30.0
    estimate.piece("big.md", 25, 100)
    assert estimate.vectors_left() == 75
    assert estimate.seconds_left() == 90.0
    estimate.done("big.md", len(texts), text_work(texts))
    assert estimate.vectors_left() == 0
