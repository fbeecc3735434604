"""How a search ranks: the settings it reads (bootstrap builds them from the configuration)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field

from backend.domain.ranking import fusion


@dataclass(frozen=True, slots=True)
class SearchOptions:
    prefetch_limit: int = 100
    rrf_k: int = 2
    rrf_weights: tuple[float, float] = (0.3, 0.7)  # dense, keyword (score and rrf fusion)
    # dense, keyword for a question in another language than the vault's (its words cannot match the notes')
    cross_language_weights: tuple[float, float] = (0.9, 0.1)
    adaptive: fusion.AdaptiveWeights = field(default_factory=fusion.AdaptiveWeights)
    # "adaptive" (each side spread, dense weighted by its winner's lead), "score" (each side over its top,
    # fixed weights), "rrf", or "dbsf" (distribution-based score fusion; no weights, no k)
    fusion: str = "adaptive"
    max_chunks_per_note: int | None = 2  # None: no cap
    # what a chunk of the period a query names is raised by, and one of another time lowered by (time_factor)
    time_boost: float = 1.0
    today: Callable[[], dt.date] = dt.date.today  # what "this year", "last month" count from
    southern: bool = False  # seasons (and the summer holidays) of the southern hemisphere
    # folders of notes saved from elsewhere, a web clipper's (note_origin.saved_from): ranked below one's own
    saved_folders: tuple[str, ...] = ("Clippings",)
