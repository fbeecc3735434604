"""A list of links the question asks about by its own name keeps its place (application/search/ranking.py
`hub_asked_about`, on the fakes): an exam guide listing its chapters is what "which certification exam was
I getting ready for" asks about, and stays above a chapter that mentions the exam; asked about a chapter by
the words of its link, the guide goes below the chapter, as every map of content does."""

from __future__ import annotations

from backend.application.search.question import Question
from backend.application.search.ranking import hub_asked_about
from backend.domain.models import ScoredPoint
from tests.fakes import wire

GUIDE = "Certs/CompTIA Network+ Certification - All In One Exam Guide.md"
GUIDE_TEXT = (
    "Video to review before the test.\n\n"
    "* [Network Models](network-models.md)\n"
    "* [Cabling and Topology](cabling-and-topology.md)\n"
    "* [Ethernet Basics](ethernet-basics.md)\n"
    "* [Routing](routing.md)\n"
)
NOTES = {
    GUIDE: GUIDE_TEXT,
    "network-models.md": "# Network models\n\nOSI and TCP/IP, layer by layer; the exam asks for the ports.\n",
    "cabling-and-topology.md": "# Cabling and topology\n\nStar, mesh, bus; cat5e and cat6.\n",
    "ethernet-basics.md": "# Ethernet basics\n\nFrames, MAC addresses and switches.\n",
    "routing.md": "# Routing\n\nStatic routes, OSPF and BGP in outline.\n",
    "Journal/2020-10-12.md": "# Monday\n\nLong day. Read a chapter on the train.\n",
}


def paths(found: list[ScoredPoint]) -> list[str]:
    return [hit.payload["note_path"] for hit in found]


def test_a_list_of_links_named_by_the_question_stays_above_the_notes_it_lists() -> None:
    handles = wire(NOTES, embedder=None)
    found = paths(handles.search.search("which certification exam was I getting ready for", top_k=5).hits)

    assert found[:2] == [GUIDE, "network-models.md"]


def test_asked_about_a_note_by_its_link_the_list_goes_below_it() -> None:
    handles = wire(NOTES, embedder=None)
    found = paths(handles.search.search("network models on the certification exam", top_k=5).hits)

    assert found.index("network-models.md") < found.index(GUIDE)


def test_a_list_is_asked_about_by_two_words_of_its_name_and_none_of_its_links() -> None:
    handles = wire(NOTES, embedder=None)
    analyzer = handles.search.analyzer
    guide = ScoredPoint("g", 1.0, {"note_path": GUIDE, "note_title": GUIDE[6:-3], "content": GUIDE_TEXT})

    def asked(question: str) -> bool:
        return hub_asked_about(Question.plain(question, analyzer), handles.search.word_terms)(guide)

    assert asked("which certification exam was I getting ready for")
    assert not asked("which exam was I getting ready for")  # one word of its name: a word in passing
    assert not asked("the routing chapter of the certification exam")  # a link's words: the way to a note
