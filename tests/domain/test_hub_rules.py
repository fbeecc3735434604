"""Hub chunks (mostly links) and the per-note cap, on plain values."""

from __future__ import annotations

from dataclasses import dataclass, replace

from backend.domain.result_rules import cap_per_note, hubs_after_their_notes, link_share, linked_names

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


def test_a_list_of_links_is_a_hub_and_prose_with_a_link_is_not() -> None:
    assert link_share(HOME_WORK) > 0.5
    assert (
        link_share("Decided at the [[2026-03-12 Migration kickoff|kickoff]]: pgloader, cutover on 18 April.")
        < 0.5
    )
    assert link_share("No links here at all.") == 0.0
    assert linked_names(HOME_WORK) == {
        "database migration",
        "architecture overview",
        "priya raman",
        "tomasz wójcik",
    }
    assert linked_names("see [notes](Projects/Plan%20B.md#Risks) and [site](https://x.org/a.md)") == {
        "plan b"
    }


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
