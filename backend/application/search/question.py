"""A question as every stage of one search reads it, analysed once at the search's top.

Its keyword terms and their weights, the languages it is stemmed in (the vault's and its own, detected once),
whether it is in a language the vault is not, the period it names, the vault's tags it means, and what the
recall rules read of it: the keyword encoder, the ranking rules, the pointers, the hits' confidence, the
highlights, the explanation and the memory suggestion all read this value instead of analysing the text
again (each used to run the analyser, and its language detection, on it anew)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from backend.application.search.options import SearchOptions
from backend.application.search.question_tags import QuestionTags
from backend.application.serving.note_graph import TagVocabulary
from backend.domain.notes.note_origin import asks_about_saved
from backend.domain.periods.question_time import find_time_span
from backend.domain.periods.recency import asks_for_latest
from backend.domain.periods.series import asks_about_the_present
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.recall.chat_turns import asks_about_the_chat, asks_to_make_something
from backend.domain.recall.codes import codes_among
from backend.domain.recall.measures import Measure, measure_asked
from backend.domain.recall.open_tasks import asks_what_happened
from backend.domain.recall.sums import asks_for_sum, asks_what_was_spent, sum_subject
from backend.domain.text.named_words import named_words
from backend.domain.text.sparse import SparseEncoder, term_index, tokenize
from backend.domain.text.text_analysis import TextAnalyzer

_NONE: Mapping = MappingProxyType({})


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    languages: tuple[str, ...]  # what its words are stemmed in: the vault's query languages and its own
    terms: Mapping[str, float]  # its keyword terms and weights, stop words at theirs: the keyword side's
    own_terms: Mapping[str, float]  # its own words' terms, stop words left out: what a hit is judged by
    foreign: bool  # in a language none of the vault's is: fusion weighs the keyword side little
    span: TimeSpan | None = None  # the period it names (None: none, or the time rule is off)
    # the vault's tag terms it names, joining `terms` on the keyword side
    tag_terms: Mapping[str, float] = field(default_factory=dict)
    # the vault's tags its own words name, by tag term index, each with the own terms' indices it stands for
    judged_tags: Mapping[int, frozenset[int]] = field(default_factory=dict)
    saved: bool = False  # asks about something read or saved: a clipping answers as well as one's own words
    latest: bool = False  # asks for the last time of something (recency.py)
    sum: bool = False  # asks for a sum of money: only a passage with one answers it (sums.py)
    # asked for a sum, its own terms naming what the sum is of ("hygienist": sums.sum_subject)
    sum_of: frozenset[str] = frozenset()
    spent: bool = False  # asks for a sum spent or paid: one only reckoned or quoted is no answer (sums.py)
    chat: bool = False  # asks about the conversation itself: no note answers it (chat_turns.py)
    made_up: bool = False  # asks the agent to make something up, a joke or a poem: no note answers it either
    happened: bool = False  # asks what happened: a note only planning it does not answer (open_tasks.py)
    # the measure it asks for (a time of day, a temperature ...): a passage with one answers (measures.py)
    measure: Measure | None = None
    present: bool = False  # asks about today: last year's note of a series tells of last year (series.py)
    words: frozenset[str] = frozenset()  # folded words without stop words: what a remembered fact must share
    # the vault's tags one word of it names (#kids for "the kids"): joining no keyword terms, they narrow
    # several vaults (narrowing.py), as `names` do
    word_tags: frozenset[str] = frozenset()
    names: tuple[str, ...] = ()  # folded words it writes with a capital inside a sentence (named_words.py)
    codes: frozenset[str] = frozenset()  # its terms that are codes ("11c3", "rav4": codes.py)

    @property
    def keyword_terms(self) -> dict[str, float]:
        """What the keyword side asks for: its terms, and the vault's tags it names at a word's weight."""
        return {**self.terms, **self.tag_terms}

    @property
    def wanted(self) -> set[str]:
        """Its whole words' terms (a compound's parts and a stop word's weights are below 1)."""
        return {term for term, weight in self.terms.items() if weight >= 1.0}

    @classmethod
    def plain(cls, text: str, analyzer: TextAnalyzer) -> Question:
        """A question read without a vault: no period, no tags (what views of hits need outside a search)."""
        return QuestionReader(SparseEncoder(analyzer=analyzer), SearchOptions(time_boost=0.0)).read(text)


