"""Evaluation use case: run judged queries through search and score note-level rankings."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence, Set
from dataclasses import asdict, dataclass, field
from statistics import fmean

from backend.application.recall.context import ContextQuery, ContextService
from backend.application.search.service import SearchService
from backend.domain.metrics import dedupe_notes, hit_at, mrr_at, ndcg_at, recall_at
from backend.domain.models import ScoredPoint, SearchMode
from backend.domain.ranking.confidence import RECALL_FLOOR
from backend.domain.ranking.result_rules import is_link_list
from backend.domain.recall.recall_budget import PLUGIN_RECALL

CANDIDATE_CHUNKS = 100  # enough chunks to fill the top 10 notes after deduplication
# What the OpenClaw recall asks /context for each turn: its top 3 chunks, those of them at or above the floor
RECALL_ENTRIES = 3


@dataclass(frozen=True, slots=True)
class JudgedQuery:
    id: str
    text: str
    kind: str = ""  # the set's own type of question (time, hub, none ...); "" when it gives none


@dataclass(frozen=True, slots=True)
class QuotedCount:
    """What the recall block quoted for a set's answerable questions (entries, not questions): how many
    entries, how many of them a relevant note, how many a note judged not relevant (the rest are unjudged),
    how many questions got an entry that is not relevant, and how many entries were lists of links (a map of
    content, a home note, a "see also" list) — which should never be quoted: the note they point to, or
    nothing. `link_lists` counts the unanswerable questions' entries too."""

    entries: int = 0
    relevant: int = 0
    judged_not: int = 0
    questions_off: int = 0
    link_lists: int = 0

    def __add__(self, other: QuotedCount) -> QuotedCount:
        return QuotedCount(
            self.entries + other.entries,
            self.relevant + other.relevant,
            self.judged_not + other.judged_not,
            self.questions_off + other.questions_off,
            self.link_lists + other.link_lists,
        )


@dataclass(frozen=True, slots=True)
class KindScores:
    """One kind of question's figures. Answerable questions (judged relevant notes) are ranked and recalled;
    the others (the vault cannot answer them) are only asked whether the recall gave them anything."""

    kind: str
    queries: int
    ndcg_10: float  # answerable questions only
    hit_1: float  # the first result is a relevant note
    answerable: int
    recalled: int  # answerable questions the recall gave a relevant entry
    unanswerable: int
    given: int  # unanswerable questions the recall gave anything
    relevant_3: float = 0.0  # judged-relevant notes among the first 3 (answerable questions)
    quoted: QuotedCount = field(default_factory=lambda: QuotedCount())


@dataclass(frozen=True, slots=True)
class ModeScores:
    mode: SearchMode
    queries: int
    ndcg_10: float
    recall_10: float
    hit_3: float
    mrr_10: float
    degraded: int  # queries answered by keyword only because dense was unavailable
    # the per-turn recall (RECALL_ENTRIES at or above RECALL_FLOOR): answerable questions given a relevant
    # entry, and questions the vault cannot answer (no judged note) given anything
    recalled: int = 0
    unanswerable: int = 0
    unanswerable_given: int = 0
    kinds: list[KindScores] = field(default_factory=list)
    quoted: QuotedCount = field(default_factory=lambda: QuotedCount())


@dataclass(frozen=True, slots=True)
class _Asked:
    kind: str
    judged: bool
    ndcg: float = 0.0
    recall: float = 0.0
    hit_1: float = 0.0
    hit_3: float = 0.0
    mrr: float = 0.0
    relevant_3: int = 0
    recalled: bool = False  # judged: a relevant entry quoted; else: anything quoted
    quoted: QuotedCount = field(default_factory=lambda: QuotedCount())


