"""How much of what a question narrows to a vault holds: beside vaults holding less, it answers first and
alone is quoted (domain/ranking/vault_merge.py, recall/context.py), however sure the others are of the
question's topic.

A question narrows by a note it names by that note's own name (the whole question is its title, alias or
file name), by the people, places and things it names (named_words.py), by the tags it means, and by the
period with its year it names. A note named comes first: "garden plan" asks for the note of that name,
whichever vault holds it, however many notes of another vault carry #garden. Then names: a vault that never
mentions Melanie cannot say when she went to the park, and most questions asked of a vault of chats name
its speakers, whose words (books, kids, meetings) are tags of a person's own vault. Then the tags and the
period, one each."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from backend.application.search.question import Question
from backend.domain.index.payload import written_words
from backend.domain.models import ScoredPoint
from backend.domain.periods.time_intent import names_its_year
from backend.domain.ranking.confidence import Evidence
from backend.domain.text.named_words import names_held


class Narrowing(NamedTuple):
    """What a vault holds of what a question narrows to; more is more (tuples compare in field order)."""

    named: bool  # it holds a note the question is the name of (the search puts it first)
    names: int  # the question's names its hits write
    kinds: int  # 0-2: the tags it means (tags of the vault), notes of its period that speak to it


def narrowing(
    asked: Question, hits: Sequence[ScoredPoint], evidence: Sequence[Evidence], *, named: bool = False
) -> Narrowing:
    """`hits` and `evidence`: the vault's answer to `asked`, whose tags are the vault's (QuestionReader);
    `named`: it holds a note the question is the name of. Then that decides alone: the vaults holding
    one are equals (confidence orders them), whatever else they hold, and how many such notes."""
    if named:
        return Narrowing(True, 0, 0)
    span = asked.span
    dated = span is not None and names_its_year(span) and any(e.of_period > 0 for e in evidence)
    tagged = bool(asked.tag_terms or asked.word_tags)
    names = names_held((written_words(hit.payload) for hit in hits), asked.names)
    return Narrowing(False, names, int(tagged) + int(dated))
