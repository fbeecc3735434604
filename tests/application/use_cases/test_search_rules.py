"""The search use case's rules (application/search/service.py) on the fakes: which mode answers and what it
says when it cannot be the one asked for, the threshold, the per-note cap, the named-note shortcut, the time
boost and related notes. What the engines do with a query is the contract suites' business."""

from __future__ import annotations

import pytest

from backend.application.search.service import SearchOptions
from backend.domain.errors import IndexNotReadyError, ModelNotFoundError
from backend.domain.models import PointFilter, SearchMode
from tests.application.use_cases.conftest import NOTES
from tests.fakes import FakeEmbedder, FakeHandles, wire


def paths(handles: FakeHandles, query: str, **options: object) -> list[str]:
    hits = handles.search.search(query, **options).hits  # type: ignore[arg-type]
    return [hit.payload["note_path"] for hit in hits]


def test_each_mode_finds_a_note_by_its_words_or_its_meaning(handles: FakeHandles) -> None:
    assert paths(handles, "basmati lemons", mode=SearchMode.KEYWORD)[0] == "Shopping list.md"
    assert paths(handles, "owe Sreenivas rupees", mode=SearchMode.DENSE)[0] == "Finance/Sreenivas.md"
    outcome = handles.search.search("PostgreSQL cutover")
    assert (outcome.mode, outcome.warnings) == (SearchMode.HYBRID, [])
    assert {hit.payload["note_path"] for hit in outcome.hits[:2]} <= {
        "Projects/Runbook.md",
        "Projects/Database migration.md",
    }


def test_hybrid_answers_from_keywords_when_the_embedder_is_down_and_recovers(
    handles: FakeHandles, embedder: FakeEmbedder
) -> None:
    embedder.available = False
    outcome = handles.search.search("basmati lemons", top_k=3)
    assert outcome.mode is SearchMode.KEYWORD
    assert outcome.degraded
    assert "answered from keyword search only" in outcome.warnings[0]
    assert outcome.hits[0].payload["note_path"] == "Shopping list.md"
    embedder.available = True
    assert handles.search.search("basmati lemons", top_k=3).mode is SearchMode.HYBRID


class MissingModel(FakeEmbedder):
    """Ollama without the model pulled: every query fails, and the health probe says no."""

    def embed_query(self, text: str) -> list[float]:
        self.calls += 1
        raise ModelNotFoundError("model all-minilm is not pulled", suggestion="Run `ollama pull all-minilm`.")

    def health(self) -> bool:
        return False


def test_a_standing_embedder_failure_is_not_asked_again_within_the_probe_interval() -> None:
    missing = MissingModel(spread=True)
    handles = wire(NOTES, embedder=missing)
    missing.calls = 0
    first, second = (handles.search.search("basmati lemons") for _ in range(2))
    assert missing.calls == 1  # the second search believed the failed probe instead of asking the model
    for outcome in (first, second):
        assert outcome.mode is SearchMode.KEYWORD
        assert "MODEL_NOT_FOUND" in outcome.warnings[0]
        assert "ollama pull all-minilm" in outcome.warnings[0]
    assert first.hits[0].payload["note_path"] == "Shopping list.md"


def test_without_an_embedder_every_search_is_by_keyword_and_says_so() -> None:
    handles = wire(NOTES, embedder=None)
    outcome = handles.search.search("Sreenivas rupees", top_k=3)
    assert outcome.mode is SearchMode.KEYWORD
    assert "no embedder is configured" in outcome.warnings[0]
    assert outcome.hits[0].payload["note_path"] == "Finance/Sreenivas.md"


def test_an_index_of_another_model_answers_by_keyword_with_its_reason(handles: FakeHandles) -> None:
    handles.index.keyword_fallback = (
        "the index was built with another-model: answered from keyword search only"
    )
    outcome = handles.search.search("basmati", mode=SearchMode.DENSE)
    assert outcome.mode is SearchMode.KEYWORD
    assert outcome.warnings == [handles.index.keyword_fallback]
    assert outcome.hits[0].payload["note_path"] == "Shopping list.md"


def test_an_index_that_cannot_serve_refuses_before_any_store_query(handles: FakeHandles) -> None:
    handles.index.refusal = IndexNotReadyError("the first indexing of the vault has not indexed any note yet")
    handles.index.store.calls.clear()
    with pytest.raises(IndexNotReadyError):
        handles.search.search("PostgreSQL")
    assert handles.index.store.calls == []


