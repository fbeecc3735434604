"""Search use case: one query -> dense and/or keyword vectors -> one fused store query -> hits, in named
stages (`SearchService`): the mode and its warnings are in modes.py, its ranking rules in ranking.py."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field, replace

from backend.application.ports import Embedder
from backend.application.search import stage_clock as stage
from backend.application.search.hit_confidence import (
    ChunkCounter,
    Sides,
    SideScores,
    evidence_of,
    hit_terms,
    read_sides,
    stop_term_indices,
    with_confidence,
)
from backend.application.search.modes import NO_EMBEDDER, ModePlan, index_plan, pending_plan
from backend.application.search.named_notes import named_hits
from backend.application.search.narrowing import Narrowing, narrowing
from backend.application.search.options import SearchOptions
from backend.application.search.pointers import TargetAsk, follow_pointers
from backend.application.search.question import Question, QuestionReader
from backend.application.search.ranking import best_first, hub_asked_about, own_words_first, put_first, rank
from backend.application.search.recall_gate import RecallGate
from backend.application.search.stage_clock import StageClock
from backend.application.search.stages import Asked, Clues, QueryVectors, StoreAsk
from backend.application.serving.live_index import LiveIndex
from backend.application.serving.note_graph import RELATED_LIMIT, RelatedNote, Relating
from backend.application.serving.serving_index import ServingIndex
from backend.domain.models import PointFilter, ScoredPoint, SearchMode, SparseVector
from backend.domain.notes.vault_paths import safe_filter
from backend.domain.periods.time_intent import TimeSpan
from backend.domain.ranking import fusion
from backend.domain.ranking.confidence import Evidence
from backend.domain.ranking.filter_check import unmatched_filters
from backend.domain.ranking.result_rules import WordTerms
from backend.domain.text.sparse import SparseEncoder
from backend.domain.text.text_analysis import TextAnalyzer

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class SearchOutcome:
    hits: list[ScoredPoint]
    total_hits: int
    mode: SearchMode  # the mode actually used (keyword when dense was unavailable)
    warnings: list[str] = field(default_factory=list)
    related: list[RelatedNote] = field(default_factory=list)
    relating: Relating | None = None  # the links `related` was found from: a merge's kept results' in memory
    embed_ms: float = 0.0  # time spent embedding the query
    store_ms: float = 0.0  # time spent in the store query
    time_intent: TimeSpan | None = None  # the span of days the query named (its notes were boosted)
    # the question as the search read it, and the one its hits were judged by (the focus); None: made by hand
    question: Question | None = None
    judged: Question | None = None
    evidence: list[Evidence] = field(default_factory=list)  # what each hit's confidence was computed from
    # filters that match no indexed note (an unknown folder, tag or path): said, but the answer is whole
    notices: list[str] = field(default_factory=list)
    # where the search's time went, stage by stage (its caller laps on: presenting, serialisation)
    clock: StageClock = field(default_factory=StageClock)
    vectors: QueryVectors | None = None  # the query's, as the store was asked (the explanation reuses them)
    sides: Sides | None = None  # both sides' own scores, best first, the hits were judged by
    named: bool = False  # the question is the name of one of its notes (first among the hits)

    @property
    def degraded(self) -> bool:
        return bool(self.warnings)

    @property
    def asked(self) -> Question:
        """The question as the search read it (every outcome of `SearchService.search` has one)."""
        if self.question is None:
            raise ValueError("this outcome was not made by a search: it has no question")
        return self.question

    @property
    def judged_by(self) -> Question:
        """The question the hits were judged by: the conversation's latest message, else the question."""
        return self.judged or self.asked

    @property
    def narrowed(self) -> Narrowing:
        """What the vault holds of what the question narrows to (narrowing.py; vault_merge orders by it)."""
        return narrowing(self.judged_by, self.hits, self.evidence, named=self.named)


