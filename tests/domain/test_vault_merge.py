"""Several vaults' lists as one (domain/ranking/vault_merge.py): each vault's order kept, merged by confidence
weighed by how sure each vault is of holding an answer at all."""

from __future__ import annotations

from backend.domain.ranking.vault_merge import merged_by_confidence


def merged(*lists: list[tuple[str, float]]) -> list[str]:
    return [name for name, _ in merged_by_confidence(lists, lambda entry: entry[1])]


def test_a_list_alone_is_returned_as_it_is_even_where_its_confidences_are_not_in_order() -> None:
    # a vault ranks by more than confidence (a map line, the period asked): its order stands
    assert merged([("a", 0.4), ("b", 0.9), ("c", 0.1)]) == ["a", "b", "c"]


def test_each_vault_keeps_its_order_and_a_strong_entry_is_never_behind_weaker_ones_of_another() -> None:
    work = [("w1", 0.95), ("w2", 0.3), ("w3", 0.6)]
    personal = [("p1", 0.9), ("p2", 0.5)]
    order = merged(work, personal)
    assert order == ["w1", "p1", "p2", "w2", "w3"]
    assert order.index("w2") < order.index("w3")  # the work vault's own order, though w3 is surer


def test_a_vault_sure_of_nothing_comes_after_the_vault_that_holds_the_answer() -> None:
    # its surest entry, 0.3, says how likely it is to hold an answer at all: 0.3 weighs 0.3 x 0.3 / 0.9
    answering = [("a1", 0.9), ("a2", 0.2), ("a3", 0.15)]
    elsewhere = [("e1", 0.3), ("e2", 0.25)]
    assert merged(answering, elsewhere) == ["a1", "a2", "a3", "e1", "e2"]
    # as sure as the answering vault: confidence alone orders them
    assert merged(answering, [("e1", 0.9)]) == ["a1", "e1", "a2", "a3"]


def test_empty_lists_and_no_confidence_at_all() -> None:
    assert merged([], [("x", 0.0)], []) == ["x"]
    assert merged([("a", 0.0)], [("b", 0.0)]) == ["a", "b"]


def test_a_vault_holding_what_the_question_narrows_to_answers_before_one_holding_none_of_it() -> None:
    # "what stressed me out in May 2025": the personal vault's May notes, not the surer chats on stress
    chats = [("c1", 0.95), ("c2", 0.9)]
    journal = [("j1", 0.6), ("j2", 0.5)]
    assert merged_by_confidence([chats, journal], lambda e: e[1], [(0, 0), (0, 1)]) == [
        journal[0],
        journal[1],
        chats[0],
        chats[1],
    ]


def test_narrowing_decides_nothing_when_every_vault_or_none_holds_it() -> None:
    work = [("w1", 0.95), ("w2", 0.3)]
    personal = [("p1", 0.9), ("p2", 0.5)]
    plain = merged(work, personal)
    for narrowed in ([(0, 1), (0, 1)], [(0, 0), (0, 0)]):
        order = merged_by_confidence([work, personal], lambda e: e[1], narrowed)
        assert [name for name, _ in order] == plain


def test_a_vault_holding_more_of_it_answers_first_and_names_count_before_tags_and_periods() -> None:
    # "books Caroline read in 2024": the chats that name Caroline (1, 0), then the journal of 2024 tagged
    # #book (0, 2), then a vault holding none of it (0, 0), each in its own order
    chats = [("c1", 0.3), ("c2", 0.2)]
    journal = [("j1", 0.9)]
    other = [("o1", 0.95)]
    order = merged_by_confidence([other, journal, chats], lambda e: e[1], [(0, 0), (0, 2), (1, 0)])
    assert [name for name, _ in order] == ["c1", "c2", "j1", "o1"]