def test_during_the_first_indexing_results_come_with_a_warning(handles: FakeHandles) -> None:
    handles.index.complete = False
    outcome = handles.search.search("basmati")
    assert outcome.warnings == [
        f"the first indexing is still running ({len(handles.index.note_records())} notes so far); "
        "results may be incomplete"
    ]
    assert outcome.hits


def test_notes_waiting_for_dense_vectors_are_found_by_keywords_and_named(handles: FakeHandles) -> None:
    handles.index.add_notes({"Recipes/Jam.md": "# Jam\n\nQuince jam with lemons.\n"}, dense=False)
    outcome = handles.search.search("quince jam", top_k=3)
    assert outcome.mode is SearchMode.HYBRID  # the other notes still answer by meaning
    assert outcome.warnings == [
        f"1 of {len(NOTES) + 1} notes have no dense vectors yet (the index is still filling them in): "
        "they are found by keywords only"
    ]
    assert outcome.hits[0].payload["note_path"] == "Recipes/Jam.md"


def test_with_no_dense_vector_yet_the_answer_is_by_keyword_and_names_the_failure() -> None:
    embedder = FakeEmbedder(spread=True)
    handles = wire(embedder=embedder)
    handles.index.add_notes(NOTES, dense=False)
    assert handles.index.embedder_health is not None
    handles.index.embedder_health.failed(ModelNotFoundError("model all-minilm is not pulled"))
    outcome = handles.search.search("basmati lemons")
    assert outcome.mode is SearchMode.KEYWORD
    (warning,) = outcome.warnings
    assert warning.startswith(
        "the dense vectors are not built yet (the embedder was unavailable when they were"
    )
    assert "MODEL_NOT_FOUND" in warning
    assert outcome.hits[0].payload["note_path"] == "Shopping list.md"


def test_a_threshold_drops_lower_scores_and_the_count_drops_with_them(handles: FakeHandles) -> None:
    everything = handles.search.search("walked by the river", top_k=20, mode=SearchMode.DENSE)
    scores = [hit.score for hit in everything.hits]
    cut = (scores[1] + scores[2]) / 2
    kept = handles.search.search("walked by the river", top_k=20, mode=SearchMode.DENSE, threshold=cut)
    assert [hit.score for hit in kept.hits] == scores[:2]
    assert kept.total_hits == 2 < everything.total_hits
    above = handles.search.search("walked by the river", mode=SearchMode.DENSE, threshold=scores[0] + 1)
    assert (above.hits, above.total_hits) == ([], 0)


def test_a_note_named_by_the_query_comes_first_at_its_first_chunk_whatever_the_threshold(
    handles: FakeHandles,
) -> None:
    for name in ("DB move", "database migration", "[[Database migration]]"):
        first = handles.search.search(name, top_k=3).hits[0]
        assert (first.payload["note_path"], first.payload["chunk_index"]) == (
            "Projects/Database migration.md",
            0,
        )
    named = handles.search.search("Runbook", threshold=1000.0)
    assert [hit.payload["note_path"] for hit in named.hits] == ["Projects/Runbook.md"]


def test_the_named_note_shortcut_respects_the_filter(handles: FakeHandles) -> None:
    elsewhere = PointFilter(folders=("Finance",))
    assert "Projects/Runbook.md" not in paths(handles, "Runbook", point_filter=elsewhere)


def test_filters_restrict_every_mode(handles: FakeHandles) -> None:
    only = PointFilter(tags=("finance",))
    for mode in SearchMode:
        assert set(paths(handles, "PostgreSQL rupees lemons", top_k=10, mode=mode, point_filter=only)) == {
            "Finance/Sreenivas.md"
        }


@pytest.mark.parametrize(("asked", "chunks"), [(None, 2), (1, 1), (4, 4)])
def test_at_most_so_many_chunks_of_one_note(handles: FakeHandles, asked: int | None, chunks: int) -> None:
    found = paths(handles, "tomatoes", top_k=10, max_chunks_per_note=asked)
    assert found.count("Garden.md") == chunks


def test_without_a_configured_cap_every_matching_chunk_of_a_note_may_come() -> None:
    handles = wire(NOTES, embedder=FakeEmbedder(spread=True), options=SearchOptions(max_chunks_per_note=None))
    assert paths(handles, "tomatoes", top_k=10).count("Garden.md") == 4


