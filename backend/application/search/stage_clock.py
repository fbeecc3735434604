"""Where one search's time went, stage by stage: what `explain` answers, the Server-Timing header says and
`make bench` tabulates (scripts/measure/bench/speed.py).

A clock is one running mark: each `lap` gives the time since the previous mark to a named stage and moves the
mark, so the stages of a search add up to its whole time (but for what it waited on other vaults' searches,
`resume`) and recording one costs two float operations and a list append. A stage met twice (the store read
again for a pointer's targets) adds up under its first place.
"""

from __future__ import annotations

from time import perf_counter

# The stages of a search, in the order they run (a search records only those it passes through).
ANALYSIS = "analysis"  # the query's terms, its language, the span of days and the tags it names
STORE_NAMED = "store_named"  # the notes the query names by title, alias or file name
EMBEDDING = "embedding"  # the query's dense vector
STORE_SIDES = "store_sides"  # both sides' ids and scores (adaptive and score fusion)
FUSION = "fusion"  # both sides joined into one ranking
STORE_PAYLOADS = "store_payloads"  # the payloads of the fused candidates kept
STORE_QUERY = "store_query"  # one store query with its payloads (keyword or dense only, RRF, DBSF)
RANKING = "ranking"  # the ranking rules: time boost, named notes first, overlaps, hubs, per-note cap
STORE_POINTER_TARGETS = "store_pointer_targets"  # the notes that pointers among the best candidates describe
RELATED = "related_notes"  # the notes linked to or from the results
STORE_TERMS = "store_terms"  # the keyword terms the index holds for each hit (their confidence reads them)
CONFIDENCE = "confidence"  # each hit's evidence and calibrated confidence
PRESENTING = "presenting"  # the shown hits: secrets redacted, the query's words highlighted, sensitivity
MEMORY = "memory"  # remembered facts: the suggestion and, when asked, the search of them
EXPLAIN = "explain"  # why each hit ranks where it does (only when asked; from the sides the search read)
SERIALISATION = "serialisation"  # the API's response models built
STAGES = (
    ANALYSIS, STORE_NAMED, EMBEDDING, STORE_SIDES, FUSION, STORE_PAYLOADS, STORE_QUERY, RANKING,
    STORE_POINTER_TARGETS, RELATED, STORE_TERMS, CONFIDENCE, PRESENTING, MEMORY, EXPLAIN, SERIALISATION,
)  # fmt: skip


class StageClock:
    """The stages of one search with their milliseconds, in the order they first ran."""

    __slots__ = ("_mark", "_ms")

    def __init__(self) -> None:
        self._ms: dict[str, float] = {}
        self._mark = perf_counter()

    def lap(self, stage: str) -> None:
        """The time since the last mark (or since the clock started) was spent in `stage`."""
        now = perf_counter()
        self._ms[stage] = self._ms.get(stage, 0.0) + (now - self._mark) * 1000
        self._mark = now

    def resume(self) -> None:
        """The time since the last mark was spent elsewhere (the other vaults' searches and their merge,
        while this vault's hits waited to be presented): no stage of this search's."""
        self._mark = perf_counter()

    def stages(self) -> list[tuple[str, float]]:
        return list(self._ms.items())

    def ms(self, stage: str) -> float:
        return self._ms.get(stage, 0.0)

    @property
    def total_ms(self) -> float:
        return sum(self._ms.values())

    def server_timing(self) -> str:
        """The stages as a W3C Server-Timing header value (browsers' dev tools show it)."""
        return ", ".join(f"{stage};dur={ms:.2f}" for stage, ms in self._ms.items())