class QuestionReader:
    """Reads a question once for a search: with the encoder's analyser (the keyword side's terms), the
    judge's (stop words left out), the vault's tags and the options' calendar."""

    def __init__(self, encoder: SparseEncoder, options: SearchOptions) -> None:
        self._analyzer = encoder.analyzer
        self._judge = encoder.content_only().analyzer
        self._tags = QuestionTags(encoder.analyzer)
        self._options = options

    def read(self, text: str, vocabulary: TagVocabulary | None = None) -> Question:
        """`vocabulary`: the vault's tags (None: a question read without a vault, which names none)."""
        analyzer, options = self._analyzer, self._options
        own_language = analyzer.detected(text)  # the one language detection of the question
        languages = analyzer.query_languages_for(text, own_language)
        terms = analyzer.query_terms(text, languages)
        own = terms if self._judge is analyzer else self._judge.query_terms(text, languages)
        tag_terms: Mapping[str, float] = _NONE
        word_tags: frozenset[str] = frozenset()
        judged_tags: Mapping[int, frozenset[int]] = _NONE
        if vocabulary is not None:
            tag_terms = self._tags.terms(text, terms, vocabulary)
            word_tags = self._tags.named_by_a_word(text, vocabulary)
            judged_tags = {
                term_index(tag): frozenset(term_index(term) for term in self._judge.query_terms(stands_for))
                for tag, stands_for in self._tags.found(text, own, vocabulary).items()
            }
        period = find_time_span(text, options.today(), southern=options.southern)
        # the period rule off: no period is boosted nor judged of (its words are still no one's name)
        span = period if options.time_boost else None
        foreign = analyzer.foreign(text, own_language)
        sum_asked = asks_for_sum(text)
        sum_of: frozenset[str] = frozenset()
        if sum_asked:
            # the period named is when, not what the sum is of, whether or not the period rule is on
            subject = self._judge.query_terms(sum_subject(text, period.text if period else ""), languages)
            sum_of = frozenset(term for term in subject if term in own)
        return Question(
            text=text,
            languages=languages,
            terms=MappingProxyType(terms),
            own_terms=MappingProxyType(own),
            foreign=foreign,
            span=span,
            tag_terms=tag_terms,
            judged_tags=judged_tags,
            saved=asks_about_saved(text),
            latest=asks_for_latest(text),
            sum=sum_asked,
            sum_of=sum_of,
            spent=sum_asked and asks_what_was_spent(text),
            chat=asks_about_the_chat(text),
            made_up=asks_to_make_something(text),
            # its words are English ones (German asks "Was hat …" of the present and the past alike); a short
            # question the detector is unsure of is, in a vault read in English alone
            happened=(own_language == "en" or (own_language is None and set(languages) <= {"en"}))
            and asks_what_happened(text),
            # an English question over notes in another language: their units are written in it
            measure=None if foreign else measure_asked(text),
            present=asks_about_the_present(text, span, options.today()),
            words=frozenset(tokenize(text)),
            word_tags=word_tags,
            names=named_words(text, period.text if period else "", own_language),
            codes=self._codes(text, own, period, languages),
        )

    def _codes(
        self, text: str, own: Mapping[str, float], period: TimeSpan | None, languages: tuple[str, ...]
    ) -> frozenset[str]:
        """Its codes (codes.py), without the words naming its period: "2024-W38" and "Q3 2025" are its time,
        which a note tells by its dates, not codes it must write (read only when it names a code)."""
        codes = codes_among(own, text)
        if codes and period is not None:
            codes -= frozenset(self._judge.query_terms(period.text, languages))
        return codes
