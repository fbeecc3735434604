"""Rules applied to a ranked result list before it is cut to `top_k`: dedupe, threshold, highlights.

Pure functions over small values, so the search use case stays a pipeline of named steps.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from collections.abc import Callable, Collection, Sequence, Set
from dataclasses import dataclass
from typing import Protocol, TypeVar

from backend.domain.text.languages import UNSPACED
from backend.domain.text.text_analysis import TextAnalyzer, runs, words

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class LineSpan:
    """Where a chunk sits in its note: 1-based inclusive file lines."""

    note_path: str
    start_line: int
    end_line: int

    def overlaps(self, other: LineSpan) -> bool:
        return (
            self.note_path == other.note_path
            and self.start_line <= other.end_line
            and other.start_line <= self.end_line
        )


class Scored(Protocol):
    @property
    def score(self) -> float: ...


S = TypeVar("S", bound=Scored)


def dedupe_overlapping(hits: Sequence[T], span: Callable[[T], LineSpan]) -> list[T]:
    """Drop each hit whose line range overlaps a better-ranked hit of the same note.

    Chunks of one section share their overlap lines, so neighbours repeat each other's text; keeping the
    first (best-ranked) frees the slot for other material. Chunks of one note that share no line all stay.
    `hits` must be best first; the order of the kept hits is unchanged.
    """
    kept: list[T] = []
    kept_spans: dict[str, list[LineSpan]] = {}
    for hit in hits:
        where = span(hit)
        taken = kept_spans.setdefault(where.note_path, [])
        if any(where.overlaps(other) for other in taken):
            continue
        taken.append(where)
        kept.append(hit)
    return kept


def apply_threshold(hits: Sequence[S], threshold: float | None) -> list[S]:
    """Hits scoring at least `threshold` (all of them when it is None), order unchanged."""
    if threshold is None:
        return list(hits)
    return [hit for hit in hits if hit.score >= threshold]


def highlights(query: str, text: str, *, analyzer: TextAnalyzer | None = None) -> list[str]:
    """The query's terms as they are written in `text`: each once, in order of first appearance.

    Matching uses the keyword side's analysis (case and accent folding, stop words, stemming in the query's
    languages, compound parts, bigrams), so "Cafe" in a query highlights "café" in the text, "deciding"
    highlights "decides", "Steuer" highlights "Steuererklärung", and stop words are never highlights. In
    a script written without spaces the highlight is the matched stretch ("迁移" in "数据库迁移计划").
    """
    analyzer = analyzer or TextAnalyzer()
    wanted = set(analyzer.query_terms(query))
    return Highlighter(wanted, analyzer.query_languages_for(query), WordTerms(analyzer))(text)


WORD_TERMS_KEPT = 100_000  # words (with their languages) a WordTerms remembers before it starts over
# texts whose first holders a WordTerms remembers, the least recently shown leaving first: ~9 KB each for a
# 1,000-character chunk, so ~18 MB at most; all 1,150 chunks of LoCoMo dev fit (512 did not: 30% missed)
TEXTS_KEPT = 2048

# term -> (place, shown): the first written word (or run) of a text that holds the term, and where it stands
Holders = dict[str, tuple[int, str]]


class WordTerms:
    """`TextAnalyzer.word_terms`, remembered: the words of a vault's notes come back in search after search,
    and analysing each again was most of what highlighting a hit cost. Also, for the texts shown lately,
    which word first holds each term (`first_holders`): highlighting a shown chunk again is then a lookup
    per question term."""

    __slots__ = ("_known", "_order", "_texts", "analyzer")

    def __init__(self, analyzer: TextAnalyzer) -> None:
        self.analyzer = analyzer
        self._known: dict[tuple[str, Sequence[str]], frozenset[str]] = {}
        self._texts: dict[tuple[str, Sequence[str]], Holders | None] = {}
        self._order = threading.Lock()  # searches run in several threads; reordering is not atomic

    @property
    def room(self) -> bool:
        """Whether `first_holders` remembers one more text without forgetting one."""
        return len(self._texts) < TEXTS_KEPT

    def first_holders(self, text: str, languages: Sequence[str]) -> Holders | None:
        """Each term of `text` with the first word holding it; None for a text in a script written without
        spaces (what is highlighted there depends on the question's bigrams)."""
        key = (text, languages)
        texts = self._texts
        with self._order:
            if key in texts:
                holders = texts[key] = texts.pop(key)  # shown again: the last to leave now
                return holders
        holders = self._holders(text, languages)
        with self._order:
            if len(texts) >= TEXTS_KEPT and key not in texts:
                del texts[next(iter(texts))]  # the least recently shown (a dict keeps its order)
            texts[key] = holders
        return holders

    def _holders(self, text: str, languages: Sequence[str]) -> Holders | None:
        first: Holders = {}
        place = 0
        known = self._known
        for word in dict.fromkeys(words(text)):
            if word.isascii():  # most words: one run, its terms most often remembered (looked up here)
                terms = known.get((word, languages))
                if terms is None:
                    terms = self(word, languages)
                for term in terms:
                    if term not in first:
                        first[term] = (place, word)
                place += 1
                continue
            items = []
            for script, run in runs(word):
                if script in UNSPACED:
                    return None
                items.append((run, self(run, languages)))
            for shown, terms in items:
                for term in terms:
                    if term not in first:
                        first[term] = (place, shown)
                place += 1
        return first

    def __call__(self, word: str, languages: Sequence[str]) -> frozenset[str]:
        key = (word, languages)
        found = self._known.get(key)
        if found is None:
            if len(self._known) >= WORD_TERMS_KEPT:
                self._known = {}  # a bound, not a ranking: the words still in use come back at once
            found = self._known[key] = frozenset(self.analyzer.word_terms(word, languages))
        return found


class Highlighter:
    """`highlights` of one query in the texts of several hits: `wanted`, the query's terms, stemmed in
    `languages` (as its search read them), and each distinct word of the hits analysed once (the hits of a
    search share most of theirs)."""

    __slots__ = ("_languages", "_matched", "_wanted", "_words")

    def __init__(self, wanted: Collection[str], languages: Sequence[str], words: WordTerms) -> None:
        self._words = words
        self._wanted = set(wanted)
        self._languages = tuple(languages) if self._wanted else ()
        self._matched: dict[str, list[tuple[str, set[str]]]] = {}

    def __call__(self, text: str) -> list[str]:
        if not self._wanted:
            return []
        holders = self._words.first_holders(text, self._languages)
        if holders is not None:
            # a word is shown exactly when it is the first to hold one of the question's terms (the loop
            # below shows a word for a term not seen yet, and every word before it held only seen ones)
            picked = {holders[term] for term in self._wanted if term in holders}
            return [shown for _, shown in sorted(picked)]
        found: list[str] = []
        seen: set[str] = set()
        matched = self._matched
        # a word written again shows nothing new (its terms were seen at its first place): each once, in order
        for word in dict.fromkeys(words(text)):
            known = matched.get(word)
            if known is None:  # words repeat: analyse each distinct one once
                known = matched[word] = _matches(self._words, word, self._languages, self._wanted)
            for shown, terms in known:
                if terms - seen:
                    seen |= terms
                    found.append(shown)
        return found


def _matches(
    word_terms: Callable[[str, Sequence[str]], Set[str]],
    word: str,
    languages: Sequence[str],
    wanted: set[str],
) -> list[tuple[str, set[str]]]:
    """What of `word` to show as highlights, each with the query terms it matched (`word_terms`: the
    analyzer's, or a `WordTerms` remembering them)."""
    if word.isascii():
        terms = wanted.intersection(word_terms(word, languages))
        return [(word, terms)] if terms else []
    out: list[tuple[str, set[str]]] = []
    for script, run in runs(word):
        if script not in UNSPACED:
            terms = wanted.intersection(word_terms(run, languages))
            out += [(run, terms)] if terms else []
            continue
        folded = run.casefold()
        spans: list[list[int]] = []  # stretches covered by matched bigrams (or a matched lone character)
        for i in range(len(folded)):
            gram = folded[i : i + 2]
            if gram in wanted and (len(gram) == 2 or len(folded) == 1):
                if spans and i <= spans[-1][1]:
                    spans[-1][1] = i + len(gram)
                else:
                    spans.append([i, i + len(gram)])
        out += [(run[a:b], {folded[a:b]}) for a, b in spans]
    return out


# -- hubs: chunks that are mostly links (index and map-of-content notes) ---------------------------------

_WIKILINK = re.compile(r"!?\[\[([^\[\]]*)\]\]")
# a Markdown link's target bare, or in angle brackets where it holds spaces ("[X](<Network routing.md>)")
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\((?:<([^<>\n]*)>|([^()\s]*))\)")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")
# A map of content links to several notes, on most of its lines; how many words go with each link ("- [[X]]
# — the decision and the options") does not matter, nor how a language counts words.
HUB_MIN_NOTES = 3  # notes a chunk links to, at least
HUB_LINE_SHARE = 0.5  # ... on more than this share of its lines (headings and blank lines left out)