class SearchService:
    """A search in named stages: decide the mode and its warnings (modes.py), find what the query names
    (`_clues`), encode (`_encode`), retrieve (`_retrieve`), apply the ranking rules (`_rank`,
    ranking.py), shape the answer (`_shape`), and judge each hit's confidence (`_confident`)."""

    def __init__(
        self,
        *,
        embedder: Embedder | None,
        encoder: SparseEncoder,
        index: ServingIndex,
        options: SearchOptions | None = None,
        gate: RecallGate | None = None,
    ) -> None:
        self._embedder = embedder
        self.gate = gate or RecallGate()  # the calibration the confidences are weighed with
        self._encoder = encoder
        self.judge = encoder.content_only()  # confidence counts the question's own words, not its stop words
        self._stops = stop_term_indices(encoder.analyzer)
        self._words = WordTerms(encoder.analyzer)
        self._index = index
        self.options = options or SearchOptions()
        self._reader = QuestionReader(encoder, self.options)
        self.chunks = ChunkCounter()

    @property
    def analyzer(self) -> TextAnalyzer:
        """How queries and notes become keyword terms (highlights follow the same rules)."""
        return self._encoder.analyzer

    @property
    def encoder(self) -> SparseEncoder:  # the explain data replays the named notes' query with it
        return self._encoder

    @property
    def word_terms(self) -> WordTerms:
        """The analyzer's terms of each written word, remembered across searches (what highlights read)."""
        return self._words

    def search(
        self,
        query: str,
        *,
        top_k: int = 5,
        mode: SearchMode = SearchMode.HYBRID,
        point_filter: PointFilter | None = None,
        candidates: int | None = None,
        include_related: bool = False,
        related_limit: int = RELATED_LIMIT,
        threshold: float | None = None,
        max_chunks_per_note: int | None = None,
        focus: str | None = None,
    ) -> SearchOutcome:
        """`candidates` widens the fused list (evaluation fills 10 notes); `max_chunks_per_note` caps a note's
        chunks (None: the configured default). `focus`: the part of `query` hits' confidence judges them by
        (a conversation's latest message, `query` also holding earlier ones to rank by); None: all of `query`.
        `threshold` is on the mode's own score scale (RRF for hybrid, raw similarity or BM25 otherwise).
        Paths and folders of `point_filter` must be vault-relative (SecurityViolationError otherwise)."""
        mode = SearchMode(mode)  # "hybrid" from a script is the member the stages compare by identity
        given = safe_filter(point_filter)
        clock = StageClock()  # started as the search is
        self._index.check_searchable()
        plan = index_plan(self._index, mode)
        with self._index.serving() as live:  # a rebuild that switches meanwhile waits for this search
            question = self.question(query, live)
            asked = Asked(
                question=question,
                top_k=top_k,
                mode=mode,
                point_filter=live.graph.tag_filter(given),
                given_filter=given,
                candidates=candidates,
                include_related=include_related,
                related_limit=related_limit,
                threshold=threshold,
                per_note=max_chunks_per_note or self.options.max_chunks_per_note,
                clock=clock,
            )
            clock.lap(stage.ANALYSIS)
            outcome, sides = self._search(live, asked, plan)
            judged = question
            if focus is not None and focus != query:
                judged = self.question(focus, live)
                asked.clock.lap(stage.ANALYSIS)
                if outcome.hits:
                    # judged by what is asked now: the earlier turns ranked, but "thanks!" after a vault
                    # question is not that question again, so its hits' evidence is the latest message's own
                    sides = self._focus_sides(live, asked, judged, dense=sides.dense is not None)
                    asked.clock.lap(stage.STORE_SIDES)
                    outcome = replace(outcome, time_intent=judged.span)
            outcome = replace(outcome, question=question, judged=judged)
            return self._confident(live, outcome, sides, judged)

    def question(self, text: str, live: LiveIndex) -> Question:
        """`text` read once for a search of this vault (its tags as the serving generation holds them)."""
        return self._reader.read(text, live.graph.vocabulary())

    def query_vectors(self, live: LiveIndex, question: Question, mode: SearchMode) -> QueryVectors:
        """The vectors a search in `mode` asks the store with (no dense one when it cannot be made)."""
        return self._encode(question, ModePlan(mode, ()), StageClock())[0]

    def _search(self, live: LiveIndex, asked: Asked, plan: ModePlan) -> tuple[SearchOutcome, Sides]:
        """The stages in order; also both sides' own scores, which the hits' confidence is computed from."""
        clock = asked.clock
        clues = self._clues(live, asked)
        started = time.perf_counter()
        plan = pending_plan(plan, self._index)
        vectors, plan = self._encode(asked.question, plan, clock)
        if plan.mode is SearchMode.KEYWORD and vectors.keywords is None:
            return self._named_only(live, asked, plan, clues), Sides(None, None)
        embed_ms = (time.perf_counter() - started) * 1000
        started = time.perf_counter()
        ask = self._store_ask(asked, vectors, plan.mode)
        clock.lap(stage.ANALYSIS)
        points, sides = self._retrieve(live, ask, clock)
        store_ms = (time.perf_counter() - started) * 1000 + clues.store_ms
        matched = self._rank(live, asked, clues, points, vectors, own_scale=plan.mode is SearchMode.KEYWORD)
        if sides is None:  # the fusion did not read both sides' own scores: read them for the confidence
            sides = self._sides(live, asked, ask, vectors)
            clock.lap(stage.STORE_SIDES)
        head = SearchOutcome(
            [],
            0,
            plan.mode,
            list(plan.warnings),
            embed_ms=embed_ms,
            store_ms=store_ms,
            time_intent=clues.span,
            clock=clock,
            vectors=vectors,
            named=bool(clues.named),
        )
        return self._shape(live, asked, matched, head), sides

    def _clues(self, live: LiveIndex, asked: Asked) -> Clues:
        started = time.perf_counter()
        named = named_hits(live, self._encoder, asked.question, asked.point_filter, asked.clock)
        return Clues(asked.question.span, named, (time.perf_counter() - started) * 1000)

    def _encode(self, question: Question, plan: ModePlan, clock: StageClock) -> tuple[QueryVectors, ModePlan]:
        """The query's dense vector (unless keyword mode; keyword search answers when it cannot be made) and
        its keyword vector (unless dense mode), with the vault's tags it names in words."""
        dense: list[float] | None = None
        if plan.mode is not SearchMode.KEYWORD:
            clock.lap(stage.ANALYSIS)
            dense, reason = self._embed_query(question.text)
            clock.lap(stage.EMBEDDING)
            if dense is None:
                plan = plan.without_dense(reason)
        sparse = None
        if plan.mode is not SearchMode.DENSE:
            sparse = self._encoder.encode_terms(question.keyword_terms)
        return QueryVectors(dense, sparse), plan

    def _store_ask(self, asked: Asked, vectors: QueryVectors, mode: SearchMode) -> StoreAsk:
        return StoreAsk(
            dense=vectors.dense,
            sparse=vectors.keywords,
            limit=max(asked.size, self.options.prefetch_limit),
            point_filter=asked.store_filter,
            foreign=self.foreign_weights(asked.question),
            hybrid=mode is SearchMode.HYBRID,
        )

    def _retrieve(
        self, live: LiveIndex, ask: StoreAsk, clock: StageClock
    ) -> tuple[list[ScoredPoint], Sides | None]:
        """The fused candidates, and both sides' raw scores where the fusion read them: RRF or DBSF inside
        one store query; adaptive and score fusion (which the engines do not offer) over both sides' ids and
        scores, fused by the domain's rule so both engines rank alike. A hybrid question without keyword
        terms (stop words only) is fused too, with an empty keyword side, so its scores are on the same 0..1
        scale as any other hybrid answer."""
        if self.options.fusion in ("adaptive", "score") and ask.hybrid and ask.dense is not None:
            return self._fused_here(live, ask, ask.dense, clock)
        points = live.store.query(
            dense=ask.dense,
            sparse=ask.sparse,
            limit=ask.limit,
            prefetch_limit=ask.limit,  # never below the configured depth: limit includes it
            point_filter=ask.point_filter,
            rrf_k=self.options.rrf_k,
            rrf_weights=ask.foreign or self.options.rrf_weights,
            fusion=self.options.fusion,
        )
        clock.lap(stage.STORE_QUERY)
        # keyword only: the points' scores are that side's own; otherwise they are fused
        return points, Sides(None, SideScores.of_points(points, ask.limit)) if ask.dense is None else None

    def _fused_here(
        self, live: LiveIndex, ask: StoreAsk, dense: list[float], clock: StageClock
    ) -> tuple[list[ScoredPoint], Sides]:
        """Adaptive or score fusion over both sides' ids and scores, then the payloads of the candidates kept
        (reading them for both whole sides cost ~18% of p95)."""
        options, limit = self.options, ask.limit
        keyword = ask.sparse if ask.sparse is not None else SparseVector((), ())
        sides = live.store.rank_sides(dense=dense, sparse=keyword, limit=limit, point_filter=ask.point_filter)
        clock.lap(stage.STORE_SIDES)
        raw = Sides(SideScores.of(sides[0], limit), SideScores.of(sides[1], limit))
        if options.fusion == "adaptive":
            fused = fusion.adaptive(sides[0], sides[1], options.adaptive, fixed=ask.foreign)
        else:
            fused = fusion.top_scaled(sides, ask.foreign or options.rrf_weights)
        ranked = sorted(fused.items(), key=lambda item: -item[1])
        # payloads only for what can be returned, and the ties of the last place (ties go by note and chunk)
        cut = min(len(ranked), limit)
        while cut < len(ranked) and ranked[cut][1] == ranked[limit - 1][1]:
            cut += 1
        clock.lap(stage.FUSION)
        payloads = live.store.payloads([point_id for point_id, _ in ranked[:cut]])
        clock.lap(stage.STORE_PAYLOADS)
        points = [
            ScoredPoint(id=str(point_id), score=score, payload=payloads[point_id])
            for point_id, score in ranked[:cut]
            if point_id in payloads  # deleted meanwhile by the writer
        ]
        kept = sorted(points, key=best_first)[:limit]
        clock.lap(stage.FUSION)
        return kept, raw

    def _follow_pointers(
        self, live: LiveIndex, asked: Asked, vectors: QueryVectors, points: list[ScoredPoint]
    ) -> list[ScoredPoint]:
        """Pointers among the best candidates give their place to the notes they describe (`pointers`)."""
        return follow_pointers(
            live,
            points,
            question=asked.question,
            analyzer=self.analyzer,
            clock=asked.clock,
            target_ask=TargetAsk(
                dense=vectors.dense,
                sparse=vectors.keywords,
                point_filter=asked.store_filter,
                rrf_k=self.options.rrf_k,
                rrf_weights=self.options.rrf_weights,
            ),
        )

    def _sides(self, live: LiveIndex, asked: Asked, ask: StoreAsk, vectors: QueryVectors) -> Sides:
        """Both sides' own scores, read apart for a fusion that did not read them (RRF, DBSF)."""
        keywords = vectors.sparse
        if keywords is None:
            keywords = self._encoder.encode_terms(asked.question.terms)
        return read_sides(live, vectors.dense, keywords, ask.limit, asked.point_filter)

    def _rank(
        self,
        live: LiveIndex,
        asked: Asked,
        clues: Clues,
        points: list[ScoredPoint],
        vectors: QueryVectors,
        *,
        own_scale: bool,
    ) -> list[ScoredPoint]:
        """The ranking rules (ranking.py) over the candidates, pointers followed, the named notes first.
        `own_scale`: the scores are the mode's own keyword scores (a named note keeps its own when higher)."""
        boost = (clues.span, self.options.time_boost) if clues.span is not None else None
        saved = own_words_first(asked.question, self.options.saved_folders)
        fused = self._follow_pointers(live, asked, vectors, rank(clues.named, points, boost, saved))
        about = hub_asked_about(asked.question, self._words)
        ranked = put_first(clues.named, fused, asked.threshold, asked.per_note, about, own_scale=own_scale)
        asked.clock.lap(stage.RANKING)
        return ranked

    def _shape(
        self, live: LiveIndex, asked: Asked, matched: list[ScoredPoint], head: SearchOutcome
    ) -> SearchOutcome:
        """The first `size` hits, the notes they link to when asked, and what the filters matched nowhere."""
        hits = matched[: asked.size]
        notices = _notices(live, asked.given_filter, answered=bool(hits))
        asked.clock.lap(stage.RANKING)
        if asked.include_related and hits:
            paths = list(dict.fromkeys(str(h.payload.get("note_path", "")) for h in hits[: asked.top_k]))
            relating = live.graph.relating(paths)
            head = replace(head, related=relating.of(paths, asked.related_limit), relating=relating)
            asked.clock.lap(stage.RELATED)
        return replace(head, hits=hits, total_hits=len(matched), notices=notices)

    def _named_only(self, live: LiveIndex, asked: Asked, plan: ModePlan, clues: Clues) -> SearchOutcome:
        """Keyword mode without a keyword term (stop words only): only the notes the query names."""
        return SearchOutcome(
            hits=clues.named[: asked.top_k],
            total_hits=len(clues.named),
            mode=plan.mode,
            warnings=list(plan.warnings),
            time_intent=clues.span,
            notices=_notices(live, asked.given_filter, answered=bool(clues.named)),
            clock=asked.clock,
            named=bool(clues.named),
        )

    def _focus_sides(self, live: LiveIndex, asked: Asked, focus: Question, *, dense: bool) -> Sides:
        """Both sides' own scores for `focus` alone (its embedding only when the hits were judged by one)."""
        vector = self._embed_query(focus.text)[0] if dense else None
        limit = max(asked.size, self.options.prefetch_limit)
        return read_sides(live, vector, self._encoder.encode_terms(focus.terms), limit, asked.store_filter)

    def _confident(
        self, live: LiveIndex, outcome: SearchOutcome, sides: Sides, question: Question
    ) -> SearchOutcome:
        """The outcome with each hit's confidence, and what it was computed from (`question`: judged by)."""
        hits, clock = outcome.hits, outcome.clock
        judged = self.judge.encode_terms(question.own_terms)
        stored = hit_terms(live, hits, self._stops) if hits and judged.indices else None
        clock.lap(stage.STORE_TERMS)
        evidence = evidence_of(
            hits,
            sides=sides,
            query=judged,
            encoder=self.judge,
            stored=stored,
            tags=question.judged_tags,
            span=outcome.time_intent,
        )
        chunks = self.chunks.count(live) if hits else 0
        calibration = self.gate.calibration(self.serving_model(), dense=sides.dense is not None)
        hits = with_confidence(hits, evidence, calibration, chunks=chunks)
        clock.lap(stage.CONFIDENCE)
        return replace(outcome, hits=hits, evidence=evidence, sides=sides)

    def serving_model(self) -> str | None:
        """The model whose cosines the dense scores are (the serving index's; None without one)."""
        health = self._index.serving_health
        return health.model_name if health is not None else None

    def judged_by_meaning(self, outcome: SearchOutcome) -> bool:
        """Whether the hits' confidences weigh a dense side with a model's own calibration: only such
        confidences can be compared between notes (a note cannot raise them by repeating words)."""
        dense = outcome.sides is not None and outcome.sides.dense is not None
        return self.gate.calibration(self.serving_model(), dense=dense).uses_dense

    def foreign_weights(self, question: Question) -> tuple[float, float] | None:
        """The fusion weights for a question in another language than the vault's (an English question
        about German notes shares only names and numbers with them, and the keyword side would rank by
        those), else None."""
        if question.foreign:
            return self.options.cross_language_weights
        return None

    def _embed_query(self, query: str) -> tuple[list[float] | None, str]:
        health = self._index.serving_health  # the model of the index's vectors (an outdated one's own)
        if self._embedder is None or health is None:
            return None, NO_EMBEDDER
        if not health.worth_trying():  # known down: answer now rather than wait through its retries
            return None, health.describe()
        vector = health.query(query)
        if vector is None:
            log.warning("query embedding failed: %s", health.describe())
            return None, health.describe()
        return vector, ""


def _notices(live: LiveIndex, given: PointFilter | None, *, answered: bool) -> list[str]:
    """What the filter matched nowhere (without one, no copy of every note's record: 0.5 ms at 53k notes)."""
    if given is None or given.is_empty:
        return []
    return unmatched_filters(given, live.graph.records(), answered=answered)
