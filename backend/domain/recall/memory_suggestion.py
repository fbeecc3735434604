"""A fact worth remembering in what a search found: money owed, a health fact, a commitment.

When the confident hits of a search hold such a fact on one of their lines ("Balance: I owe €79.50",
"Naproxen 500mg twice a day", "She's promised £100 in August"), the answer proposes it as a memory (key,
value, source note and lines) that the agent may offer the user to keep with `kb_remember` / POST /memory.
Only an offer: the agent asks, the user decides, nothing is stored here.

Rules (the seeds' auto-suggest, made precise):

* only hits at least `floor` likely to be relevant (their calibrated `confidence`), among the first `among`:
  a fact from a note that does not answer the question is not worth offering;
* never for chit-chat ("hi", "thanks!"): the question needs a word of its own beyond greetings and thanks;
* never a secret: a line holding a redaction marker, anything the secret rules would redact, or a word that
  names a credential or an access code (password, PIN, gate code...) is never proposed, whatever else it
  says;
* a sentence qualifies by its kind: `money_owed` (owe / lent / borrowed / debt / paid back... with an
  amount in a currency), `health` (a diagnosis, a prescription or medication, an allergy, a dose),
  `commitment` (promised, agreed, committed to, pledged, vowed, signed up to);
* the fact must be about what was asked: its sentence or its note's title shares a word with the question
  (a question about climbing is not offered the medication a confident journal entry also mentions);
* among qualifying sentences, the one sharing the most words with the question wins, then the better-ranked
  hit, then the latest ISO date on its line (a ledger's current balance rather than an old one), then the
  first in the note.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from backend.domain.notes.line_map import LineMap, file_line
from backend.domain.notes.memory import MAX_KEY_CHARS, MAX_VALUE_CHARS
from backend.domain.ranking.confidence import RECALL_FLOOR
from backend.domain.text.secrets import MARKER_PREFIX, redact_secrets
from backend.domain.text.sparse import fold, tokenize

SUGGEST_AMONG = 3  # hits looked at: the answer's head, where a confident hit that answers sits

KINDS = ("money_owed", "health", "commitment")
# what a key says of the fact after the note's name: `money_with_sreenivas_balance`
_KEY_SUFFIX = {"money_owed": "balance", "health": "health", "commitment": "commitment"}

_CURRENCY = (
    r"(?:[€$£¥₹]|\b(?:eur|euros?|usd|dollars?|gbp|pounds?|quid|inr|rupees?|chf|francs?|sek|nok|dkk|kr)\b)"
)
_NUMBER = r"\d[\d.,']*"
_AMOUNT = re.compile(rf"(?i){_CURRENCY}\s?{_NUMBER}|{_NUMBER}\s?{_CURRENCY}")
_OWED_WORDS = (
    r"\b(?:owe[sd]?|owing|lent|loaned|loan|borrow(?:ed)?|debts?|iou|repa(?:y|id)"
    r"|(?:pa(?:y|id)) (?:\w+ )?back)\b"
)
_HEALTH_WORDS = (
    r"\b(?:diagnos(?:ed|is|es)|prescri(?:bed|ption)|medications?|meds|allerg(?:ic|y|ies)"
    r"|\d+(?:[.,]\d+)?\s?(?:mg|mcg|µg|iu)\b)"  # not ml: a lab's 500ml of a solution is no dose
)
_COMMITMENT_WORDS = (
    r"\b(?:promised|agreed|committed to|pledged|vowed|signed up (?:to|for)"
    r"|gave (?:my|(?:him|her|them) my) word)\b"
)
_OWED = re.compile(_OWED_WORDS, re.IGNORECASE)
_HEALTH = re.compile(_HEALTH_WORDS, re.IGNORECASE)
_COMMITMENT = re.compile(_COMMITMENT_WORDS, re.IGNORECASE)
# what every fact of these kinds holds: a text without it has none (one pass before the finer rules)
_ANY_KIND = re.compile("|".join((_OWED_WORDS, _HEALTH_WORDS, _COMMITMENT_WORDS)), re.IGNORECASE)
# words that name a credential or an access code: a line with one is never proposed, even unredacted
_SECRET_WORDS = re.compile(
    r"(?i)\b(?:passwords?|passwd|passphrases?|pass ?codes?|pins?|pin codes?|(?:gate|door|alarm|safe|lock|"
    r"access|security|entry|wi-?fi|login|verification|recovery|backup) (?:code|key|password)s?|cvv|cvc|"
    r"api[ _-]?keys?|tokens?|secrets?|credentials?|iban|sort code|account number|seed phrase|combination)\b"
)
# stop words aside, questions made only of these are chit-chat: nothing to propose after "thanks!"
_SMALL_TALK = frozenset(
    "hi hello hey hiya yo howdy thanks thank thx ty cheers ok okay k cool great nice good fine yes yeah yep "
    "no nope sure bye goodbye morning evening afternoon night lol haha please welcome sorry wow "
    "awesome".split()
)
_MARKDOWN = re.compile(r"\*\*|__|(?<!\w)[*_](?=\S)|(?<=\S)[*_](?!\w)|`")
_LINK = re.compile(r"\[\[([^\]|#]*)(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
_LIST_MARK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?|^\s*>\s?")
_BLOCK_ID = re.compile(r"\s\^[\w-]+\s*$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_ISO_DAY = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_SLUG_GAP = re.compile(r"[^\w]+")


@dataclass(frozen=True, slots=True)
class FoundText:
    """What the rule reads of one search hit (its text as shown, secrets already redacted)."""

    note_path: str
    note_title: str
    text: str
    start_line: int  # the note's line of the text's first line
    confidence: float
    line_map: LineMap = ()  # where the text's lines stand in the note (line_map.py)


@dataclass(frozen=True, slots=True)
class MemorySuggestion:
    key: str
    value: str
    source: str  # vault-relative path of the note
    start_line: int  # the line(s) of the note the value comes from
    end_line: int
    kind: str  # one of KINDS
    confidence: float  # the confidence of the hit it comes from


@dataclass(frozen=True, slots=True)
class _Candidate:
    overlap: int
    rank: int
    day: str
    order: int
    hit: FoundText
    line_no: int
    line: str
    sentence: str
    kind: str


def suggest_memory(
    query: str, hits: Sequence[FoundText], *, floor: float = RECALL_FLOOR, among: int = SUGGEST_AMONG
) -> MemorySuggestion | None:
    """The fact among the confident first `among` hits worth offering to remember, or None."""
    return suggest_from_words(frozenset(tokenize(query)), hits, floor=floor, among=among)


def suggest_from_words(
    words: frozenset[str],
    hits: Sequence[FoundText],
    *,
    floor: float = RECALL_FLOOR,
    among: int = SUGGEST_AMONG,
) -> MemorySuggestion | None:
    """`suggest_memory` for a question already read: `words`, its folded words bar stop words (`tokenize`)."""
    asked = set(words)
    if not asked or asked <= _SMALL_TALK:
        return None
    asked = _stems(asked)
    best: _Candidate | None = None
    for rank, hit in enumerate(hits[:among]):
        if hit.confidence < floor:
            continue
        facts = text_facts(hit.text)
        if not facts:
            continue
        titled = _stems(tokenize(hit.note_title))
        for fact in facts:
            overlap = len(asked & (fact.stems | titled))
            if not overlap:
                continue
            line_no = file_line(hit.start_line, hit.line_map, fact.offset)
            found = _Candidate(
                overlap, rank, fact.day, fact.order, hit, line_no, fact.line, fact.sentence, fact.kind
            )
            # the secret rules only for a fact that would win: they are the costly part
            if (best is None or _better(found, best)) and not is_secret(fact.line):
                best = found
    if best is None:
        return None
    return MemorySuggestion(
        key=_key(best.hit, best.kind),
        value=_value(best.sentence, best.line, best.hit.note_title),
        source=best.hit.note_path,
        start_line=best.line_no,
        end_line=best.line_no,
        kind=best.kind,
        confidence=best.hit.confidence,
    )


@dataclass(frozen=True, slots=True)
class _Fact:
    """A sentence of a text that states a fact of some kind, whatever the question."""

    offset: int  # its line's, from the text's first line
    order: int  # its line's among the text's lines that may state a fact
    line: str
    day: str  # the latest ISO day on its line, or ""
    sentence: str
    kind: str
    stems: frozenset[str]


@functools.lru_cache(maxsize=2048)
def text_facts(text: str) -> tuple[_Fact, ...]:
    """The facts a hit's text states, kept for the texts shown lately: the confident hits of a vault's
    questions come back, and finding them (a pass of the kind rules over every line) is the costly part."""
    if not _ANY_KIND.search(text):
        return ()
    found = []
    for order, (offset, line) in enumerate(_lines(text)):
        if not _ANY_KIND.search(line):
            continue
        day = max(_ISO_DAY.findall(line), default="")
        for sentence in _sentences(line):
            kind = _kind(sentence)
            if kind is not None:
                stems = frozenset(_stems(tokenize(sentence)))
                found.append(_Fact(offset, order, line, day, sentence, kind, stems))
    return tuple(found)


def _kind(sentence: str) -> str | None:
    if _OWED.search(sentence) and _AMOUNT.search(sentence):
        return "money_owed"
    if _HEALTH.search(sentence):
        return "health"
    if _COMMITMENT.search(sentence):
        return "commitment"
    return None


def is_secret(text: str) -> bool:
    """True when `text` holds, or names, something never to be proposed as a memory."""
    return MARKER_PREFIX in text or bool(_SECRET_WORDS.search(text)) or redact_secrets(text).redactions > 0


def _better(found: _Candidate, best: _Candidate) -> bool:
    if found.overlap != best.overlap:
        return found.overlap > best.overlap
    if found.rank != best.rank:
        return found.rank < best.rank
    if found.day != best.day:
        return found.day > best.day
    return found.order < best.order


def _lines(text: str) -> list[tuple[int, str]]:
    """A text's lines that may state a fact, each with its place from the text's first line (headings and
    table rules aside: a heading names a section, it states nothing)."""
    found = []
    for offset, raw in enumerate(text.split("\n")):
        line = raw.strip()
        if not line or line.startswith("#") or set(line) <= set("|-: "):
            continue
        found.append((offset, line))
    return found


def _sentences(line: str) -> list[str]:
    plain = _plain(line)
    return [s.strip() for s in _SENTENCE_END.split(plain) if s.strip()]


def _plain(line: str) -> str:
    """A line as prose: list marks, emphasis, block ids and link brackets gone (a link keeps its shown
    text)."""
    line = _LIST_MARK.sub("", line)
    line = _BLOCK_ID.sub("", line)
    line = _LINK.sub(lambda m: m.group(2) or m.group(1), line)
    return _MARKDOWN.sub("", line).strip()


def _value(sentence: str, line: str, title: str) -> str:
    """The sentence, and where it comes from when it does not say: the note's title and the line's day."""
    about = [title] if title and fold(title) not in fold(sentence) else []
    days = _ISO_DAY.findall(line)
    if days and days[-1] not in sentence:
        about.append(days[-1])
    value = f"{sentence} ({', '.join(about)})" if about else sentence
    return value[:MAX_VALUE_CHARS]


def _key(hit: FoundText, kind: str) -> str:
    """`money_with_sreenivas_balance`: the note's name (title, else file name) and the kind, as one word."""
    name = hit.note_title or hit.note_path.rsplit("/", 1)[-1].removesuffix(".md")
    slug = _SLUG_GAP.sub("_", fold(name)).strip("_") or "note"
    suffix = _KEY_SUFFIX[kind]
    key = slug if slug.endswith(suffix) else f"{slug}_{suffix}"
    return key[:MAX_KEY_CHARS].rstrip("_")


def _stems(words: Iterable[str]) -> set[str]:
    """Words without their regular English endings, so "owe", "owes", "owed" and "owing" count as one word,
    and "promise" and "promised". Numbers aside: a daily note's year in its title says nothing of its
    facts."""
    return {_stem(word) for word in words if not word.isdigit()}


def _stem(word: str) -> str:
    if len(word) > 4 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 3 and word.endswith(("ed", "es")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word[:-1] if len(word) > 2 and word.endswith("e") else word
