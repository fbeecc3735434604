"""How a recall block asked with a floor picks among the entries above it: the rules that leave an entry
out because of what the question asks (a sum, a measure, today, the last time of something, nothing of
the notes at all) or because another entry answers it better (far likelier, the person's own words). Each
reason is the text `explain.considered` and the page show."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from backend.application.recall.entries import QuestionReading
from backend.application.search.presenting import ResultView
from backend.application.search.question import Question
from backend.domain.periods.question_time import days_telling
from backend.domain.periods.recency import days_of, newest_first
from backend.domain.periods.series import earlier_of_their_series
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.ranking.confidence import far_less_likely
from backend.domain.ranking.result_rules import WordTerms
from backend.domain.recall.codes import writes_code
from backend.domain.recall.measures import Measure, gives
from backend.domain.recall.open_tasks import on_the_question
from backend.domain.recall.sums import gives_sum, only_estimated, sum_lines

SAVED = "saved from elsewhere: the person's own notes answer"  # note_origin
FAR_LESS_LIKELY = "far less likely than the first entry"  # confidence.far_less_likely
EARLIER_TIME = "of an earlier time than the latest asked for"  # recency.newest_first
NO_SUM = "states no sum of money, and the question asks for one"  # sums.gives_sum
NOT_ITS_SUM = "names nothing the question asks the sum of"  # sums.sum_subject
ABOUT_THE_CHAT = "the turn asks about the conversation itself, which no note holds"  # chat_turns.py
MADE_UP = "the turn asks the agent to make something up, which no note holds"  # chat_turns.py
EARLIER_OF_SERIES = "an earlier one of its series: the question asks about today"  # series.py
# open_tasks.py
ONLY_PLANNED = "its lines on the question are unticked tasks: a plan, beside an entry telling what happened"
OTHER_TIME = "of another time than the period asked, beside entries of it"  # TimeSpan.outside
NO_CODE = "its note writes none of the codes the question names, beside one that does"  # codes.py
# sums.sum_lines
SUM_APART = "its sums stand apart from what the question asks the sum of, beside an entry writing one with it"
ONLY_ESTIMATED = "its sums are reckoned or quoted, not paid, beside an entry stating one paid"  # sums.py


@dataclass(frozen=True, slots=True)
class Gate:
    """How a block asked with a floor picks among the entries above it. With `own_first` (the question asks
    about nothing read or saved) a note saved from elsewhere is quoted only when none of the person's own
    is left; with `by_odds` none far less likely than the surest is quoted beside it (confidence.
    far_less_likely); with `sum_asked` (the question asks what something cost, what is owed ...) an entry
    stating no sum is left out (sums.py), and with `sum_of` one naming nothing the sum is of, neither in its
    text nor what names it (`_names`: its note's title, aliases, tags, its heading; a physio invoice for
    "what did the hygienist cost"), and one whose sums stand apart from it beside an entry at least as likely
    writing a sum with it, on the sum's line or table row or under names naming all of it (the label
    printing's £14 in the honey labels note beside the price list's "340g / 12oz | £9.00", for the price of
    a 12oz jar); with `measure` one stating none of it (a time of day, a temperature ...: measures.py); with
    `happened` (the question asks what happened) one whose lines on the question are unticked tasks, beside
    one that tells more (open_tasks.py); with `spent` (it asks what was spent or paid) one whose every sum is
    reckoned, quoted or budgeted, beside one stating a sum paid (sums.only_estimated);
    with `present_on` (today: the question asks about the present) a note of a series ("Budget 2024") with
    a later one already begun beside it stays out (series.py); with `span` (the days that can tell what
    the question asks of the period it names: question_time.days_telling) an entry dated wholly at another
    time is not quoted beside an entry of it at least as likely to answer (the physio visit of November
    beside the spring's, for "my shoulder recovery in the first half of 2025"); with `codes` (it names a
    code: "11C3", "RAV4") likewise an entry whose note, as far as its entries left show, writes none of
    them beside one whose note writes one (codes.py; after the rules on what an entry tells); with
    `latest_on` (today: the question asks for the last time of something) the newest dated entry comes
    first and older dated ones stay out (recency.py); with `about_chat` (the turn asks about the
    conversation itself: "summarize our conversation so far") or `made_up` (it asks the agent to make
    something up: "tell me a joke") none is quoted (chat_turns.py). `reads` reads an entry's text for the
    question: when the entries let through do not fit whole, a long one quotes its lines that match it
    (excerpts.py).

    `by_odds` needs confidences a note cannot raise by repeating the question's words: by keyword alone a
    note saying "how much do I owe Sreenivas?" five times reads as near certain, and beside it the ledger
    that answers would look an order of magnitude less likely. Weighed with a calibrated model's dense side
    (`SearchService.judged_by_meaning`: its cosine is bounded, and confidences above 0.99 count as 0.99) the
    comparison holds; without one only the floor gates."""

    by_odds: bool = True
    latest_on: dt.date | None = None
    own_first: bool = True
    sum_asked: bool = False
    measure: Measure | None = None
    present_on: dt.date | None = None
    about_chat: bool = False
    made_up: bool = False
    happened: bool = False
    spent: bool = False
    span: TimeSpan | None = None
    # asked for a sum: the question's terms naming what it is of ("hygienist"), one of which an entry, its
    # heading or its note's title must hold
    sum_of: frozenset[str] = frozenset()
    # the question's codes ("11c3"): an entry whose note writes none stays out beside one whose note does
    codes: frozenset[str] = frozenset()
    reads: QuestionReading | None = None

    @classmethod
    def asked_by(
        cls, question: Question, words: WordTerms, *, by_odds: bool, latest: bool, today: dt.date
    ) -> Gate:
        """The gate of a block asked with a floor for `question`, each rule on as the question asks it (the
        recall's, and the tests' of where the rules meet). `latest`: it asks for the last time of something
        and names no period; `today`: the day the recency and series rules count from; `words`: the
        search's memo of the words' terms, which reads the entries' text."""
        return cls(
            by_odds=by_odds,
            latest_on=today if latest else None,
            own_first=not question.saved,
            sum_asked=question.sum,
            measure=question.measure,
            present_on=today if question.present else None,
            about_chat=question.chat,
            made_up=question.made_up,
            happened=question.happened,
            spent=question.spent,
            span=days_telling(question.text, question.span) if question.span else None,
            sum_of=question.sum_of,
            codes=question.codes,
            reads=QuestionReading(words, question),
        )

    @property
    def to_the_agent(self) -> bool:
        """The turn is addressed to the agent itself: no note, nor remembered fact, answers it."""
        return self.about_chat or self.made_up

    def picked(self, kept: list[ResultView], left_out: dict[str, str]) -> list[ResultView]:
        if self.about_chat:
            return _without(kept, left_out, ABOUT_THE_CHAT, lambda v: True)
        if self.made_up:
            return _without(kept, left_out, MADE_UP, lambda v: True)
        # the person's own words first, where one of theirs can answer: one lacking the sum or the measure
        # asked for cannot ("how hot should the oven be for the focaccia?": the clipped recipe, not the plan)
        lacks = {v.chunk_id: self._lacks(v) for v in kept}
        if self.own_first and any(v.saved_from is None and lacks[v.chunk_id] is None for v in kept):
            kept = _without(kept, left_out, SAVED, lambda v: v.saved_from is not None)
        if self.by_odds and kept:
            best = max(v.confidence for v in kept)
            kept = _without(kept, left_out, FAR_LESS_LIKELY, lambda v: far_less_likely(v.confidence, best))
        # after the odds: these only leave out, never let a less likely entry in
        left_out.update((v.chunk_id, why) for v in kept if (why := lacks[v.chunk_id]) is not None)
        kept = [v for v in kept if lacks[v.chunk_id] is None]
        if self.present_on is not None:
            earlier = {kept[i].chunk_id for i in earlier_of_their_series(kept, _title, self.present_on)}
            kept = _without(kept, left_out, EARLIER_OF_SERIES, lambda v: v.chunk_id in earlier)
        if (span := self.span) is not None:
            # a preference among entries that answer: one of the period at least as likely answers instead
            of_it = max(
                (v.confidence for v in kept if v.periods and not span.outside(v.periods)), default=None
            )
            if of_it is not None:
                kept = _without(
                    kept, left_out, OTHER_TIME, lambda v: v.confidence <= of_it and span.outside(v.periods)
                )
        if self.happened and (reads := self.reads) is not None:
            # after the rules that leave entries out for what they lack, beside an entry that tells more than
            # the plan (a line on the question that is no task): alone, the plan is what the notes know of it
            spoken = {v.chunk_id: on_the_question(v.content, reads.holds, reads.weights) for v in kept}
            if any(tells is False for tells in spoken.values()):
                kept = _without(kept, left_out, ONLY_PLANNED, lambda v: spoken[v.chunk_id] is True)
        if self.sum_of and (reads := self.reads) is not None:
            # a price is written beside what it is the price of ("| 340g / 12oz | £9.00 |"): beside an entry
            # at least as likely whose sum stands so, one whose sums stand apart (the label printing's £14 in
            # the honey labels note, for the price of a 12oz jar) answers another question
            beside = {v.chunk_id for v in kept if self._sum_with_it(v, reads)}
            surest = max((v.confidence for v in kept if v.chunk_id in beside), default=None)
            if surest is not None:
                kept = _without(
                    kept, left_out, SUM_APART, lambda v: v.chunk_id not in beside and v.confidence <= surest
                )
        if self.spent:
            # the plan of a spend beside the spend: alone, the quote is what the notes know of it
            planned = {v.chunk_id for v in kept if only_estimated(v.content)}
            if any(v.chunk_id not in planned and gives_sum(v.content) for v in kept):
                kept = _without(kept, left_out, ONLY_ESTIMATED, lambda v: v.chunk_id in planned)
        if self.codes:
            # after the rules on what an entry tells (the plan beside the journal of what happened): a
            # preference among the entries left, as the period's, never above a likelier one; by note, as
            # the section deciding on the A2 exam belongs to the note that names the exam above it
            writing = {v.note_path for v in kept if writes_code(_told(v), self.codes)}
            surest = max((v.confidence for v in kept if v.note_path in writing), default=None)
            if surest is not None:
                kept = _without(
                    kept, left_out, NO_CODE, lambda v: v.note_path not in writing and v.confidence <= surest
                )
        if self.latest_on is not None:
            today = self.latest_on
            kept, earlier_days = newest_first(kept, lambda v: days_of(v.periods, today))
            left_out.update((v.chunk_id, EARLIER_TIME) for v in earlier_days)
        return kept

    def _sum_with_it(self, view: ResultView, reads: QuestionReading) -> bool:
        """Whether the entry writes a sum with what the question asks the sum of: on the sum's own line or
        table row, or under names naming all of it (`_names`: every row of "Boat spend" is the boat's)."""
        named = reads.holds(_names(view))
        if self.sum_of <= named:
            return True
        return any(reads.holds(line) & self.sum_of for line in sum_lines(view.content))

    def _lacks(self, view: ResultView) -> str | None:
        """What the entry lacks of what the question asks for (a sum, what the sum is of, a measure), as the
        reason it is left out for; None when it lacks nothing asked."""
        if self.sum_asked:
            if not gives_sum(view.content):
                return NO_SUM
            if self.sum_of and self.reads is not None and not self.reads.holds(_told(view)) & self.sum_of:
                return NOT_ITS_SUM
        if self.measure is not None and not gives(self.measure, view.content):
            return no_measure(self.measure)
        return None


def _without(
    kept: list[ResultView], left_out: dict[str, str], reason: str, out: Callable[[ResultView], bool]
) -> list[ResultView]:
    """`kept` without the entries `out` says, each recorded in `left_out` with `reason`."""
    left_out.update((v.chunk_id, reason) for v in kept if out(v))
    return [v for v in kept if v.chunk_id not in left_out]


def _names(view: ResultView) -> str:
    """What names an entry: its note's title, aliases and tags, and its heading ("Lyd" is the alias of
    Lydia's ledger)."""
    names = " ".join([*view.aliases, *(tag.replace("/", " ") for tag in view.tags)])
    return f"{view.note_title}\n{names}\n{view.heading_context}"


def _told(view: ResultView) -> str:
    """An entry's text with what names it."""
    return f"{_names(view)}\n{view.content}"


def _title(view: ResultView) -> str:
    return view.note_title


def no_measure(measure: Measure) -> str:
    """Why an entry stating none of the measure asked for is left out."""
    return f"states no {measure.name}, and the question asks for one"
