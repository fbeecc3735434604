"""A recall entry's share of the block: a long chunk quotes its lines that match the question, so the next
entry as likely still fits; without anything to choose by, a chunk is cut from its start as before."""

from __future__ import annotations

import re

import pytest

from backend.domain.recall.context_packing import SEPARATOR, Passage, Reading, pack
from backend.domain.recall.excerpts import blocks_of, excerpt

# a chat session as LoCoMo's notes keep it: one message a block, the speaker's name on every one
MESSAGES = [
    "**Caroline**: Hey Mel! Good to see you! How have you been lately, with the kids and the new job?",
    "**Melanie**: Swamped with the kids and work, honestly. What's up with you? Anything new since May?",
    "**Caroline**: I went to a support group yesterday and it was so powerful, everyone told their story.",
    "**Melanie**: Wow, that's cool, Caroline! What happened that was so awesome? Any inspiring stories?",
    "**Caroline**: The stories were inspiring. I'm thinking of counseling as a career, to help others.",
    "**Melanie**: You'd be a great counselor. I've been painting again, a sunrise over the lake last week.",
]
CHAT = "# Chat with Caroline\n\n" + "\n\n".join(MESSAGES)


def words(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"[a-z]+", text.lower()))


STOP = frozenset("what when did the to go for a of".split())


def question(text: str) -> dict[str, float]:
    """Its own words, as the judge reads them: stop words left out."""
    return dict.fromkeys(words(text) - STOP, 1.0)


def test_the_message_holding_the_questions_words_is_chosen_and_the_speakers_name_weighs_nothing() -> None:
    asked = question("when did caroline go to the support group")
    blocks = blocks_of(CHAT, lambda block: words(block) & asked.keys())
    found = excerpt(CHAT, blocks, asked, room=len(MESSAGES[2]) + 10)
    assert found is not None
    assert CHAT[found.start : found.end] == MESSAGES[2]
    assert (found.first_line, found.last_line) == (6, 6)  # the heading, a blank line, two messages before


def test_the_run_around_the_match_fills_the_room_it_has() -> None:
    asked = question("support group")
    blocks = blocks_of(CHAT, lambda block: words(block) & asked.keys())
    found = excerpt(CHAT, blocks, asked, room=len(MESSAGES[2]) * 3)
    assert found is not None
    quoted = CHAT[found.start : found.end]
    assert MESSAGES[2] in quoted
    assert len(quoted) > 2 * len(MESSAGES[2])
    assert len(quoted) <= len(MESSAGES[2]) * 3


@pytest.mark.parametrize(
    "heading",
    ["# Call with Pete re blacking", "Call with Pete re blacking\n===", "Call with Pete re blacking\n---"],
)
def test_a_heading_alone_is_never_the_excerpt(heading: str) -> None:
    # the note's subject names Pete; the price list under it, which answers, does not
    text = f"{heading}\n\n- dock 2 wks £420, jet wash £90 → **£1,450**\n\nPaid the deposit."
    asked = question("what did pete quote for the blacking")
    assert excerpt(text, blocks_of(text, lambda b: words(b) & asked.keys()), asked, room=60) is None


# a decision as a project note keeps it: a line introducing a list, the list saying what was decided
DECISION = (
    "## Decision\n\n"
    "Decided at the kickoff and confirmed at the go/no-go:\n\n"
    "- **Target:** PostgreSQL 16 with one streaming replica, same sizing as today.\n"
    "- **Tool:** pgloader for the schema and the bulk copy, then a scripted checksum comparison of every "
    "table, because the managed service could not map types per column.\n"
    "- **Approach:** a big-bang cutover in a maintenance window, not dual writes.\n\n"
    "Why Postgres at all: the analytics team already runs it."
)


def test_a_line_introducing_a_list_is_quoted_with_as_much_of_the_list_as_fits() -> None:
    asked = question("what did I decide about the database")  # only the introducing line says "decided"
    asked["decided"] = 1.0
    blocks = blocks_of(DECISION, lambda b: words(b) & asked.keys())
    for room in (120, 200, 260, 400):
        found = excerpt(DECISION, blocks, asked, room=room)
        assert found is not None
        quoted = DECISION[found.start : found.end]
        assert quoted.startswith("Decided at the kickoff"), room
        assert "- **Target:** PostgreSQL 16" in quoted, room  # never the colon and nothing after it
        assert len(quoted) <= room
        assert quoted.count("\n") == found.last_line - found.first_line
    # room for the whole list: all of it
    whole = excerpt(DECISION, blocks, asked, room=len(DECISION))
    assert whole is not None
    assert "not dual writes." in DECISION[whole.start : whole.end]
    # a line that does not fit whole is cut at a word, where enough of it is left to say something
    cut = excerpt(DECISION, blocks, asked, room=260)
    assert cut is not None
    assert DECISION[cut.start : cut.end].splitlines()[-1].startswith("- **Tool:** pgloader for the schema")
    assert DECISION[cut.end] == " "  # at a word's end


def test_a_line_ending_in_a_colon_before_a_heading_introduces_nothing_under_it() -> None:
    text = (
        "Still to sort before the survey:\n\n## Costs\n\nThe survey itself was £450, paid in March, and the "
        "blacking another £1,450."
    )
    asked = question("what is still to sort before the survey")
    blocks = blocks_of(text, lambda b: words(b) & asked.keys())
    found = excerpt(text, blocks, asked, room=40)
    assert found is not None
    assert text[found.start : found.end] == "Still to sort before the survey:"


