"""The vault's tags a question names in words: "mental health" names #mentalhealth, "generalised anxiety
disorder" names #GAD where a note defines GAD so, and the other way round "GAD" asks for the words of that
expansion too (backend/domain/text/tag_words.py has the rules).

Only tag terms the vault holds join the question's keyword terms, so a question that names no tag of the
vault is encoded exactly as without this, and no term that can match nothing is sent to the store."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from backend.application.serving.note_graph import TagVocabulary
from backend.domain.text.tag_words import head, span_terms, tag_segments, tag_terms
from backend.domain.text.text_analysis import TextAnalyzer


@dataclass(frozen=True, slots=True)
class _Worked:
    """What a vocabulary comes to in terms, worked out once for it."""

    vocabulary: TagVocabulary
    tag_terms: frozenset[str]
    heads: frozenset[str]  # of the tags' segments: the spans worth stemming
    # an acronym tag's terms, its expansion, and the expansion's terms in each of the vault's languages
    expansions: tuple[tuple[frozenset[str], str, tuple[frozenset[str], ...]], ...]
    # an acronym as a question's word, as written, and its expansion's terms: "GAD" asks for those words too
    spelled_out: tuple[tuple[frozenset[str], str, frozenset[str]], ...] = ()


class QuestionTags:
    def __init__(self, analyzer: TextAnalyzer) -> None:
        self._analyzer = analyzer
        # the vault's languages, as the notes' tags were stemmed; not the question's detected one, which
        # costs a detection and matches no tag stemmed otherwise
        self._languages = analyzer.query_languages or (analyzer.default_language,)
        self._worked: _Worked | None = None

    def terms(self, query: str, words: Mapping[str, float], vocabulary: TagVocabulary) -> dict[str, float]:
        """The tag terms `query` means that a note of the vault holds, each at a word's weight. `words`: the
        query's own terms (`TextAnalyzer.query_terms`)."""
        return dict.fromkeys(self.found(query, words, vocabulary), 1.0)

    def found(self, query: str, words: Mapping[str, float], vocabulary: TagVocabulary) -> dict[str, str]:
        """The tag terms `query` means that a note of the vault holds, each with the words of the question
        it stands for (what a hit holding the tag term holds of the question)."""
        worked = self._worked_for(vocabulary)
        if not worked.tag_terms:
            return {}
        spans = span_terms(self._analyzer, query, self._languages, worked.heads)
        found = {term: said for term, said in spans.items() if term in worked.tag_terms}
        for acronym, expansion, needs in worked.expansions:
            if any(all(term in words for term in need) for need in needs):
                found.update(dict.fromkeys(acronym, expansion))
        for plain, written, terms in worked.spelled_out:
            if plain & words.keys():
                found.update({term: written for term in terms if term not in words})
        return found

    def named_by_a_word(self, query: str, vocabulary: TagVocabulary) -> frozenset[str]:
        """The vault's tags one word of `query` names (#kids for "the kids"). Not keyword terms (the word is
        one already); beside other vaults, they tell which one keeps notes so tagged (search/narrowing.py)."""
        worked = self._worked_for(vocabulary)
        if not worked.tag_terms:
            return frozenset()
        spans = span_terms(self._analyzer, query, self._languages, worked.heads, sizes=(1,))
        return frozenset(term for term in spans if term in worked.tag_terms)

    def _worked_for(self, vocabulary: TagVocabulary) -> _Worked:
        worked = self._worked
        if worked is None or worked.vocabulary is not vocabulary:
            worked = self._worked = self._work_out(vocabulary)
        return worked

    def _work_out(self, vocabulary: TagVocabulary) -> _Worked:
        analyzer, languages = self._analyzer, self._languages
        held = frozenset(term for tag in vocabulary.tags for term in tag_terms(analyzer, tag, languages))
        heads = frozenset(head(segment) for tag in vocabulary.tags for segment in tag_segments(tag))
        expansions = []
        spelled_out = []
        for acronym, expansion in vocabulary.definitions:
            needs = tuple(
                frozenset(term for term, weight in analyzer.terms(expansion, lang) if weight >= 1.0)
                - analyzer.stop_terms(lang)
                for lang in languages
            )
            needs = tuple(need for need in needs if need)
            own = frozenset(tag_terms(analyzer, acronym, languages))
            if needs and own:
                expansions.append((own, expansion, needs))
            plain = frozenset(term for lang in languages for term, _ in analyzer.terms(acronym, lang))
            if needs and plain:
                spelled_out.append((plain, acronym, frozenset().union(*needs)))
        return _Worked(vocabulary, held, heads, tuple(expansions), tuple(spelled_out))