def is_hub(text: str) -> bool:
    """Whether a chunk is a map of content: it links to at least `HUB_MIN_NOTES` notes, and more than
    `HUB_LINE_SHARE` of its lines carry a link to one. Decided by its links alone, never by word counts."""
    if text.count("[[") + text.count("](") < HUB_MIN_NOTES:
        return False  # most chunks: too few links to name that many notes (each takes one of these)
    if len(linked_names(text)) < HUB_MIN_NOTES:
        return False
    lines = _content_lines(text)
    linking = [line for line in lines if linked_names(line)]
    return len(linking) > HUB_LINE_SHARE * len(lines)


@functools.lru_cache(maxsize=32768)  # ~100 bytes each beside the text (mostly the one empty frozenset)
def hub_targets(text: str) -> frozenset[str]:
    """The names a map-of-content chunk (`is_hub`) links to; empty for any other chunk. Kept for the texts
    ranked lately: the candidates of a vault's searches come back, and a chunk of the Zettelkasten, linking on
    most of its lines, took 1.3 ms a search to judge again (its text is the key: a changed chunk is new)."""
    return frozenset(linked_names(text)) if is_hub(text) else frozenset()


def linked_names(text: str) -> set[str]:
    """`name_key`-style names (case-folded file names without `.md`) of the notes a chunk links to."""
    return {_name(target) for target in _link_targets(text)} - {""}