def test_a_question_naming_a_month_brings_that_months_notes_up(handles: FakeHandles) -> None:
    question = "walked by the river in March"
    boosted = handles.search.search(question)
    assert boosted.time_intent is not None
    assert boosted.time_intent.text == "in March"
    flat = wire(NOTES, embedder=FakeEmbedder(spread=True), options=SearchOptions(time_boost=0.0))
    plain = flat.search.search(question)
    assert plain.time_intent is None
    assert [h.payload["note_path"] for h in plain.hits[:2]] == [
        "Journal/2026-01-09.md",
        "Journal/2026-03-14.md",
    ]
    assert [h.payload["note_path"] for h in boosted.hits[:2]] == [
        "Journal/2026-03-14.md",
        "Journal/2026-01-09.md",
    ]
    march = {h.payload["note_path"]: h.score for h in plain.hits}["Journal/2026-03-14.md"]
    assert boosted.hits[0].score == pytest.approx(2 * march)  # time_boost 1.0: the score doubled, no more


def test_related_notes_are_linked_to_or_from_the_results_and_cost_one_graph_query(
    handles: FakeHandles,
) -> None:
    handles.index.graph_store.calls.clear()
    outcome = handles.search.search("MySQL Decision", top_k=1, mode=SearchMode.KEYWORD, include_related=True)
    assert [hit.payload["note_path"] for hit in outcome.hits] == ["Projects/Database migration.md"]
    assert [(r.path, r.relationship, r.link_count) for r in outcome.related] == [
        ("Projects/Runbook.md", "outlink", 1)
    ]
    assert handles.index.graph_store.calls == ["note_links_touching"]
    assert handles.search.search("MySQL Decision", top_k=1, mode=SearchMode.KEYWORD).related == []


@pytest.mark.parametrize("result_count", [1, 3, 50])
def test_related_notes_cost_one_store_query_however_many_results(result_count: int) -> None:
    """Moved from tests/application/test_note_graph.py (it watched the real graph store through a private
    field): the fake graph store records its calls itself."""
    notes = {
        f"n{i:02d}.md": f"# n{i:02d}\n\nShared words here. Next: [[n{(i + 1) % 60:02d}]]\n" for i in range(60)
    }
    handles = wire(notes, embedder=None)
    handles.index.graph_store.calls.clear()
    outcome = handles.search.search("shared words", top_k=result_count, include_related=True)
    assert len({hit.payload["note_path"] for hit in outcome.hits[:result_count]}) == result_count
    assert handles.index.graph_store.calls == ["note_links_touching"]
    assert outcome.related
    assert all(r.link_count >= 1 for r in outcome.related)


def test_related_notes_of_a_hub_are_the_most_linked_first_and_at_most_the_limit() -> None:
    notes = {
        "Hub.md": "# Hub\n\nThe glacier survey plan.\n",
        "Survey log.md": "# Survey log\n\nGlacier survey findings, see [[Hub]].\n",
        **{f"Fan {i:02d}.md": f"# Fan {i:02d}\n\nUnrelated words. [[Hub]]\n" for i in range(30)},
        "Both.md": "# Both\n\nUnrelated words. [[Hub]] and [[Survey log]].\n",
        "Attached.md": "# Attached\n\nUnrelated words. ![[Hub]]\n",
    }
    handles = wire(notes, embedder=None)

    def related(**limit: int) -> list[tuple[str, str, int]]:
        outcome = handles.search.search(
            "glacier survey", top_k=2, mode=SearchMode.KEYWORD, include_related=True, **limit
        )
        assert {hit.payload["note_path"] for hit in outcome.hits} == {"Hub.md", "Survey log.md"}
        return [(r.path, r.relationship, r.link_count) for r in outcome.related]

    everything = related(related_limit=100)
    assert everything[0] == ("Both.md", "backlink", 2)  # linked to both results: the most related
    assert len(everything) == 32  # 30 fans, Both, and Attached (an embed of a note is a link to it)
    assert related() == everything[:20]  # the default limit keeps the most linked
    assert related(related_limit=3) == everything[:3]


@pytest.mark.parametrize("fusion", ["score", "rrf", "dbsf"])
def test_every_fusion_ranks_the_note_strong_on_both_sides_first(fusion: str) -> None:
    handles = wire(NOTES, embedder=FakeEmbedder(spread=True), options=SearchOptions(fusion=fusion))
    assert paths(handles, "owe Sreenivas rupees concert")[0] == "Finance/Sreenivas.md"
