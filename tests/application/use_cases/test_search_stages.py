"""Where a search's time went (application/search/stage_clock.py): the stages it passed through, in the order
they ran, adding up to the search's own time, whatever the mode."""

from __future__ import annotations

import time

from backend.domain.models import SearchMode
from tests.fakes import FakeHandles


def test_a_hybrid_search_names_each_stage_it_ran_in_order(handles: FakeHandles) -> None:
    started = time.perf_counter()
    outcome = handles.search.search("PostgreSQL cutover", include_related=True)
    whole_ms = (time.perf_counter() - started) * 1000
    stages = [stage for stage, _ in outcome.clock.stages()]
    assert outcome.mode is SearchMode.HYBRID
    assert stages == [
        "analysis",
        "embedding",
        "store_sides",
        "fusion",
        "store_payloads",
        "ranking",
        "related_notes",
        "store_terms",
        "confidence",
    ]
    assert all(ms >= 0 for _, ms in outcome.clock.stages())
    assert 0 < outcome.clock.total_ms <= whole_ms  # laps of one running mark: nothing counted twice


def test_a_keyword_search_has_no_embedding_and_one_store_query(handles: FakeHandles) -> None:
    outcome = handles.search.search("basmati lemons", mode=SearchMode.KEYWORD, include_related=False)
    stages = [stage for stage, _ in outcome.clock.stages()]
    assert stages == ["analysis", "store_query", "ranking", "store_terms", "confidence"]


def test_a_note_named_by_the_query_is_found_in_its_own_store_stage(handles: FakeHandles) -> None:
    outcome = handles.search.search("Shopping list", mode=SearchMode.KEYWORD)
    assert outcome.hits[0].payload["note_path"] == "Shopping list.md"
    assert [stage for stage, _ in outcome.clock.stages()][:3] == ["analysis", "store_named", "store_query"]


def test_a_mode_given_as_its_text_searches_as_the_mode_itself(handles: FakeHandles) -> None:
    # a script calling the use case with "hybrid" once got another fusion than the API's SearchMode.HYBRID
    for mode in SearchMode:
        by_text = handles.search.search("PostgreSQL cutover", mode=mode.value)  # type: ignore[arg-type]
        by_member = handles.search.search("PostgreSQL cutover", mode=mode)
        assert by_text.mode is mode
        assert [(h.id, h.score, h.confidence) for h in by_text.hits] == [
            (h.id, h.score, h.confidence) for h in by_member.hits
        ]
        assert [s for s, _ in by_text.clock.stages()] == [s for s, _ in by_member.clock.stages()]