def _link_targets(text: str) -> list[str]:
    """The targets of a text's note links, as written (headings, block ids and aliases left off; web
    addresses left out)."""
    if "[[" not in text and "](" not in text:
        return []
    found = [re.split(r"[|#^]", m.group(1), maxsplit=1)[0].strip() for m in _WIKILINK.finditer(text)]
    for match in _MD_LINK.finditer(text):
        target = (match.group(2) or match.group(3) or "").split("#", 1)[0]
        if target and "://" not in target:
            found.append(target.replace("%20", " "))
    return [target for target in found if target]


def _content_lines(text: str) -> list[str]:
    """A chunk's lines as its share of links is counted: headings and blank lines left out."""
    return [line for line in text.splitlines() if line.strip() and not _HEADING_LINE.match(line)]


@functools.lru_cache(maxsize=65536)  # the same note paths and link targets come back search after search
def _name(target: str) -> str:
    name = unicodedata.normalize("NFC", target.strip().rsplit("/", 1)[-1].strip()).casefold()
    return name[:-3] if name.endswith(".md") else name


def note_name(note_path: str) -> str:
    """The name a wikilink uses for the note at `note_path`, folded as `linked_names` folds targets."""
    return _name(note_path)


def hubs_after_their_notes(
    hits: Sequence[T],
    *,
    text: Callable[[T], str],
    note_path: Callable[[T], str],
    rescore: Callable[[T, T], T],
    asked_about: Callable[[T], bool] | None = None,
) -> list[T]:
    """Move each hub chunk (a map of content: `is_hub`) just below the last hit of a note it links to.

    A map of content matches a question about its notes through their names, but the notes hold the answer:
    they go first, and the hub stays in the list after them. `rescore(hub, neighbour)` returns the hub with
    a score no higher than the hit it now follows, so the list stays best first. Hits are best first.
    A hub `asked_about` says the question asks about (its own name answers it, not its links) keeps its
    place.
    """
    ordered = list(hits)
    names = [note_name(note_path(hit)) for hit in ordered]  # moved with their hits: named once a search
    for hub in [hit for hit in hits if hub_targets(text(hit))]:
        at = next(i for i, hit in enumerate(ordered) if hit is hub)
        targets = hub_targets(text(hub)) - {names[at]}
        if not targets:
            continue
        last = max((i for i, name in enumerate(names) if name in targets), default=-1)
        if last > at and not (asked_about is not None and asked_about(hub)):
            ordered.pop(at)
            ordered.insert(last, rescore(hub, ordered[last - 1]))
            names.insert(last, names.pop(at))
    return ordered


# -- pointers: a hub line that says what the note it links to holds -------------------------------------

POINTER_MIN_TERMS = 2  # question terms a pointer line must hold to be followed: one shared word is chance
POINTER_MIN_LINES = 2  # pointer lines a chunk holds, at least, to be a pointer (a "see also" pair counts)
# a line that starts with a note link, after a list marker or a task box: "- [[X]] — what X holds",
# "1. [X](X.md): what X holds"; not "- met [[Gaz]] at the allotment", which tells of the day, not of Gaz
_POINTER_LINE = re.compile(r"^\s*(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX]\]\s+)?(?:\[\[|\[[^\[\]]*\]\()")