def evaluate(
    search: SearchService,
    queries: Sequence[JudgedQuery],
    qrels: Mapping[str, Mapping[str, int]],
    mode: SearchMode,
    *,
    on_query: Callable[[], None] | None = None,
    context: ContextService | None = None,
    nonrel: Mapping[str, Set[str]] | None = None,
) -> ModeScores:
    """Note-level ranking scores over the judged questions, and what the per-turn recall gives every
    question, judged or not (a question without judgments is one the vault cannot answer).

    With `context`, the recall is what the agent receives: the /context block asked as OpenClaw's recall asks
    it (the plugin's defaults, the question as the latest message), each quoted entry judged (`nonrel`: the
    notes judged not relevant to each question, where a set lists them); without it, the first
    RECALL_ENTRIES hits at or above the floor stand in for the block."""
    asked: list[_Asked] = []
    degraded = 0
    for query in queries:
        outcome = search.search(query.text, top_k=10, mode=mode, candidates=CANDIDATE_CHUNKS)
        degraded += outcome.degraded
        relevant = qrels.get(query.id) or {}
        quoted = (
            block_entries(context, query.text, mode)
            if context is not None
            else [(note, False) for note in recalled_notes(outcome.hits)]
        )
        count = _judge_quotes(quoted, relevant, (nonrel or {}).get(query.id, frozenset()))
        if relevant:
            ranking = dedupe_notes([hit.payload["note_path"] for hit in outcome.hits])
            asked.append(
                _Asked(
                    query.kind,
                    True,
                    ndcg=ndcg_at(ranking, relevant, 10),
                    recall=recall_at(ranking, relevant, 10),
                    hit_1=hit_at(ranking, relevant, 1),
                    hit_3=hit_at(ranking, relevant, 3),
                    mrr=mrr_at(ranking, relevant, 10),
                    relevant_3=sum(1 for note in ranking[:3] if relevant.get(note, 0) > 0),
                    recalled=count.relevant > 0,
                    quoted=count,
                )
            )
        else:
            asked.append(
                _Asked(
                    query.kind, False, recalled=bool(quoted), quoted=QuotedCount(link_lists=count.link_lists)
                )
            )
        if on_query:
            on_query()
    judged = [a for a in asked if a.judged]
    unjudged = [a for a in asked if not a.judged]
    quotes = _quotes(asked)
    if not judged:
        return ModeScores(
            mode, 0, 0.0, 0.0, 0.0, 0.0, degraded, 0, len(unjudged), _count(unjudged), quoted=quotes
        )
    return ModeScores(
        mode,
        len(judged),
        fmean(a.ndcg for a in judged),
        fmean(a.recall for a in judged),
        fmean(a.hit_3 for a in judged),
        fmean(a.mrr for a in judged),
        degraded,
        recalled=_count(judged),
        unanswerable=len(unjudged),
        unanswerable_given=_count(unjudged),
        kinds=_by_kind(asked),
        quoted=quotes,
    )


def block_entries(context: ContextService, question: str, mode: SearchMode) -> list[tuple[str, bool]]:
    """The notes the recall block quotes for `question`, asked as the plugin's recall asks (its defaults),
    each with whether the quoted chunk is a list of links."""
    result = context.build(
        ContextQuery(
            messages=[("user", question)],
            max_chars=PLUGIN_RECALL.max_chars,
            max_chunks=PLUGIN_RECALL.max_entries,
            min_confidence=PLUGIN_RECALL.floor,
            mode=mode,
            quoted=True,
        )
    )
    return [
        (view.note_path, is_link_list(view.content))
        for source in result.sources
        if (view := source.result) is not None
    ]


def _judge_quotes(
    quoted: Sequence[tuple[str, bool]], relevant: Mapping[str, int], judged_not: Set[str]
) -> QuotedCount:
    good = sum(1 for note, _ in quoted if relevant.get(note, 0) > 0)
    return QuotedCount(
        entries=len(quoted),
        relevant=good,
        judged_not=sum(1 for note, _ in quoted if note in judged_not and relevant.get(note, 0) <= 0),
        questions_off=int(good < len(quoted)),
        link_lists=sum(1 for _, links in quoted if links),
    )


def _quotes(asked: Sequence[_Asked]) -> QuotedCount:
    total = QuotedCount()
    for a in asked:
        total += a.quoted
    return total


def recalled_notes(hits: Sequence[ScoredPoint]) -> list[str]:
    """The notes the per-turn recall would quote from a search's hits: of the first RECALL_ENTRIES, those
    whose confidence reaches RECALL_FLOOR."""
    return [
        str(hit.payload.get("note_path", ""))
        for hit in hits[:RECALL_ENTRIES]
        if (hit.confidence or 0.0) >= RECALL_FLOOR
    ]


def _count(asked: Sequence[_Asked]) -> int:
    return sum(a.recalled for a in asked)