def test_a_block_before_the_introducing_line_gives_way_to_what_it_introduces() -> None:
    text = "The database is the last thing on MySQL.\n\n" + DECISION.removeprefix("## Decision\n\n")
    asked = question("what did I decide about the database")
    asked["decided"] = 1.0
    blocks = blocks_of(text, lambda b: words(b) & asked.keys())
    room = len(
        "The database is the last thing on MySQL.\n\nDecided at the kickoff and confirmed at the go/no-go:"
    )
    found = excerpt(text, blocks, asked, room=room + 10)
    assert found is not None
    assert text[found.start : found.end].startswith("Decided at the kickoff")
    assert "- **Target:**" in text[found.start : found.end]


def test_nothing_to_choose_by_gives_no_excerpt() -> None:
    # a word on every block says nothing of which one answers; a match in other words has no word at all
    log = "\n\n".join(
        f"Boat day {n}: {what}." for n, what in enumerate(["engine", "paint", "ropes", "locks"])
    )
    for asked in (question("the boat"), question("sunset over the lake")):
        assert excerpt(log, blocks_of(log, lambda b, a=asked: words(b) & a.keys()), asked, room=40) is None
    one_block = "A single paragraph about the support group, and nothing else besides it."
    assert excerpt(one_block, blocks_of(one_block, words), question("support"), 30) is None


def chat(path: str, start: int) -> Passage:
    """A session of its own (two alike would be one entry: the packer drops a duplicate)."""
    text = f"{CHAT}\n\n**Caroline**: Bye for now, see you after {path}!".replace(
        "yesterday", f"before {path}"
    )
    asked = question("support group counseling career")
    reading = Reading(blocks_of(text, lambda block: words(block) & asked.keys()), asked)
    end = start + text.count("\n")
    return Passage(path=path, start_line=start, end_line=end, title=path, text=text, reads=lambda _: reading)


def test_entries_let_through_share_the_block_each_by_its_matching_lines() -> None:
    first, second = chat("Session 01.md", 5), chat("Session 02.md", 5)
    budget = len(first.entry()) + 200  # room for one whole chunk and the start of another
    alone = pack([first, second], budget)
    assert [(p.index, p.cut) for p in alone.included] == [(0, False), (1, True)]
    assert "support group" not in alone.included[1].passage.text  # the second note's answer left out

    shared = pack([first, second], budget, share=True)
    assert [p.index for p in shared.included] == [0, 1]
    assert all(p.excerpted and not p.cut for p in shared.included)
    assert len(shared.block) <= budget
    for packed, whole in zip(shared.included, (first, second), strict=True):
        quoted = packed.passage
        assert "I went to a support group before" in quoted.text
        # its attribution names the lines it quotes, within the chunk's, and they are the lines it quotes
        assert whole.start_line < quoted.start_line <= quoted.end_line < whole.end_line
        assert quoted.text.startswith("… ")
        assert quoted.text.endswith(" …")
        body = quoted.text.removeprefix("… ").removesuffix(" …")
        lines = whole.text.splitlines()[
            quoted.start_line - whole.start_line : quoted.end_line - whole.start_line + 1
        ]
        assert lines == body.splitlines()


def test_entries_that_fit_whole_are_quoted_whole() -> None:
    first, second = chat("Session 01.md", 5), chat("Session 02.md", 5)
    budget = len(first.entry()) + len(SEPARATOR) + len(second.entry())
    shared = pack([first, second], budget, share=True)
    assert [(p.passage, p.excerpted) for p in shared.included] == [(first, False), (second, False)]


def test_a_short_entry_leaves_its_share_to_the_long_one() -> None:
    short = Passage(path="fact.md", start_line=1, end_line=1, title="", text="Counseling career: yes.")
    long = chat("Session 01.md", 5)
    budget = len(short.entry()) + len(SEPARATOR) + len(long.entry()) - 40
    shared = pack([short, long], budget, share=True)
    assert shared.included[0].passage == short
    # the long one gets all the short one left, not half of the block
    assert len(shared.included[1].passage.entry()) > budget // 2


def test_a_fenced_code_block_is_quoted_whole_blank_lines_and_all() -> None:
    text = (
        "Profiles tune the box for its workload.\n\n```bash\ntuned-adm list\n\ntuned-adm active\n```\n\n"
        "Disks are another story: see the iostat note."
    )
    asked = question("which tuned profile is active")
    found = excerpt(text, blocks_of(text, lambda b: words(b) & asked.keys()), asked, room=60)
    assert found is not None
    assert text[found.start : found.end] == "```bash\ntuned-adm list\n\ntuned-adm active\n```"
    assert (found.first_line, found.last_line) == (2, 6)


def test_an_excerpt_fits_its_share_though_its_first_line_number_has_more_digits() -> None:
    # a chunk from line 8: its excerpt starts at line 10 or later, a digit more in the header's attribution
    first, second = chat("Session 01.md", 8), chat("Session 02.md", 8)
    for budget in range(500, 900):
        for packed in pack([first, second], budget, share=True).included:
            assert not (packed.cut and packed.passage.text.startswith("… ")), budget  # an excerpt, cut again
