"""Context injection (application/recall/context.py) on the fakes: the query from the question or the last
messages, the best chunks packed within the budget, excluded categories left out (and more candidates asked
for so the budget still fills), remembered facts first when asked, and the search's warnings passed on."""

from __future__ import annotations

import pytest

from backend.application.recall.context import ContextQuery
from backend.domain.errors import InvalidRequestError
from backend.domain.models import SearchMode
from tests.application.use_cases.conftest import SERVER_PASSWORD
from tests.fakes import FakeEmbedder, FakeHandles


def sources(handles: FakeHandles, request: ContextQuery) -> list[str]:
    return [s.passage.passage.path for s in handles.context.build(request).sources]


def test_the_best_chunks_are_packed_with_their_note_and_lines(handles: FakeHandles) -> None:
    result = handles.context.build(ContextQuery("how much do I owe Sreenivas?", max_chunks=2))
    assert result.sources[0].passage.passage.path == "Finance/Sreenivas.md"
    assert "I owe Sreenivas 1200 rupees" in result.block
    assert result.sources[0].result is not None
    assert result.mode is SearchMode.HYBRID
    assert result.sensitive_detected  # a finance note is in the block


def test_the_last_messages_make_the_query_when_there_is_no_question(handles: FakeHandles) -> None:
    messages = [
        ("user", "I bought concert tickets with Sreenivas"),
        ("assistant", "Nice!"),
        ("user", "what do I owe him?"),
    ]
    result = handles.context.build(ContextQuery(messages=messages, max_chunks=1))
    assert result.query.startswith("what do I owe him?\nI bought concert tickets")
    assert sources(handles, ContextQuery(messages=messages, max_chunks=1)) == ["Finance/Sreenivas.md"]
    with pytest.raises(InvalidRequestError):
        handles.context.build(ContextQuery(query="  "))


def test_the_block_never_exceeds_the_budget_and_counts_what_it_left_out(handles: FakeHandles) -> None:
    results = [
        handles.context.build(ContextQuery("walked by the river tomatoes", max_chars=budget))
        for budget in (150, 400, 4000)
    ]
    for budget, result in zip((150, 400, 4000), results, strict=True):
        assert len(result.block) <= budget
        assert result.sources
    assert [len(r.sources) + r.omitted for r in results] == [len(results[-1].sources)] * 3
    assert results[-1].omitted == 0
    assert len(results[0].sources) < len(results[1].sources) < len(results[2].sources)


def test_excluded_categories_are_left_out_and_the_budget_still_fills(handles: FakeHandles) -> None:
    question = "owe Sreenivas rupees concert"
    assert sources(handles, ContextQuery(question, max_chunks=1)) == ["Finance/Sreenivas.md"]
    without = handles.context.build(ContextQuery(question, max_chunks=1, exclude_categories=("Finance",)))
    assert [s.passage.passage.path for s in without.sources] != ["Finance/Sreenivas.md"]
    assert len(without.sources) == 1  # a second candidate took the excluded chunk's place
    assert not without.sensitive_detected


def test_secrets_never_reach_the_block(handles: FakeHandles) -> None:
    result = handles.context.build(ContextQuery("database connection postgres", max_chunks=10))
    assert "Infra/Servers.md" in [s.passage.passage.path for s in result.sources]
    assert SERVER_PASSWORD not in result.block


def test_remembered_facts_come_first_when_asked_and_obey_the_exclusions(handles: FakeHandles) -> None:
    handles.memory.remember("sreenivas_balance", "I owe Sreenivas 1200 rupees", "Finance/Sreenivas.md")
    handles.memory.remember("milk", "we prefer oat milk", "Shopping list.md")
    plain = handles.context.build(ContextQuery("Sreenivas balance milk"))
    assert all(s.memory is None for s in plain.sources)
    asked = handles.context.build(ContextQuery("Sreenivas balance milk", include_memory=True))
    facts = [s.memory.key for s in asked.sources if s.memory is not None]
    assert sorted(facts) == ["milk", "sreenivas_balance"]
    assert [s.memory is not None for s in asked.sources[:2]] == [True, True]
    assert asked.sources[0].passage.passage.title.startswith("from ")
    excluded = handles.context.build(
        ContextQuery("Sreenivas balance milk", include_memory=True, exclude_categories=("finance",))
    )
    assert [s.memory.key for s in excluded.sources if s.memory is not None] == ["milk"]


def test_the_searchs_warnings_and_mode_are_passed_on(handles: FakeHandles, embedder: FakeEmbedder) -> None:
    embedder.available = False
    result = handles.context.build(ContextQuery("basmati lemons", include_memory=True))
    assert result.mode is SearchMode.KEYWORD
    assert any("answered from keyword search only" in w for w in result.warnings)
    assert any(w.startswith("remembered facts matched by words only") for w in result.warnings)
    assert result.sources[0].passage.passage.path == "Shopping list.md"


def test_only_what_made_it_into_the_block_flags_it_sensitive(handles: FakeHandles) -> None:
    question = "basmati rice oat milk lemons owe"
    roomy = handles.context.build(ContextQuery(question))
    assert roomy.sources[0].passage.passage.path == "Shopping list.md"
    assert "Finance/Sreenivas.md" in [s.passage.passage.path for s in roomy.sources]
    assert roomy.sensitive_detected
    tight = handles.context.build(
        ContextQuery(question, max_chars=len(roomy.sources[0].passage.passage.entry()))
    )
    assert [s.passage.passage.path for s in tight.sources] == ["Shopping list.md"]
    assert not tight.sensitive_detected  # the finance chunk was a candidate, but it is not in the block