def _by_kind(asked: Sequence[_Asked]) -> list[KindScores]:
    """A row per kind of question, in the order the kinds first appear; none when the set names no kinds."""
    kinds = list(dict.fromkeys(a.kind for a in asked))
    if kinds == [""]:
        return []
    rows = []
    for kind in kinds:
        mine = [a for a in asked if a.kind == kind]
        judged = [a for a in mine if a.judged]
        unjudged = [a for a in mine if not a.judged]
        rows.append(
            KindScores(
                kind=kind or "-",
                queries=len(mine),
                ndcg_10=fmean(a.ndcg for a in judged) if judged else 0.0,
                hit_1=fmean(a.hit_1 for a in judged) if judged else 0.0,
                answerable=len(judged),
                recalled=_count(judged),
                unanswerable=len(unjudged),
                given=_count(unjudged),
                relevant_3=fmean(a.relevant_3 for a in judged) if judged else 0.0,
                quoted=_quotes(mine),
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class SetReport:
    """One judged set's scores, a row per mode, with the seconds each mode took."""

    name: str
    rows: list[tuple[ModeScores, float]]


def evaluate_modes(
    name: str,
    search: SearchService,
    queries: Sequence[JudgedQuery],
    qrels: Mapping[str, Mapping[str, int]],
    modes: Sequence[SearchMode],
    on_query: Callable[[], None] | None = None,
    *,
    context: ContextService | None = None,
    nonrel: Mapping[str, Set[str]] | None = None,
) -> SetReport:
    rows = []
    for mode in modes:
        started = time.perf_counter()
        scores = evaluate(search, queries, qrels, mode, on_query=on_query, context=context, nonrel=nonrel)
        rows.append((scores, time.perf_counter() - started))
    return SetReport(name, rows)


def scores_json(reports: Sequence[SetReport]) -> list[dict[str, object]]:
    """A row per set and mode: the ModeScores fields, `set`, and `seconds`."""
    return [
        {"set": report.name, **asdict(s), "mode": s.mode.value, "seconds": seconds}
        for report in reports
        for s, seconds in report.rows
    ]


def scores_table(reports: Sequence[SetReport]) -> str:
    """Per set, a line per mode; then, with hybrid and both single modes scored, hybrid's margin over the
    better single mode (what the fusion defaults are chosen by: the worst set's margin); then, for a set whose
    questions have kinds, a line per kind (hybrid, else the first mode run). `recalled`: answerable
    questions the recall block gives a relevant entry; `none given`: questions the vault cannot answer
    given anything; `quoted ok`: the block's entries (answerable questions) that are relevant, of all it
    quoted; `off`: answerable questions given an entry that is not relevant; `links`: entries that are lists
    of links (maps of content); `rel@3`: judged-relevant notes among the first 3."""
    lines: list[str] = []
    margins: list[float] = []
    for report in reports:
        lines.append(f"{report.name}")
        lines.append(
            f"  {'mode':<8} {'queries':>7} {'nDCG@10':>8} {'recall@10':>9} {'hit@3':>6} {'MRR@10':>7} "
            f"{'recalled':>9} {'none given':>10} {'quoted ok':>9} {'off':>7} {'links':>5}"
        )
        by_mode = {s.mode: s for s, _ in report.rows}
        for s, seconds in report.rows:
            qps = (s.queries + s.unanswerable) / seconds if seconds else 0.0
            q = s.quoted
            lines.append(
                f"  {s.mode.value:<8} {s.queries:>7} {s.ndcg_10:>8.3f} {s.recall_10:>9.3f} "
                f"{s.hit_3:>6.3f} {s.mrr_10:>7.3f} {_share(s.recalled, s.queries):>9} "
                f"{_share(s.unanswerable_given, s.unanswerable):>10} {_share(q.relevant, q.entries):>9} "
                f"{_share(q.questions_off, s.queries):>7} {q.link_lists:>5}   {qps:.1f} queries/s"
            )
            if q.judged_not:
                lines.append(f"  ({s.mode.value}: {q.judged_not} quoted entries judged not relevant)")
            if s.degraded:
                lines.append(f"  warning: {s.degraded} {s.mode.value} queries fell back to keyword search")
        if all(mode in by_mode for mode in SearchMode):
            best = max(by_mode[SearchMode.DENSE].ndcg_10, by_mode[SearchMode.KEYWORD].ndcg_10)
            margins.append(by_mode[SearchMode.HYBRID].ndcg_10 - best)
            lines.append(f"  hybrid - best single mode (nDCG@10): {margins[-1]:+.3f}")
        shown = by_mode.get(SearchMode.HYBRID) or (report.rows[0][0] if report.rows else None)
        if shown is not None and shown.kinds:
            lines.append(f"  by kind ({shown.mode.value}):")
            lines.append(
                f"    {'kind':<10} {'queries':>7} {'nDCG@10':>8} {'first ok':>8} {'rel@3':>5} "
                f"{'recalled':>9} {'none given':>10} {'quoted ok':>9} {'off':>7} {'links':>5}"
            )
            for k in shown.kinds:
                answered = k.answerable > 0
                lines.append(
                    f"    {k.kind:<10} {k.queries:>7} "
                    f"{f'{k.ndcg_10:.3f}' if answered else '-':>8} "
                    f"{f'{k.hit_1 * k.answerable:.0f}/{k.answerable}' if answered else '-':>8} "
                    f"{f'{k.relevant_3:.2f}' if answered else '-':>5} "
                    f"{_share(k.recalled, k.answerable):>9} {_share(k.given, k.unanswerable):>10} "
                    f"{_share(k.quoted.relevant, k.quoted.entries):>9} "
                    f"{_share(k.quoted.questions_off, k.answerable):>7} {k.quoted.link_lists:>5}"
                )
    if len(margins) > 1:
        lines.append(f"worst set's margin of hybrid over its best single mode: {min(margins):+.3f}")
    return "\n".join(lines)


def _share(count: int, total: int) -> str:
    return f"{count}/{total}" if total else "-"