@dataclass(frozen=True, slots=True)
class PointerLine:
    """The line of a pointer chunk the question picks out: it links to one note and describes it."""

    target: str  # the link target as written ("Boiler service", "Home/Boiler.md"): the vault resolves it
    matched: int  # distinct question terms the line's description holds


def is_pointer(text: str) -> bool:
    """Whether a chunk is a list of pointers: at least `POINTER_MIN_LINES` of its lines start with a note
    link, and they are more than half of its lines (headings and blank lines left out). A map of content,
    a home note's links, a "see also" list or a reading list; decided by the lines' shape alone."""
    if "[[" not in text and "](" not in text:
        return False  # most chunks: no link at all
    lines = _content_lines(text)
    pointing = sum(1 for line in lines if _POINTER_LINE.match(line))
    return pointing >= POINTER_MIN_LINES and pointing > HUB_LINE_SHARE * len(lines)


def best_pointer_line(
    text: str, wanted: Set[str], analyzer: TextAnalyzer, languages: Sequence[str]
) -> PointerLine | None:
    """The pointer line of a chunk (`is_pointer`) whose description (its words besides the link) holds the
    most of the question's terms (`wanted`), when it links to one note only, holds at least
    `POINTER_MIN_TERMS` of them, and no other pointer line holds as many.

    A map of content describes each note it lists in that note's stead ("- [[Boiler service]] — why the
    heating kept cutting out"), so a question in the description's words is a question about that note.
    A line linking to several notes says nothing about which one answers; a tie between lines neither.
    """
    best: PointerLine | None = None
    tied = False
    asked = set(wanted)
    seen: dict[str, list[tuple[str, set[str]]]] = {}
    for line in text.splitlines():
        if not _POINTER_LINE.match(line):
            continue
        targets = _link_targets(line)
        if len({_name(target) for target in targets}) != 1:
            continue
        held: set[str] = set()
        # the description only: a question in the link's words finds the note by its own title already
        for word in words(_WIKILINK.sub(" ", _MD_LINK.sub(" ", line))):
            if word not in seen:  # map lines repeat their words ("Physio", dates): analyse each once
                seen[word] = _matches(analyzer.word_terms, word, languages, asked)
            for _, terms in seen[word]:
                held |= terms
        if best is None or len(held) > best.matched:
            best, tied = PointerLine(targets[0], len(held)), False
        elif len(held) == best.matched:
            tied = True
    if best is None or tied or best.matched < POINTER_MIN_TERMS:
        return None
    return best


def targets_before_pointers(
    hits: Sequence[T],
    followed: Sequence[tuple[T, T]],
    *,
    same: Callable[[T, T], bool],
    lead: Callable[[T, T], T],
) -> list[T]:
    """Each followed pointer's target put where the pointer stood, the pointer right after it.

    `followed` pairs a pointer hit with the chunk of the note its line leads to (among `hits` further down,
    or brought in from outside them). `lead(target, pointer)` returns the target as it stands in the
    pointer's place (its score, and what led to it), so the list stays best first. Hits are best first.
    """
    ordered = list(hits)
    for pointer, target in followed:
        at = next((i for i, hit in enumerate(ordered) if hit is pointer), None)
        if at is None or any(same(hit, target) for hit in ordered[:at]):
            continue  # the target already ranks above its pointer
        ordered = [hit for hit in ordered if not same(hit, target)]
        ordered.insert(at, lead(target, pointer))
    return ordered


LINK_LIST_MAX_WORDS = 3  # words besides links a chunk of nothing but links may hold ("and", "see also")


def is_link_list(text: str) -> bool:
    """Whether a chunk is mostly links to other notes — a map of content, a home note's links, a "see also"
    or reading list (`is_hub` or `is_pointer`), or nothing but links under a heading ("- [[Honey flapjacks]]
    · [[Honey mustard dressing]]"): it says where an answer is, never the answer itself."""
    if is_pointer(text) or hub_targets(text):
        return True
    if not linked_names(text):
        return False
    rest = _WIKILINK.sub(" ", _MD_LINK.sub(" ", "\n".join(_content_lines(text))))
    return len([word for word in words(rest) if any(c.isalnum() for c in word)]) <= LINK_LIST_MAX_WORDS


def cap_per_note(hits: Sequence[T], note_path: Callable[[T], str], limit: int | None) -> list[T]:
    """At most `limit` hits of one note (its best ones), order unchanged: the slots go to other notes."""
    if limit is None:
        return list(hits)
    seen: dict[str, int] = {}
    kept = []
    for hit in hits:
        path = note_path(hit)
        if seen.get(path, 0) < limit:
            seen[path] = seen.get(path, 0) + 1
            kept.append(hit)
    return kept
