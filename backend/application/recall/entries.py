"""How a block's candidates become its entries, and what became of each (the recall preview's list): shared
by the block of one vault and of several (context.py)."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from backend.application.notes.memory import MemoryHit
from backend.application.search.presenting import ResultView
from backend.application.search.question import Question
from backend.domain.models import ScoredPoint
from backend.domain.ranking.result_rules import WordTerms
from backend.domain.recall.context_packing import (
    OVER_BUDGET,
    PackedContext,
    PackedPassage,
    Passage,
    Reading,
    neutralize,
    pack,
    quote,
    quote_overhead,
)
from backend.domain.recall.excerpts import blocks_of
from backend.domain.text.text_analysis import words

QUOTED = "quoted"
QUOTED_CUT = "quoted, cut to fit"
QUOTED_EXCERPT = "quoted: its lines that match the question"  # context_packing's shares


@dataclass(frozen=True, slots=True)
class Considered:
    """A candidate of the block and what became of it, best first: what the recall preview shows."""

    label: str  # `path:start-end` (as the block would attribute it) or `memory:key`
    path: str
    start_line: int
    end_line: int
    confidence: float
    reason: str  # QUOTED, QUOTED_CUT, BELOW_FLOOR, REPEATED, ... (this module and context_packing)
    chunk_id: str  # "" for a remembered fact
    vault: str = ""  # its vault's name in a block of several vaults

    @property
    def quoted(self) -> bool:
        return self.reason in (QUOTED, QUOTED_CUT, QUOTED_EXCERPT)


def quoted_reason(included: PackedPassage) -> str:
    return QUOTED_CUT if included.cut else QUOTED_EXCERPT if included.excerpted else QUOTED


class QuestionReading:
    """How one question reads the entries of its block (excerpts.py): each block with the question's own
    words it holds, stemmed as the search stemmed them (through the search's `WordTerms`, the memo its
    highlights read: a chat session's names and words are analysed once for every search)."""

    def __init__(self, words_terms: WordTerms, question: Question) -> None:
        self._words_terms = words_terms
        self._languages = question.languages
        self._weights = question.own_terms

    def __call__(self, text: str) -> Reading:
        return Reading(blocks_of(text, self.holds), self._weights)

    @property
    def weights(self) -> Mapping[str, float]:
        """The question's own terms and their weights."""
        return self._weights

    def holds(self, text: str) -> frozenset[str]:
        """The question's own terms `text` holds, stemmed as the search stemmed them."""
        held: set[str] = set()
        for word in words(text):
            held |= self._words_terms(word, self._languages)
        return frozenset(held.intersection(self._weights))


@dataclass(frozen=True, slots=True)
class PackedEntries:
    packed: PackedContext
    nonce: str  # the fence's ("" unquoted)
    vault: str  # the one vault every entry is of, named once in the quote's head ("" otherwise)
    cite: bool = True  # the quote's head asks for its entries to be cited (context_packing.quote)

    def block(self) -> str:
        if not self.nonce or not self.packed.block:
            return self.packed.block
        return quote(self.packed.block, self.nonce, vault=self.vault, cite=self.cite)


def packed_entries(
    candidates: Sequence[ResultView | MemoryHit],
    max_chars: int,
    *,
    quoted: bool,
    vault_of: dict[int, str] | None = None,
    reads: Mapping[int, Callable[[str], Reading]] | None = None,
    cite: bool = True,
) -> PackedEntries:
    """The candidates packed into `max_chars`, fenced room kept when `quoted` (its head asking for
    citations when `cite`).

    `vault_of` (a block of several vaults): id(candidate) -> its vault. A quoted block whose entries are
    all of one vault names it once, in the quote's head; only a block of several names each entry's. A name
    costs the budget its length wherever it stands: measured on personal-dev beside LoCoMo dev
    (scripts/measure/evaluation/vaults.py), naming each entry (" (vault locomo-dev)") left the last, cut entry
    no room in 13 of LoCoMo's 759 blocks, where it held the answer; once in the head, in 4.

    `reads` (a block asked with a floor): id(candidate) -> how its text is read for the question; the
    entries share the budget (context_packing's shares)."""
    share = reads is not None
    if not quoted:
        return PackedEntries(pack(_passages(candidates, vault_of, reads), max_chars, share=share), "", "")
    nonce = secrets.token_hex(8)
    if vault_of is not None:
        # room for the longest name in the head, then: one vault's entries only, or each entry named
        vaults = {vault_of.get(id(c), "") for c in candidates}
        room = max_chars - max((quote_overhead(nonce, vault=v, cite=cite) for v in vaults), default=0)
        # each entry keeps its vault (one path in two vaults is two notes), named only if several are quoted
        unnamed = [
            replace(passage, vault=vault_of.get(id(candidate), ""))
            for passage, candidate in zip(
                _passages(candidates, None, reads, neutral=True), candidates, strict=True
            )
        ]
        plain = pack(unnamed, max(0, room), share=share)
        named = {vault_of.get(id(candidates[p.index]), "") for p in plain.included}
        if len(named) <= 1:
            return PackedEntries(plain, nonce, next(iter(named), ""), cite)
    room = max_chars - quote_overhead(nonce, cite=cite)
    return PackedEntries(
        pack(_passages(candidates, vault_of, reads, neutral=True), max(0, room), share=share), nonce, "", cite
    )


def fence_overhead(*, cite: bool = True) -> int:
    """What a quoted block's fence and its head take of max_chars."""
    return quote_overhead(secrets.token_hex(8), cite=cite)


def least_room(
    candidates: Sequence[ResultView | MemoryHit],
    *,
    quoted: bool,
    vault_of: dict[int, str] | None = None,
    reads: Mapping[int, Callable[[str], Reading]] | None = None,
    most: int = 32_000,
    cite: bool = True,
) -> int | None:
    """The smallest budget (up to `most`) in which the candidates give a block any entry, None when none does:
    what to ask for when a block came back empty because nothing fit (a quoted block's fence alone takes
    over 200 characters)."""

    def fits(max_chars: int) -> bool:
        packed = packed_entries(
            candidates, max_chars, quoted=quoted, vault_of=vault_of, reads=reads, cite=cite
        ).packed
        return bool(packed.included)

    if not candidates or not fits(most):
        return None
    low, high = 0, most  # nothing fits in low, something in high
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def _passages(
    candidates: Sequence[ResultView | MemoryHit],
    vault_of: dict[int, str] | None,
    reads: Mapping[int, Callable[[str], Reading]] | None,
    *,
    neutral: bool = False,
) -> list[Passage]:
    passages = [
        replace(_passage(c, (vault_of or {}).get(id(c), "")), reads=(reads or {}).get(id(c)))
        for c in candidates
    ]
    if neutral:  # quoted: nothing in a note may pass for the fence's tags
        passages = [replace(p, text=neutralize(p.text), title=neutralize(p.title)) for p in passages]
    return passages


def considered_of(
    hits: Sequence[tuple[str, ScoredPoint]],
    candidates: Sequence[ResultView | MemoryHit],
    packed: PackedContext,
    left_out: dict[tuple[str, str], str],
    vault_of: dict[int, str],
) -> list[Considered]:
    """Every candidate, remembered facts first, and what became of it: left out before packing
    (`left_out`), by the packer (its `left_out`), or quoted (as the block labels it, a cut one to its
    last line). `hits`: each with its vault."""
    fate: dict[tuple[str, str], tuple[str, Passage | None]] = {}
    for position, why in packed.left_out.items():
        fate[_key(candidates[position], vault_of)] = (why, None)
    for included in packed.included:
        fate[_key(candidates[included.index], vault_of)] = (quoted_reason(included), included.passage)
    out: list[Considered] = []
    for candidate in candidates:
        if isinstance(candidate, MemoryHit):
            why, _ = fate.get(_key(candidate, vault_of), (OVER_BUDGET, None))
            vault = vault_of.get(id(candidate), "")
            out.append(Considered(f"memory:{candidate.key}", candidate.source, 0, 0, 0.0, why, "", vault))
    for vault, hit in hits:
        p = hit.payload
        why, passage = fate.get((vault, hit.id), (left_out.get((vault, hit.id), OVER_BUDGET), None))
        start, end = (
            (passage.start_line, passage.end_line)
            if passage is not None
            else (payload_line(p, "start"), payload_line(p, "end"))
        )
        label = passage.label if passage is not None else f"{payload_path(p)}:{start}-{end}"
        out.append(Considered(label, payload_path(p), start, end, hit.confidence or 0.0, why, hit.id, vault))
    return out


def _key(candidate: ResultView | MemoryHit, vault_of: dict[int, str]) -> tuple[str, str]:
    vault = vault_of.get(id(candidate), "")
    return vault, (f"memory:{candidate.key}" if isinstance(candidate, MemoryHit) else candidate.chunk_id)


def _passage(candidate: ResultView | MemoryHit, vault: str = "") -> Passage:
    # the entry names its vault (several vaults) so an agent tells two notes of one path apart
    where = f" (vault {vault})" if vault else ""
    if isinstance(candidate, MemoryHit):
        return Passage(
            path=candidate.source,
            start_line=0,
            end_line=0,
            title=f"from {candidate.source}{where}",
            text=candidate.value,
            memory_key=candidate.key,
            vault=vault,
        )
    return Passage(
        path=candidate.note_path,
        start_line=candidate.start_line,
        end_line=candidate.end_line,
        title=_title(candidate) + where,
        text=candidate.content,
        vault=vault,
        line_map=candidate.line_map,
    )


def _title(view: ResultView) -> str:
    """The entry's title; a note saved from elsewhere says so, so an agent never takes it for the
    person's own words."""
    title = view.heading_context or view.note_title
    return f"{title} (saved from {view.saved_from})" if view.saved_from else title


def payload_path(payload: dict[str, object]) -> str:
    return str(payload.get("note_path", ""))


def payload_line(payload: dict[str, object], end: str) -> int:
    return int(str(payload.get(f"{end}_line", 0)))
