"""Hub chunks (mostly links) and the per-note cap, on plain values."""

from __future__ import annotations

from dataclasses import dataclass, replace

from backend.domain.ranking.result_rules import (
    cap_per_note,
    hubs_after_their_notes,
    is_hub,
    is_link_list,
    linked_names,
)

HOME_WORK = (
    "## Work\n\n- [[Database migration]] — big project; see [[Database migration#Decision|the decision]]\n"
    "- [[Architecture overview]]\n- People: [[Priya Raman]], [[Tomasz Wójcik]]"
)


@dataclass(frozen=True)
class Hit:
    path: str
    text: str
    score: float


def _order(hits: list[Hit]) -> list[Hit]:
    return hubs_after_their_notes(
        hits,
        text=lambda h: h.text,
        note_path=lambda h: h.path,
        rescore=lambda h, a: replace(h, score=min(h.score, a.score)),
    )


# A map of content whose link lines carry descriptions longer than the links: words in links are a
# minority, yet it is a hub (issue 27). The same in Chinese, where words are not even counted.
DESCRIBED = (
    "## Projects\n\n"
    "- [[Project X]] — the decision, the options we weighed and why we chose the second one\n"
    "- [[Database migration]] — the cutover plan, the rollback plan and the risks we accepted\n"
    "- [[Architecture overview]] — how the services talk to each other and where the data lives\n"
    "- [[Hiring plan]] — who we need for the second half of the year, in what order"
)
CHINESE_HUB = (
    "## 项目\n\n- [[数据库迁移]]：决定、备选方案以及我们为什么选择了第二个方案\n"
    "- [[京都旅行]]：行程、住宿和预算\n- [[豚骨拉面]]：汤底的做法和需要的时间"
)


def test_a_list_of_links_is_a_hub_and_prose_with_a_link_is_not() -> None:
    assert is_hub(HOME_WORK)
    assert not is_hub(
        "Decided at the [[2026-03-12 Migration kickoff|kickoff]]: pgloader, cutover on 18 April."
    )
    assert not is_hub("No links here at all.")


def test_a_map_of_content_with_described_links_is_a_hub_in_any_language() -> None:
    assert is_hub(DESCRIBED)
    assert is_hub(CHINESE_HUB)
    # prose that mentions two notes in passing is not a map of content
    assert not is_hub("We met in [[Lisbon]] and agreed with [[Priya Raman]] to move the launch.\n\nThe rest.")


def test_a_described_map_of_content_goes_below_the_note_that_answers() -> None:
    hub = Hit("Home.md", DESCRIBED, 0.9)  # matches the question by its descriptions
    answer = Hit("Projects/Project X.md", "## Decision\n\nWe chose option B.", 0.6)
    assert [h.path for h in _order([hub, answer])] == [answer.path, hub.path]
    zh_hub = Hit("首页.md", CHINESE_HUB, 0.9)
    zh_answer = Hit("项目/数据库迁移.md", "## 决定\n\n我们选择了第二个方案。", 0.5)
    assert [h.path for h in _order([zh_hub, zh_answer])] == [zh_answer.path, zh_hub.path]
    assert linked_names(HOME_WORK) == {
        "database migration",
        "architecture overview",
        "priya raman",
        "tomasz wójcik",
    }
    assert linked_names("see [notes](Projects/Plan%20B.md#Risks) and [site](https://x.org/a.md)") == {
        "plan b"
    }
    # a target with spaces in angle brackets, as CommonMark writes it
    spaced = "[Routing](<Network routing.md>) and [home](<https://x.org/a b>)"
    assert linked_names(spaced) == {"network routing"}
    assert is_hub("* [Models](<Network models.md>)\n* [Routing](<Net routing.md>)\n* [Ethernet](<Eth.md>)")


def test_a_hub_goes_just_below_the_last_note_it_links_to() -> None:
    hub = Hit("Home.md", HOME_WORK, 0.5)
    decision = Hit("Projects/Database migration.md", "## Decision\n\npgloader", 0.4)
    other = Hit("Recipes/Tomato rasam.md", "tamarind", 0.35)
    people = Hit("People/Priya Raman.md", "DBA lead", 0.3)
    ordered = _order([hub, decision, other, people])
    assert [h.path for h in ordered] == [decision.path, other.path, people.path, hub.path]
    assert [h.score for h in ordered] == [0.4, 0.35, 0.3, 0.3]  # still best first


def test_a_hub_above_no_note_it_links_to_keeps_its_place() -> None:
    hub = Hit("Home.md", HOME_WORK, 0.5)
    other = Hit("Recipes/Tomato rasam.md", "tamarind", 0.35)
    assert _order([other, hub]) == [other, hub]
    assert _order([hub, other]) == [hub, other]


def test_at_most_n_hits_of_a_note_in_their_order() -> None:
    hits = [
        Hit("a.md", "1", 5),
        Hit("a.md", "2", 4),
        Hit("b.md", "3", 3),
        Hit("a.md", "4", 2),
        Hit("b.md", "5", 1),
    ]
    assert [h.text for h in cap_per_note(hits, lambda h: h.path, 2)] == ["1", "2", "3", "5"]
    assert [h.text for h in cap_per_note(hits, lambda h: h.path, 1)] == ["1", "3"]
    assert cap_per_note(hits, lambda h: h.path, None) == hits


def test_a_chunk_of_nothing_but_links_is_a_link_list_and_prose_with_a_link_is_not() -> None:
    assert is_link_list("## Recipes that use it\n- [[Honey flapjacks]] · [[Honey mustard dressing]]")
    assert is_link_list("See also: [[Boat spend]] and [[Boat toilet]]")
    assert is_link_list(
        "## Money\n- [[Boat spend]] — running total\n- [[2025-02-18 Bank appointment]] — whether to borrow"
    )
    assert not is_link_list("Made [[Tomato rasam]] for the two of us. Slightly too sour this time.")
    assert not is_link_list("Oven at 180C for 25 minutes; no link here at all.")
